"""The world both role matrices walk (tests/core/test_role_matrix_api.py and test_role_matrix_pages.py):
one user per role and three programs, built through the services, once per module.

- A, `rebuild`: led by `lead`; `member` is a viewer there.
- B, `other`: led only by `lead_b`.
- P, `classified`: private, led by `lead_b`; `member` is a viewer there and `engineer` an engineer.
  Nobody else but a platform admin may read it. Everything of P has "classified" in its name, so a
  list that shows it to someone who may not read it is found by looking for that word.

Each program has a freeze window in force (default level approval: `trainer` needs an exception), a
migration and, filed by `engineer` on `trainer` in that program's window, a submitted exception."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date, timedelta

from django.contrib.auth.models import User
from django.db import transaction

from core.roles import FRAMEWORK_ENGINEERS, METRIC_OWNERS, PLATFORM_ADMINS, PROGRAM_LEADS
from freeze import services as freeze_services
from freeze.models import FreezeWindow
from metrics.models import System, Workload
from program import services as program_services
from program.models import Program
from program.services.memberships import membership_grant
from tests.conftest import make_user
from tests.freeze.factories import freeze_setup, submitted_exception
from tests.program.factories import make_program

PROGRAMS = ("A", "B", "P")
SLUGS = {"A": "rebuild", "B": "other", "P": "classified"}
# Who leads each program; the platform admin acts on all three.
LEAD_OF = {"A": "lead", "B": "lead_b", "P": "lead_b"}
# Who may read the private program P (everyone else is told it does not exist: 404).
PRIVATE_READERS = frozenset({"member", "engineer", "lead_b", "platform_admin"})
PRIVATE_MARK = "classified"


def matrix_users() -> dict[str, User]:
    return {
        "viewer": make_user("viewer"),
        "member": make_user("member"),
        "engineer": make_user("engineer", FRAMEWORK_ENGINEERS),
        "metric_owner": make_user("metric_owner", METRIC_OWNERS, "data-platform"),
        "component_owner": make_user("component_owner", "training-platform"),
        "ingest": make_user("ingest", perms=("metrics.add_observation",)),
        "lead": make_user("lead", PROGRAM_LEADS),
        "lead_b": make_user("lead_b", PROGRAM_LEADS),
        "platform_admin": make_user("platform_admin", PLATFORM_ADMINS),
    }


def _window(program: Program, lead: User, name: str, now) -> FreezeWindow:
    """As freeze_setup's: in force now, default approval, kernels frozen and dashboards open."""
    program.approval_bar_weeks = None  # as freeze_setup: risk alone decides the approvals
    program.save(update_fields=["approval_bar_weeks"])
    window = FreezeWindow.objects.create(
        program=program,
        name=name,
        starts_at=now - timedelta(days=1),
        ends_at=now + timedelta(days=10),
        default_level="approval",
    )
    freeze_services.freeze_levels_set(
        actor=lead, window=window, levels={"kernels": "frozen", "dashboards": "open"}
    )
    return window


def three_programs(users: dict[str, User]) -> dict:
    """A (with freeze_setup's components), B and P; per program its row, window, migration and a
    submitted exception. Returns {"A": {...}, "B": {...}, "P": {...}, "ref": freeze_setup's dict}."""
    lead, lead_b, engineer = users["lead"], users["lead_b"], users["engineer"]
    ref = freeze_setup(lead)
    now = ref["now"]
    programs = {
        "A": ref["program"],
        "B": make_program(lead_b, slug=SLUGS["B"]),
        "P": program_services.program_create(
            actor=lead_b,
            slug=SLUGS["P"],
            name="Classified",
            start_date=date(2026, 1, 1),
            baseline=System.objects.get(key="legacy"),
            candidate=System.objects.get(key="rebuilt"),
            is_private=True,
        ),
    }
    membership_grant(actor=lead, program=programs["A"], user=users["member"], role="viewer")
    membership_grant(actor=lead_b, program=programs["P"], user=users["member"], role="viewer")
    membership_grant(actor=lead_b, program=programs["P"], user=engineer, role="engineer")
    windows = {
        "A": ref["window"],
        "B": _window(programs["B"], lead_b, "Wave B", now),
        "P": _window(programs["P"], lead_b, "Classified wave", now),
    }
    world: dict = {"ref": ref}
    for key, program in programs.items():
        title = "classified change" if key == "P" else f"change in {key}"
        world[key] = {
            "program": program,
            "window": windows[key],
            "migration": program_services.migration_upsert(
                actor=users[LEAD_OF[key]],
                program=program,
                workload=Workload.objects.get(key="llm-finetune-8b"),
                wave=1,
            ),
            "submitted": submitted_exception(engineer, ref["trainer"], now, window=windows[key], title=title),
        }
    return world


@contextmanager
def built_once(django_db_blocker) -> Iterator[None]:
    """For a module-scoped world: what is built inside stays for every test of the module (each test's
    own transaction is a savepoint within this one) and is rolled back at the end."""
    with django_db_blocker.unblock(), transaction.atomic():
        yield
        transaction.set_rollback(True)
