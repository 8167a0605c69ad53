"""{% bindings_panel program %}: the program page's Bindings panel, with its own queries, so the
page view does not change to show it (program/pages/bindings.py takes its form's POST)."""

from __future__ import annotations

from typing import Any

from django import template

from metrics.models import MetricDefinition, Workload
from program import policies
from program.models import Program
from program.selectors.bindings import program_bindings

register = template.Library()


@register.inclusion_tag("program/_bindings.html", takes_context=True)
def bindings_panel(context: template.Context, program: Program) -> dict[str, Any]:
    """Slots with what they are bound to; for leads, a picker per slot (active metrics / workloads).
    Four queries whatever the number of slots and criteria."""
    request = context["request"]
    slots = program_bindings(program)
    can_bind = policies.is_lead(request.user, program.pk)
    metrics = workloads = []
    if can_bind and slots:
        metrics = list(
            MetricDefinition.objects.filter(status=MetricDefinition.Status.ACTIVE)
            .order_by("key")
            .values_list("key", "version", "name")
        )
        workloads = list(Workload.objects.order_by("key").values_list("key", "name"))
    return {
        "program": program,
        "slots": slots,
        "can_bind": can_bind,
        # Short labels keep the picker and its button on one line in the table.
        "metric_choices": [(key, f"{key}@{version}") for key, version, _ in metrics],
        "workload_choices": [(key, key) for key, _ in workloads],
        "csrf_token": context.get("csrf_token"),
    }
