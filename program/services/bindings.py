"""Binding a program's template slots to its own metrics and workloads, at creation or later.

A template's criteria name slots (program.blueprints), not registry keys. `bindings_resolve` turns a
`{slot: key}` mapping into registry rows; `program_bind` fills in every criterion of a program that
uses the slots. Criteria of decided gates are skipped, not refused: their evidence is frozen with the
decision, and refusing would make a slot unbindable for good once an early gate had been decided."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Q

from core.audit import transition_record
from core.errors import ApplicationError
from metrics.models import MetricDefinition, Workload
from metrics.public import definition_resolve
from program import policies
from program.blueprints import Slot, blueprint_load, blueprint_slots
from program.models import Criterion, Gate, Program
from program.services.gate_queue import gate_evaluation_queue

Bound = MetricDefinition | Workload | None


def _field(slot: str) -> str:
    return f"bindings.{slot}"


def _metric(slot: str, ref: str) -> MetricDefinition:
    """`key` → its active version, `key@N` → that version; a draft or deprecated one is refused."""
    try:
        definition = definition_resolve(ref, field=_field(slot))
    except ApplicationError as exc:
        # Unknown is bad input here (400), not a missing resource: the request names the key.
        raise ApplicationError(exc.message, status=400, field=_field(slot)) from None
    if definition.status == MetricDefinition.Status.DRAFT:
        raise ApplicationError(
            f"{definition.ref} is a draft; bind an active version.", status=400, field=_field(slot)
        )
    if definition.status == MetricDefinition.Status.DEPRECATED:
        active = MetricDefinition.objects.filter(
            key=definition.key, status=MetricDefinition.Status.ACTIVE
        ).first()
        hint = f" Bind {active.ref} instead." if active else ""
        raise ApplicationError(f"{definition.ref} is deprecated.{hint}", status=409, field=_field(slot))
    return definition


def _workload(slot: str, key: str) -> Workload:
    workload = Workload.objects.filter(key=key).first()
    if workload is None:
        raise ApplicationError(f"Unknown workload '{key}'.", status=400, field=_field(slot))
    return workload


def _suggested(slot: Slot) -> Bound:
    if slot.kind == "metric":
        return MetricDefinition.objects.filter(
            key=slot.suggested, status=MetricDefinition.Status.ACTIVE
        ).first()
    return Workload.objects.filter(key=slot.suggested).first()


def bindings_resolve(
    slots: list[Slot], bindings: dict[str, Any] | None, *, suggest: bool
) -> dict[str, Bound]:
    """Registry rows for the named slots. With `suggest`, a slot left out takes its suggested key when
    the registry has it (else None: unbound); a slot given as null stays unbound on purpose.
    An unknown slot or key is a 400 naming `bindings.<slot>`."""
    bindings = bindings or {}
    by_name = {slot.name: slot for slot in slots}
    for name in bindings:
        if name not in by_name:
            known = ", ".join(by_name) or "none"
            raise ApplicationError(
                f"The template has no slot '{name}' (its slots: {known}).", status=400, field=_field(name)
            )
    resolved: dict[str, Bound] = {}
    for slot in slots:
        if slot.name not in bindings:
            if suggest:
                resolved[slot.name] = _suggested(slot)
            continue
        value = bindings[slot.name]
        if value is None or value == "":
            resolved[slot.name] = None
        elif not isinstance(value, str):
            raise ApplicationError("Give a key as text.", status=400, field=_field(slot.name))
        else:
            resolved[slot.name] = (
                _metric(slot.name, value) if slot.kind == "metric" else _workload(slot.name, value)
            )
    return resolved


def bound_label(value: Bound) -> str | None:
    if value is None:
        return None
    return value.ref if isinstance(value, MetricDefinition) else value.key


def program_slots(program: Program) -> list[Slot]:
    """The program's template slots; if its template file is gone, the slots its criteria name."""
    try:
        return blueprint_slots(blueprint_load(program.template))
    except KeyError:
        criteria = Criterion.objects.filter(gate__phase__program=program)
        metric = sorted(set(criteria.exclude(slot="").values_list("slot", flat=True)))
        workload = sorted(set(criteria.exclude(workload_slot="").values_list("workload_slot", flat=True)))
        return [Slot(n, "metric", "", "") for n in metric] + [Slot(n, "workload", "", "") for n in workload]


@dataclass
class BindResult:
    program: Program
    bound: dict[str, str | None]
    criteria_updated: int = 0
    skipped_gates: list[str] = field(default_factory=list)


@transaction.atomic
def program_bind(*, actor: User, program: Program, bindings: dict[str, Any]) -> BindResult:
    """Leads of the program only. Bind slots to keys in every criterion of the program that uses them, on
    undecided gates only.

    The touched gates are queued for evaluation after commit; the binding is audited on the program."""
    policies.require_lead(actor, program, "bind template slots")
    if not isinstance(bindings, dict) or not bindings:
        raise ApplicationError("Name at least one slot to bind: {slot: key}.", status=400, field="bindings")
    for name, value in bindings.items():
        if value is None or value == "":
            raise ApplicationError("Give a key to bind the slot to.", status=400, field=_field(name))
    program = Program.objects.select_for_update().get(pk=program.pk)
    slots = program_slots(program)
    resolved = bindings_resolve(slots, bindings, suggest=False)
    # Split by kind: a metric slot resolves to a definition, a workload slot to a workload.
    metrics = {name: value for name, value in resolved.items() if isinstance(value, MetricDefinition)}
    workloads = {name: value for name, value in resolved.items() if isinstance(value, Workload)}
    criteria = list(
        Criterion.objects.select_for_update(of=("self",))
        .select_related("gate")
        .filter(gate__phase__program=program)
        .filter(Q(slot__in=list(resolved)) | Q(workload_slot__in=list(resolved)))
        .order_by("pk")
    )
    skipped, changed, gates = set(), [], set()
    for criterion in criteria:
        if criterion.gate.status in Gate.DECIDED:
            skipped.add(criterion.gate.name)
            continue
        if criterion.slot in metrics:
            criterion.metric = metrics[criterion.slot]
        if criterion.workload_slot in workloads:
            criterion.workload = workloads[criterion.workload_slot]
        changed.append(criterion)
        gates.add(criterion.gate_id)
    Criterion.objects.bulk_update(changed, ["metric", "workload"])
    result = BindResult(
        program=program,
        bound={name: bound_label(value) for name, value in resolved.items()},
        criteria_updated=len(changed),
        skipped_gates=sorted(skipped),
    )
    transition_record(
        subject=program,
        action="bound",
        actor=actor,
        data={"bindings": result.bound, "criteria": len(changed), "skipped_gates": result.skipped_gates},
    )
    for gate_id in sorted(gates):
        gate_evaluation_queue(gate_id=gate_id)
    return result
