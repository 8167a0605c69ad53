"""Every (state, transition) pair of every state machine, through the API as the person who may act.

Allowed pairs succeed; every other pair answers 409 naming the current state, and changes nothing: no
row of any workflow table moves and no Transition audit row is written. The expectations come from the
machines' allowed-from tables, which `test_the_tables_say_what_the_readme_says` pins."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from core.models import Notification, Transition
from core.transitions import fsm_sources
from freeze import services as freeze_services
from freeze.models import Approval, FreezeException
from metrics.models import MetricDefinition, Workload
from metrics.services.definitions import TRANSITIONS as DEFINITION_TRANSITIONS
from program.models import Criterion, Decision, Evaluation, Gate, Phase, Program, WorkloadMigration
from tests.freeze.factories import draft_exception, freeze_setup
from tests.metrics.factories import definition

# What the README documents; the services enforce these tables.
EXPECTED_TABLES = {
    "program": {"advance": {"not_started", "active"}},
    "phase": {
        "replan": {"planned", "active"},
        "add_gate": {"planned", "active"},
        "activate": {"planned"},
        "backfill_dates": {"active", "completed"},
    },
    "gate": {
        "evaluate": {"open", "ready", "passed", "failed", "waived"},
        "decide": {"open", "ready"},
        "reopen": {"passed", "failed", "waived"},
        "add_criterion": {"open", "ready"},
        "edit_criterion": {"open", "ready"},
        "delete_criterion": {"open", "ready"},
        "repin": {"open", "ready"},
    },
    "criterion": {"attest": {"unattested"}},
    "exception": {
        "edit": {"draft", "submitted", "approved"},
        "submit": {"draft"},
        "resubmit": {"submitted", "approved"},
        "approve": {"submitted"},
        "reject": {"submitted"},
        "withdraw": {"draft", "submitted", "approved"},
        "revoke": {"approved"},
        "expire": {"draft", "submitted", "approved"},
    },
    "definition": {
        "edit": {"draft", "active", "deprecated"},
        "activate": {"draft"},
        "deprecate": {"active"},
    },
    "migration": {
        "on_old": set(),
        "dual_run": {"on_old", "rolled_back"},
        "on_new": {"dual_run"},
        "rolled_back": {"dual_run", "on_new"},
    },
}
EXCEPTION_ACTIONS = ("edit", "submit", "approve", "reject", "withdraw", "revoke", "expire")
ENDED = " (window ended)"


def test_the_tables_say_what_the_readme_says():
    exception_table = {
        action: set(fsm_sources(getattr(FreezeException, action)))
        for action in (*EXCEPTION_ACTIONS, "resubmit")
    }
    actual = {
        "program": Program.TRANSITIONS,
        "phase": Phase.TRANSITIONS,
        "gate": Gate.TRANSITIONS,
        "criterion": Criterion.TRANSITIONS,
        "exception": exception_table,
        "definition": DEFINITION_TRANSITIONS,
        "migration": WorkloadMigration.TRANSITIONS,
    }
    normalised = {m: {a: {str(s) for s in states} for a, states in t.items()} for m, t in actual.items()}
    assert normalised == EXPECTED_TABLES


def _cases():
    def table(machine):
        return EXPECTED_TABLES[machine]

    for state in ("not_started", "active", "completed"):
        yield "program", state, "advance"
    for state in ("planned", "active", "completed"):
        for action in table("phase"):
            yield "phase", state, action
    for state in Gate.Status.values:
        for action in table("gate"):
            yield "gate", state, action
    for state in ("unattested", "attested", "locked"):
        yield "criterion", state, "attest"
    states = [*FreezeException.Status.values, *(f"{s}{ENDED}" for s in FreezeException.OPEN_STATUSES)]
    for state in states:
        for action in EXCEPTION_ACTIONS:
            yield "exception", state, action
    for state in MetricDefinition.Status.values:
        for action in table("definition"):
            yield "definition", state, action
    for state in WorkloadMigration.State.values:
        for target in WorkloadMigration.State.values:
            yield "migration", state, target


CASES = list(_cases())


def _allowed(machine: str, state: str, action: str) -> bool:
    if machine == "exception":
        raw = state.removesuffix(ENDED)
        if action == "expire":  # the sweep goes by the row's status
            return raw in EXPECTED_TABLES["exception"]["expire"]
        effective = "expired" if state.endswith(ENDED) else raw
        return effective in EXPECTED_TABLES["exception"][action]
    return state in EXPECTED_TABLES[machine][action]


def world() -> dict:
    """Every row a transition could touch."""
    models = (
        Program,
        Phase,
        Gate,
        Criterion,
        Decision,
        Evaluation,
        FreezeException,
        FreezeException.authors.through,
        Approval,
        MetricDefinition,
        WorkloadMigration,
        Transition,
        Notification,
    )
    return {model.__name__: list(model.objects.order_by("pk").values()) for model in models}


@pytest.fixture
def ref(db, lead):
    return freeze_setup(lead)


class Arena:
    """Puts one subject of one machine into a state, and acts on it through the API."""

    def __init__(self, ref, users, as_user):
        self.ref, self.users, self.as_user = ref, users, as_user
        self.program: Program = ref["program"]
        self.phases = list(self.program.phases.order_by("order"))
        self.exit_gate = Gate.objects.get(phase=self.phases[0], kind=Gate.Kind.EXIT)

    def client(self, role):
        return self.as_user(self.users[role])

    # --- program and phases -------------------------------------------------------------------------

    def program_in(self, state):
        Gate.objects.filter(pk=self.exit_gate.pk).update(status=Gate.Status.PASSED)
        if state == "completed":
            Phase.objects.filter(program=self.program).update(status=Phase.Status.COMPLETED)
            Program.objects.filter(pk=self.program.pk).update(status=Program.Status.COMPLETED)
        if state == "not_started":
            Phase.objects.filter(program=self.program).update(status=Phase.Status.PLANNED, actual_start=None)
            Program.objects.filter(pk=self.program.pk).update(status=Program.Status.NOT_STARTED)
        return self.program

    def phase_in(self, state):
        """The program's second phase, in `state`; the first stays active (its exit gate passed, so the
        program may advance) unless the second is."""
        first, second = self.phases[0], self.phases[1]
        Gate.objects.filter(pk=self.exit_gate.pk).update(status=Gate.Status.PASSED)
        if state == "active":
            Phase.objects.filter(pk=first.pk).update(status=Phase.Status.COMPLETED)
        Phase.objects.filter(pk=second.pk).update(status=state)
        return second

    def act_on_program(self, program, action):
        return self.client("lead").post(
            f"/api/v1/programs/{program.slug}/advance/", {"reason": "matrix"}, format="json"
        )

    def act_on_phase(self, phase, action):
        lead = self.client("lead")
        if action == "replan":
            return lead.post(
                f"/api/v1/phases/{phase.pk}/replan/",
                {
                    "planned_start": (phase.planned_start + timedelta(days=7)).isoformat(),
                    "planned_end": (phase.planned_end + timedelta(days=7)).isoformat(),
                    "reason": "matrix",
                    "confirm_overlap_or_gap": True,
                },
                format="json",
            )
        if action == "add_gate":
            return lead.post(
                "/api/v1/gates/",
                {
                    "phase": phase.pk,
                    "name": "Matrix milestone",
                    "kind": "milestone",
                    "due_date": "2026-12-01",
                },
                format="json",
            )
        if action == "backfill_dates":
            phase.refresh_from_db()
            today = timezone.localdate()
            body = {"actual_start": (today - timedelta(days=1)).isoformat(), "reason": "matrix"}
            if phase.status == "completed":
                body["actual_end"] = today.isoformat()
            return lead.post(f"/api/v1/phases/{phase.pk}/actual-dates/", body, format="json")
        # activate: advancing the program activates the phase after the active one.
        return self.act_on_program(self.program, "advance")

    # --- gates and criteria -------------------------------------------------------------------------

    def gate_in(self, state):
        Gate.objects.filter(pk=self.exit_gate.pk).update(status=state)
        return self.exit_gate

    def act_on_gate(self, gate, action):
        lead, url = self.client("lead"), f"/api/v1/gates/{gate.pk}/"
        if action == "evaluate":
            return lead.post(f"{url}evaluate/")
        if action == "decide":
            return lead.post(f"{url}decision/", {"decision": "fail", "note": "matrix"}, format="json")
        if action == "reopen":
            return lead.post(f"{url}reopen/", {"reason": "matrix"}, format="json")
        if action == "repin":
            return lead.post(f"{url}repin/")
        criterion = f"/api/v1/criteria/{gate.criteria.order_by('pk').first().pk}/"
        if action == "edit_criterion":
            return lead.patch(criterion, {"name": "Matrix, reworded"}, format="json")
        if action == "delete_criterion":
            return lead.delete(criterion)
        return lead.post(f"{url}criteria/", {"name": "Runbook reviewed", "kind": "manual"}, format="json")

    def criterion_in(self, state):
        criterion = Criterion.objects.create(gate=self.exit_gate, name="Runbook reviewed", kind="manual")
        if state == "attested":
            Criterion.objects.filter(pk=criterion.pk).update(
                attested_by=self.users["lead2"], attested_at=timezone.now()
            )
        if state == "locked":
            Gate.objects.filter(pk=self.exit_gate.pk).update(status=Gate.Status.PASSED)
        return criterion

    def act_on_criterion(self, criterion, action):
        return self.client("lead").post(
            f"/api/v1/criteria/{criterion.pk}/attest/", {"link": "https://wiki.example.com/x"}, format="json"
        )

    # --- exceptions ---------------------------------------------------------------------------------

    def exception_in(self, state):
        now = timezone.now()
        exception = draft_exception(self.users["engineer"], self.ref["trainer"], now, title="Matrix")
        FreezeException.objects.filter(pk=exception.pk).update(status=state.removesuffix(ENDED))
        if state.endswith(ENDED):
            FreezeException.objects.filter(pk=exception.pk).update(
                change_starts_at=now - timedelta(hours=2), change_ends_at=now - timedelta(seconds=1)
            )
        return FreezeException.objects.get(pk=exception.pk)

    def act_on_exception(self, exception, action):
        url = f"/api/v1/freeze-exceptions/{exception.pk}/"
        reason = {"reason": "matrix"}
        if action == "edit":
            return self.client("engineer").patch(url, {"title": "Matrix, reworded"}, format="json")
        if action in ("submit", "withdraw"):
            return self.client("engineer").post(f"{url}{action}/", reason, format="json")
        if action in ("approve", "reject"):
            return self.client("component_owner").post(f"{url}{action}/", reason, format="json")
        return self.client("lead").post(f"{url}revoke/", reason, format="json")

    # --- definitions and migrations -----------------------------------------------------------------

    def definition_in(self, state):
        return definition(key="matrix-metric", status=state, start_event="matrix starts")

    def act_on_definition(self, metric, action):
        owner, url = (
            self.client("metric_owner"),
            f"/api/v1/definitions/{metric.key}/versions/{metric.version}/",
        )
        if action == "edit":
            return owner.patch(url, {"name": "Matrix metric, renamed"}, format="json")
        return owner.post(f"{url}{action}/", {"reason": "matrix"}, format="json")

    def migration_in(self, state):
        return WorkloadMigration.objects.create(
            program=self.program, workload=self.ref["medium"], wave=1, state=state
        )

    def act_on_migration(self, migration, target):
        return self.client("engineer").post(
            f"/api/v1/migrations/{migration.pk}/state/", {"state": target, "reason": "matrix"}, format="json"
        )


@pytest.fixture
def arena(ref, lead, lead2, engineer, component_owner, metric_owner, as_user):
    users = {
        "lead": lead,
        "lead2": lead2,
        "engineer": engineer,
        "component_owner": component_owner,
        "metric_owner": metric_owner,
    }
    return Arena({**ref, "medium": Workload.objects.get(key="llm-finetune-8b")}, users, as_user)


def _state_of(machine: str, subject) -> str:
    fresh = type(subject).objects.get(pk=subject.pk)
    if machine in ("criterion", "migration"):
        return fresh.state
    if machine == "exception":
        return fresh.effective_status
    return fresh.status


@pytest.mark.parametrize(("machine", "state", "action"), CASES, ids=["-".join(c) for c in CASES])
def test_transition(arena, machine, state, action):
    if machine == "phase" and action == "activate" and state == "active":
        # Unreachable: advancing activates the phase after the active one, and the database holds
        # one active phase per program.
        with pytest.raises(IntegrityError), transaction.atomic():
            Phase.objects.filter(pk=arena.phases[1].pk).update(status=Phase.Status.ACTIVE)
        return
    subject = getattr(arena, f"{machine}_in")(state)
    if machine == "exception" and action == "expire":
        _check_expire(subject, state)
        return
    before = world()
    response = getattr(arena, f"act_on_{machine}")(subject, action)
    if _allowed(machine, state, action):
        assert response.status_code in (200, 201, 204), response.json()
        if machine == "gate" and action == "evaluate" and state in Gate.TRANSITIONS["reopen"]:
            assert _state_of(machine, subject) == state  # fresh evidence, but the decision stands
        return
    assert response.status_code == 409, response.json()
    assert _state_of(machine, subject).split(" ")[0] in response.json()["detail"]
    assert world() == before


def _check_expire(exception, state):
    """The sweep expires what is open once its change window has ended, and leaves the rest alone."""
    moment = exception.change_ends_at + timedelta(seconds=1)
    before = world()
    expired = freeze_services.exceptions_expire(now=moment)
    if _allowed("exception", state, "expire"):
        assert expired == [exception.pk]
        assert FreezeException.objects.get(pk=exception.pk).status == "expired"
    else:
        assert expired == []
        assert world() == before


def test_replanning_a_completed_phase_is_409_and_keeps_its_dates(arena):
    phase = arena.phase_in("completed")
    before = (phase.planned_start, phase.planned_end)
    response = arena.act_on_phase(phase, "replan")
    assert response.status_code == 409
    assert response.json()["detail"] == (
        f"Phase '{phase.name}' is completed; re-planning is allowed only when it is active or planned."
    )
    phase.refresh_from_db()
    assert (phase.planned_start, phase.planned_end) == before
    assert not Transition.objects.filter(action="replanned").exists()


@pytest.mark.parametrize("action", ["approve", "reject", "withdraw"])
def test_an_exception_whose_change_window_ended_is_expired_and_refuses(arena, action):
    exception = arena.exception_in(f"submitted{ENDED}")
    response = arena.act_on_exception(exception, action)
    assert response.status_code == 409
    detail = response.json()["detail"]
    assert "change window ended" in detail and "is expired" in detail
    assert FreezeException.objects.get(pk=exception.pk).status == "submitted"
    assert not Approval.objects.exists()


GATE_CHANGES = ("decide", "reopen", "add_criterion", "edit_criterion", "delete_criterion", "repin")


@pytest.mark.parametrize("gate_state", ["open", "ready", "passed", "waived"])
@pytest.mark.parametrize("action", [*GATE_CHANGES, "attest"])
def test_no_gate_of_a_completed_phase_changes_whatever_its_state(arena, gate_state, action):
    """History stays history (issue 26): a completed phase's gates, decided or still open (a milestone
    left open when the program advanced), take no decision, reopening or criterion change: 409 naming
    the phase, and nothing moves."""
    gate = arena.gate_in(gate_state)
    criterion = arena.criterion_in("unattested") if action == "attest" else None
    Phase.objects.filter(pk=gate.phase_id).update(status=Phase.Status.COMPLETED)
    before = world()
    if criterion is not None:
        response = arena.act_on_criterion(criterion, "attest")
    else:
        response = arena.act_on_gate(gate, action)
    assert response.status_code == 409, response.content
    assert response.json()["detail"].startswith(
        f"Phase '{gate.phase.name}' is completed: its gates are history"
    )
    assert world() == before
