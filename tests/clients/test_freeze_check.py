"""`rebuild-tracker freeze check` against the live server: exit 0 allowed, 1 blocked or needing
approval, 2 whenever it cannot tell — and an answer it cannot read is never taken for "allowed"."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.clients.cli import run_cli
from tests.conftest import api_token, make_user
from tests.freeze.factories import freeze_setup


@pytest.fixture
def world(transactional_db, lead, viewer):
    """Window 'Wave 2' in force (default approval): trainer needs approval, kernels frozen, dashboards open."""
    ref = freeze_setup(lead)
    ref["token"] = api_token(viewer, "freeze-check")
    return ref


def check(live_server, token: str, *args: str):
    return run_cli("freeze", "check", *args, url=live_server.url, token=token)


def test_an_open_component_is_allowed_with_exit_0(live_server, world):
    done = check(live_server, world["token"], "dashboards")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("allowed: dashboards (")
    assert len(done.stdout.splitlines()) == 1 and done.stderr == ""


def test_a_component_needing_approval_is_blocked_with_exit_1(live_server, world):
    done = check(live_server, world["token"], "trainer")
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("blocked: trainer needs approval (")
    assert "Wave 2" in done.stdout  # the API's reason names the deciding window


def test_a_frozen_component_is_blocked_with_exit_1(live_server, world):
    done = check(live_server, world["token"], "kernels")
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("blocked: kernels is frozen (")


def test_json_prints_the_apis_answer_and_keeps_the_exit_code(live_server, world):
    done = check(live_server, world["token"], "kernels", "--json")
    assert done.returncode == 1
    body = json.loads(done.stdout)
    assert body["decision"] == "forbidden" and body["component"] == "kernels"
    assert body["window"]["name"] == "Wave 2"


def test_at_and_program_reach_the_api(live_server, world, lead):
    after_the_window = (world["now"] + timedelta(days=20)).isoformat()
    assert check(live_server, world["token"], "kernels", "--at", after_the_window).returncode == 0
    # Another program has no window in force: limited to it, the frozen component may change.
    from tests.program.factories import make_program

    make_program(lead, slug="other")
    assert check(live_server, world["token"], "kernels", "--program", "other").returncode == 0
    assert check(live_server, world["token"], "kernels", "--program", world["program"].slug).returncode == 1


def test_an_unknown_component_is_exit_2_with_the_apis_message_naming_it(live_server, world):
    done = check(live_server, world["token"], "no-such-part")
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith("error: HTTP 400: component: ")
    assert done.stderr.count("no-such-part") == 1, done.stderr  # said once, not detail + (problem)


def test_an_unknown_program_is_exit_2_naming_it(live_server, world):
    done = check(live_server, world["token"], "trainer", "--program", "nope")
    assert done.returncode == 2
    assert "program" in done.stderr and "nope" in done.stderr


def test_an_invalid_token_is_exit_2(live_server, world):
    done = check(live_server, "rt_not-a-real-token", "dashboards")
    assert done.returncode == 2
    assert done.stderr.strip() == "error: HTTP 401: Invalid token."


def test_a_token_without_the_scope_is_exit_2_naming_the_scope(live_server, world):
    pusher = make_user("pusher", perms=("metrics.add_observation",))
    done = check(live_server, api_token(pusher, "ingest"), "dashboards")
    assert done.returncode == 2
    assert "HTTP 403" in done.stderr and "`freeze-check`" in done.stderr


def test_no_url_or_no_token_is_exit_2_saying_which(live_server, world):
    no_url = run_cli("freeze", "check", "x", url="", token="t")
    assert no_url.returncode == 2 and "REBUILD_TRACKER_URL" in no_url.stderr
    no_token = run_cli("freeze", "check", "x", url=live_server.url, token="")
    assert no_token.returncode == 2 and "REBUILD_TRACKER_TOKEN" in no_token.stderr


def test_flags_win_over_the_environment(live_server, world):
    done = run_cli(
        "freeze", "check", "dashboards", "--url", live_server.url, "--token", world["token"],
        url="http://127.0.0.1:9", token="rt_wrong",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def test_an_unreachable_server_is_exit_2(world):
    done = run_cli("freeze", "check", "dashboards", url="http://127.0.0.1:9", token=world["token"])
    assert done.returncode == 2
    assert done.stderr.startswith("error: cannot reach http://127.0.0.1:9")


# What the real server never says, a proxy or a broken deploy in front of it may: a small stand-in
# answers exactly that, to show the client reads none of it as a decision.
CANNED = {
    "/server-error": (500, "text/html", b"<h1>Server Error (500)</h1>"),
    "/unavailable": (
        503,
        "application/json",
        b'{"detail": "The database is unreachable.", "code": "unavailable"}',
    ),
    "/html": (200, "text/html", b"<html>Sign in</html>"),
    "/empty-decision": (200, "application/json", b'{"component": "x", "decision": ""}'),
    "/odd-decision": (200, "application/json", b'{"component": "x", "decision": "maybe"}'),
    "/a-list": (200, "application/json", b'[{"decision": "allowed"}]'),
    "/redirect": (302, "text/html", b""),
}


class Canned(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        status, content_type, body = CANNED[self.path.split("/api/v1/")[0]]
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        if status == 302:
            self.send_header("Location", "/accounts/login/")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def stand_in() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Canned)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize(
    ("path", "said"),
    [
        ("/server-error", "HTTP 500: <h1>Server Error (500)</h1>"),
        ("/unavailable", "HTTP 503: The database is unreachable."),
        ("/html", "the answer is not JSON"),
        ("/empty-decision", "no known decision (''); not treating that as allowed"),
        ("/odd-decision", "no known decision ('maybe')"),
        ("/a-list", "not a JSON object"),
        ("/redirect", "HTTP 302: redirected to /accounts/login/"),
    ],
)
def test_an_answer_that_is_not_a_decision_is_exit_2_never_allowed(stand_in, path, said):
    done = run_cli("freeze", "check", "x", url=stand_in + path, token="rt_t")
    assert done.returncode == 2, done.stdout
    assert done.stdout == ""
    assert said in done.stderr
