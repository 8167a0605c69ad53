"""A program's history in words: phase moves, re-plans, gate decisions, criteria changes, migrations.

One query per page whatever the history's length: the transitions of the program, its phases, gates
and workload migrations are read together, newest first, one page at a time. The names they mention
come from the program as `selectors.program_get` loads it (phases with gates, migrations)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from django.contrib.contenttypes.models import ContentType
from django.db.models import Q

from core.audit import HistoryPage, actor_name, state_words, transitions_page
from core.models import Transition
from program.criteria_history import criteria_change_sentence
from program.models import Gate, Phase, Program, WorkloadMigration

PAGE_SIZE = 25
# The "activated" row of the next phase repeats what its predecessor's "completed" row says.
REPEATS = {"phase": ("activated",)}


@dataclass(frozen=True)
class HistoryEntry:
    at: datetime
    actor: str
    text: str
    reason: str
    kind: str  # program, phase, gate, migration: a class for the page


def _day(value: str | None) -> str:
    return date.fromisoformat(value).strftime("%-d %b %Y") if value else "—"


def _changes(before: dict[str, Any], after: dict[str, Any], labels: dict[str, str]) -> str:
    """'end 31 Dec 2026 → 15 Jan 2027' for each date that changed."""
    parts = [
        f"{label} {_day(before.get(key))} → {_day(after.get(key))}"
        for key, label in labels.items()
        if before.get(key) != after.get(key)
    ]
    return ", ".join(parts) or "no change"


def _data_summary(data: dict[str, Any]) -> str:
    """Criteria changes and anything newer are written by other services: show their data as it is."""
    parts = []
    for key, value in data.items():
        if isinstance(value, dict):
            value = ", ".join(f"{k} {v}" for k, v in value.items())
        elif isinstance(value, list):
            value = ", ".join(str(v) for v in value)
        parts.append(f"{key.replace('_', ' ')}: {value}")
    return "; ".join(parts)


def _phase_text(who: str, record: Transition, name: str) -> str:
    data = record.data or {}
    if record.action == "completed":
        if data.get("next_phase"):
            gate = data.get("exit_gate")
            tail = f": exit gate {gate['status']}" if gate else ""
            return f"{who} advanced {name} → {data['next_phase']}{tail}"
        return f"{who} completed {name}"
    if record.action == "activated":
        return f"{who} started {name}"
    if record.action == "replanned":
        labels = {"planned_start": "start", "planned_end": "end"}
        return f"{who} re-planned {name}: {_changes(data.get('before', {}), data.get('after', {}), labels)}"
    if record.action == "dates_backfilled":
        labels = {"actual_start": "started", "actual_end": "ended"}
        changes = _changes(data.get("before", {}), data.get("after", {}), labels)
        return f"{who} corrected the actual dates of {name}: {changes}"
    return _generic(who, record, name)


GATE_VERBS = {"passed": "passed", "failed": "failed", "waived": "waived"}


def _gate_text(who: str, record: Transition, name: str) -> str:
    data, gate = record.data or {}, f"gate '{name}'"
    if record.action == "decided":
        return f"{who} {GATE_VERBS.get(record.to_state, record.to_state)} {gate}"
    if record.action == "reopened":
        return f"{who} reopened {gate} (was {record.from_state})"
    if record.action == "closed":
        return f"{who} closed {gate} undecided by completing its phase (was {record.from_state})"
    if record.action == "evaluated":
        return f"{gate[0].upper()}{gate[1:]} became {record.to_state} on evaluation"
    if record.action == "created":
        return f"{who} added {gate}"
    if record.action == "reevaluation_requested":
        return f"{who} queued a re-evaluation of {gate}"
    if record.action == "stale":
        return f"{gate[0].upper()}{gate[1:]} went stale"
    if record.action == "attested":
        return f"{who} attested '{data.get('criterion', '')}' on {gate}"
    criteria_change = criteria_change_sentence(record)
    if criteria_change:
        return f"{who} {criteria_change} on {gate}"
    return _generic(who, record, gate)


def _migration_text(who: str, record: Transition, name: str) -> str:
    data = record.data or {}
    if record.action == "planned":
        return f"{who} planned {name} in wave {data.get('wave')}"
    if record.action == "re-waved":
        return f"{who} moved {name} to wave {data.get('wave')}"
    if record.action == "state":
        labels = dict(WorkloadMigration.State.choices)
        frm, to = (
            labels.get(record.from_state, record.from_state),
            labels.get(record.to_state, record.to_state),
        )
        return f"{who} moved {name} from {frm} to {to}"
    return _generic(who, record, name)


def _program_text(who: str, record: Transition, name: str) -> str:
    if record.action == "created":
        return f"{who} created {name} from the {record.data.get('template', '')} template"
    if record.action == "completed":
        return f"{who} completed {name}"
    if record.action == "started":
        days = (record.data or {}).get("days_off_plan", 0)
        when = "on its start date" if days == 0 else f"{abs(days)} days {'early' if days < 0 else 'late'}"
        return f"{who} started {name} {when}"
    if record.action == "plan_shifted":
        return _shift_text(who, record, name)
    if record.action == "bound":
        data = record.data or {}
        pairs = ", ".join(f"{slot} → {key}" for slot, key in data.get("bindings", {}).items())
        skipped = data.get("skipped_gates") or []
        tail = f" (decided gates left as they were: {', '.join(map(str, skipped))})" if skipped else ""
        count = data.get("criteria", 0)
        return f"{who} bound {pairs} in {count} {'criterion' if count == 1 else 'criteria'}{tail}"
    if record.action in ("member_granted", "member_role_changed", "member_removed"):
        data = record.data or {}
        member, role = data.get("member", ""), data.get("role", "")
        if record.action == "member_granted":
            return f"{who} made {member} a {role} of {name}"
        if record.action == "member_role_changed":
            return f"{who} changed {member} from {data.get('previous_role', '')} to {role} in {name}"
        return f"{who} removed {member} ({role}) from {name}"
    if record.action == "approval_bar_set":
        after = (record.data or {}).get("after")
        weeks = f"{after} week{'' if after == 1 else 's'} before a gate" if after else "off"
        return f"{who} set the freeze-exception approval bar of {name} to {weeks}"
    return _generic(who, record, name)


def _shift_text(who: str, record: Transition, name: str) -> str:
    """'Lena shifted the plan of X 30 days earlier from Canary: Canary 1 Apr 2026 → 2 Mar 2026, …'."""
    data = record.data or {}
    days = data.get("days", 0)
    starts = [m for m in data.get("moves", []) if m.get("field") == "planned_start"]
    moved = ", ".join(f"{m['name']} {_day(m['from'])} → {_day(m['to'])}" for m in starts)
    way = "earlier" if days < 0 else "later"
    return f"{who} shifted the plan of {name} {abs(days)} days {way} from {data.get('starts', '')}: {moved}"


def _generic(who: str, record: Transition, subject: str) -> str:
    """Actions this module has no sentence for yet still read."""
    verb = record.action.replace("_", " ")
    summary = _data_summary(record.data or {})
    return f"{who} {verb} {subject}{state_words(record)}" + (f": {summary}" if summary else "")


def _actor(record: Transition) -> str:
    return actor_name(record.actor)  # people by their full names, as on every history


def program_history(program: Program, page: int = 1, size: int = PAGE_SIZE) -> HistoryPage[HistoryEntry]:
    """Page `page` (1 is the newest) of the program's history, in words."""
    phases = list(program.phases.all())
    gates = [gate for phase in phases for gate in phase.gates.all()]
    migrations = list(program.migrations.all())
    types = ContentType.objects.get_for_models(Program, Phase, Gate, WorkloadMigration)
    subjects = {
        types[Program].pk: ("program", {program.pk: program.name}, _program_text),
        types[Phase].pk: ("phase", {p.pk: p.name for p in phases}, _phase_text),
        types[Gate].pk: ("gate", {g.pk: g.name for g in gates}, _gate_text),
        types[WorkloadMigration].pk: (
            "migration",
            {m.pk: m.workload.key for m in migrations},
            _migration_text,
        ),
    }
    where = Q(pk__in=[])
    for type_id, (kind, names, _) in subjects.items():
        where |= Q(content_type_id=type_id, object_id__in=list(names)) & ~Q(action__in=REPEATS.get(kind, ()))
    page, records, has_older = transitions_page(
        Transition.objects.filter(where).select_related("actor").order_by("-at", "-id"), page, size
    )
    entries = []
    for record in records:
        kind, names, describe = subjects[record.content_type_id]
        name = names.get(record.object_id, f"#{record.object_id}")
        entries.append(
            HistoryEntry(
                record.at, _actor(record), describe(_actor(record), record, name), record.reason, kind
            )
        )
    return HistoryPage(entries, page, has_older)
