"""A private program is closed everywhere its data is read (issue 25): the program API's bindings,
approval bar, migrations and calibration, the freeze windows and exceptions (API and pages), the
queues and My work. Whoever is neither a member nor a platform admin gets a 404 for its rows and does
not find them in lists; a member and a platform admin read them. One rule decides:
program.policies.may_read / readable_filter (freeze.policies names the paths to the program). The
freeze check ignores privacy on purpose: CI must learn every program's freeze."""

from __future__ import annotations

import pytest
from django.test import Client

from core.roles import FRAMEWORK_ENGINEERS, PLATFORM_ADMINS
from freeze.models import FreezeWindow
from program.models import Criterion, ProgramMembership
from program.services.memberships import membership_grant, membership_remove
from tests.conftest import make_user
from tests.freeze.factories import freeze_setup, submitted_exception
from tests.program.factories import make_program

TITLE = "Secret kernel swap"


@pytest.fixture
def world(db, lead, lead2, viewer):
    """`rebuild` (private, led by lead, viewer a member) with a window in force and a submitted
    exception; `other` (public, led by lead2, who is no member of rebuild)."""
    ref = freeze_setup(lead)
    program = ref["program"]
    program.is_private = True
    program.save(update_fields=["is_private"])
    make_program(lead2, slug="other")
    membership_grant(actor=lead, program=program, user=viewer, role="viewer")
    engineer = make_user("filer", FRAMEWORK_ENGINEERS)
    membership_grant(actor=lead, program=program, user=engineer, role="engineer")
    exception = submitted_exception(engineer, ref["trainer"], ref["now"], title=TITLE)
    assert exception.window_id == ref["window"].pk
    criterion = Criterion.objects.filter(gate__phase__program=program, metric__isnull=False).first()
    return {
        **ref,
        "exception": exception,
        "criterion": criterion,
        "engineer": engineer,
        "outsider": lead2,
        "member": viewer,
        "admin": make_user("platform", PLATFORM_ADMINS),
    }


def readers(world) -> list:
    return [world["member"], world["admin"]]


def api_urls(world) -> list[str]:
    window, exception = world["window"].pk, world["exception"].pk
    return [
        "/api/v1/programs/rebuild/bindings/",
        "/api/v1/programs/rebuild/approval-bar/",
        "/api/v1/programs/rebuild/migrations/",
        "/api/v1/programs/rebuild/members/",
        f"/api/v1/criteria/{world['criterion'].pk}/calibration/",
        f"/api/v1/freeze/windows/{window}/levels/",
        f"/api/v1/freeze/windows/{window}/levels/?export=csv",
        f"/api/v1/freeze/windows/{window}/history/",
        f"/api/v1/freeze-exceptions/{exception}/",
    ]


def test_each_api_read_of_a_private_program_is_a_404_to_an_outsider(world, as_user):
    for url in api_urls(world):
        refused = as_user(world["outsider"]).get(url)
        assert refused.status_code == 404, url
        # The answer a row that does not exist gets: it names no private program the URL did not name.
        assert "rebuild" in url or "rebuild" not in refused.json()["detail"], url
        for reader in readers(world):
            assert as_user(reader).get(url).status_code == 200, (url, reader.username)


def test_the_api_lists_leave_a_private_programs_windows_and_exceptions_out(world, as_user):
    window, exception = world["window"].pk, world["exception"].pk
    outsider = as_user(world["outsider"])
    assert window not in [w["id"] for w in outsider.get("/api/v1/freeze/windows/").json()["results"]]
    assert exception not in [e["id"] for e in outsider.get("/api/v1/freeze-exceptions/").json()["results"]]
    for reader in readers(world):
        client = as_user(reader)
        assert window in [w["id"] for w in client.get("/api/v1/freeze/windows/").json()["results"]]
        listed = client.get(f"/api/v1/freeze-exceptions/?window={window}").json()["results"]
        assert [e["id"] for e in listed] == [exception]
    # Naming the window is naming a window that does not exist, for the outsider.
    named = outsider.get(f"/api/v1/freeze-exceptions/?window={window}")
    assert named.status_code == 400 and named.json()["errors"][0]["field"] == "window"


def test_the_api_writes_on_a_private_programs_exception_are_a_404_to_an_outsider(world, as_user):
    exception = world["exception"].pk
    outsider = as_user(world["outsider"])
    for action in ("approve", "reject", "withdraw", "revoke"):
        answer = outsider.post(f"/api/v1/freeze-exceptions/{exception}/{action}/", {}, format="json")
        assert answer.status_code == 404, action
    engineer = make_user("engineer2", FRAMEWORK_ENGINEERS)
    edited = as_user(engineer).patch(f"/api/v1/freeze-exceptions/{exception}/", {"title": "x"}, format="json")
    assert edited.status_code == 404


def test_the_freeze_check_still_sees_the_private_programs_freeze(world, as_user):
    """CI's endpoint answers for every program: a frozen component is frozen for everyone."""
    answer = as_user(world["outsider"]).get("/api/v1/freeze/check/?component=kernels")
    assert answer.status_code == 200
    assert answer.json()["decision"] == "forbidden"
    assert answer.json()["window"]["name"] == "Wave 2"


def page(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_each_page_of_a_private_programs_freeze_data_is_a_404_to_an_outsider(world):
    window, exception = world["window"].pk, world["exception"].pk
    urls = [
        f"/freeze/windows/{window}/",
        f"/freeze/windows/{window}/history/",
        f"/freeze/exceptions/{exception}/",
        f"/programs/criteria/{world['criterion'].pk}/calibration/",
    ]
    for url in urls:
        assert page(world["outsider"]).get(url).status_code == 404, url
        for reader in readers(world):
            assert page(reader).get(url).status_code == 200, (url, reader.username)
    # Its forms and buttons too, before any input is read.
    engineer = make_user("engineer2", FRAMEWORK_ENGINEERS)
    assert page(engineer).get(f"/freeze/exceptions/{exception}/edit/").status_code == 404
    assert page(world["outsider"]).post(f"/freeze/exceptions/{exception}/approve/").status_code == 404


def test_the_freeze_pages_lists_leave_a_private_programs_rows_out(world):
    outsider = page(world["outsider"])
    for url in ("/freeze/", "/freeze/exceptions/", "/freeze/queues/"):
        body = outsider.get(url).content.decode()
        assert TITLE not in body and "Wave 2" not in body, url
    admin = page(world["admin"])
    assert TITLE in admin.get("/freeze/exceptions/").content.decode()
    assert "Wave 2" in admin.get("/freeze/").content.decode()
    assert "Wave 2" in page(world["member"]).get("/freeze/").content.decode()


def test_the_exception_form_offers_no_private_window_to_an_outsider(world):
    engineer = make_user("engineer2", FRAMEWORK_ENGINEERS)
    assert "Wave 2" not in page(engineer).get("/freeze/exceptions/new/").content.decode()
    assert "Wave 2" in page(world["engineer"]).get("/freeze/exceptions/new/").content.decode()


def test_my_exceptions_leave_out_those_of_a_program_i_was_removed_from(world, as_user):
    engineer = world["engineer"]

    def mine() -> list[int]:
        fresh = type(engineer).objects.get(pk=engineer.pk)
        return [
            item["id"] for item in as_user(fresh).get("/api/v1/me/work/").json()["my_exceptions"]["items"]
        ]

    assert mine() == [world["exception"].pk]
    home = page(engineer).get("/").content.decode()
    assert TITLE in home
    lead = world["program"].lead
    membership_remove(actor=lead, membership=ProgramMembership.objects.get(user=engineer))
    assert mine() == []
    assert TITLE not in page(engineer).get("/").content.decode()
    # Their own exception is now a private program's row like any other: a 404.
    fresh = type(engineer).objects.get(pk=engineer.pk)
    assert as_user(fresh).get(f"/api/v1/freeze-exceptions/{world['exception'].pk}/").status_code == 404


def test_the_freeze_list_shows_an_outsider_their_own_window_when_a_private_one_is_in_force(world):
    """The window in force first is the private program's: the outsider's page falls back on a window
    they may read rather than showing that one."""
    other_window = FreezeWindow.objects.create(
        program=world["outsider"].program_memberships.get().program,
        name="Other freeze",
        starts_at=world["window"].starts_at,
        ends_at=world["window"].ends_at,
        default_level="open",
    )
    body = page(world["outsider"]).get("/freeze/").content.decode()
    assert "Other freeze" in body and "Wave 2" not in body
    assert other_window.pk
