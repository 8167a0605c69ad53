"""What each template slot of a program is bound to, read from its criteria (one query)."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Q

from metrics.models import MetricDefinition
from program.models import Criterion, Gate, Program
from program.services.bindings import program_slots


@dataclass
class SlotBinding:
    name: str
    kind: str  # "metric" | "workload"
    description: str
    suggested: str
    bound: list[str] = field(default_factory=list)  # distinct keys (metric refs) its criteria use
    criteria: int = 0
    unbound: int = 0  # criteria on undecided gates still waiting for this slot
    decided: int = 0  # criteria on decided gates: binding leaves them as they are

    @property
    def label(self) -> str:
        return ", ".join(self.bound) if self.bound else "unbound"


def program_bindings(program: Program) -> list[SlotBinding]:
    slots = program_slots(program)
    rows = {s.name: SlotBinding(s.name, s.kind, s.description, s.suggested) for s in slots}
    criteria = (
        Criterion.objects.filter(gate__phase__program=program)
        .filter(~Q(slot="") | ~Q(workload_slot=""))
        .select_related("metric", "workload", "gate")
        .order_by("pk")
    )
    for criterion in criteria:
        for name, value in (
            (criterion.slot, criterion.metric),
            (criterion.workload_slot, criterion.workload),
        ):
            row = rows.get(name)
            if row is None or criterion.kind == Criterion.Kind.MANUAL:
                continue
            row.criteria += 1
            if criterion.gate.status in Gate.DECIDED:
                row.decided += 1
            if value is None:
                row.unbound += criterion.gate.status not in Gate.DECIDED
                continue
            label = value.ref if isinstance(value, MetricDefinition) else value.key
            if label not in row.bound:
                row.bound.append(label)
    return list(rows.values())
