"""Issue 30's "done when", end to end: a pipeline step holding only the client and a `freeze-check`
token blocks a deploy of a component frozen for approval (exit 1); an engineer files an exception, the
component's owner approves it (the freeze services, as those users); the same step now exits 0."""

from __future__ import annotations

from datetime import timedelta

from freeze import services
from freeze.models import FreezeException
from tests.clients.cli import run_cli
from tests.conftest import api_token, make_user
from tests.freeze.factories import draft_exception, freeze_setup


def test_the_deploy_step_is_blocked_then_allowed_once_an_exception_is_approved(
    live_server, transactional_db, lead, engineer, component_owner
):
    world = freeze_setup(lead)  # trainer needs approval in window "Wave 2"
    pipeline_token = api_token(make_user("ci-bot"), "freeze-check")

    def deploy_step():
        return run_cli(
            "freeze", "check", "trainer", "--program", world["program"].slug,
            url=live_server.url, token=pipeline_token,
        )  # fmt: skip

    blocked = deploy_step()
    assert blocked.returncode == 1, blocked.stderr
    assert blocked.stdout.startswith("blocked: trainer needs approval")

    now = world["now"]
    exception = draft_exception(
        engineer,
        world["trainer"],
        now,
        title="Ship the trainer fix",
        change_starts_at=now - timedelta(minutes=1),  # the change window is open now
        change_ends_at=now + timedelta(hours=2),
    )
    services.exception_submit(actor=engineer, exception=exception)
    assert deploy_step().returncode == 1  # submitted is not approved
    services.exception_approve(actor=component_owner, exception=exception, comment="go")
    assert FreezeException.objects.get(pk=exception.pk).status == "approved"

    allowed = deploy_step()
    assert allowed.returncode == 0, allowed.stderr
    assert allowed.stdout.startswith(f"allowed: trainer (Approved exception #{exception.pk} allows it until ")
