"""Program templates through the API: phases with their months, gates, criteria and slots.

Any signed-in user reads them; a program is made from one with POST /api/v1/programs/."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.errors import ApplicationError
from metrics.models import MetricDefinition, Workload
from program.blueprints import blueprint_keys, blueprint_load, blueprint_slots


class SlotOutput(serializers.Serializer[Any]):
    name = serializers.CharField()
    kind = serializers.ChoiceField(choices=["metric", "workload"])
    suggested = serializers.CharField(help_text="The key a program binds by default, if the registry has it.")
    suggested_exists = serializers.BooleanField(help_text="The registry has it now (an active version).")
    description = serializers.CharField()


class TemplateCriterionOutput(serializers.Serializer[Any]):
    name = serializers.CharField()
    kind = serializers.CharField()
    metric_slot = serializers.CharField(allow_null=True)
    workload_slot = serializers.CharField(allow_null=True)
    statistic = serializers.CharField(allow_blank=True)
    operator = serializers.CharField(allow_null=True)
    threshold = serializers.FloatField(allow_null=True)
    require_significant = serializers.BooleanField()
    # The JSON field is named `required`; DRF's Field.required (a bool) is another thing.
    required = serializers.BooleanField()  # type: ignore[assignment]
    min_samples = serializers.IntegerField()
    window_days = serializers.IntegerField(allow_null=True)


class TemplateGateOutput(serializers.Serializer[Any]):
    name = serializers.CharField()
    kind = serializers.ChoiceField(choices=["exit", "milestone"])
    month = serializers.IntegerField(help_text="The month it is due at the end of (1-based).")
    criteria = TemplateCriterionOutput(many=True)


class TemplatePhaseOutput(serializers.Serializer[Any]):
    kind = serializers.CharField()
    name = serializers.CharField()
    first_month = serializers.IntegerField()
    last_month = serializers.IntegerField()
    gates = TemplateGateOutput(many=True)


class TemplateOutput(serializers.Serializer[Any]):
    key = serializers.CharField()
    name = serializers.CharField()
    months = serializers.IntegerField()
    slots = SlotOutput(many=True)
    phases = TemplatePhaseOutput(many=True)


def _criterion(spec: dict[str, Any]) -> dict[str, Any]:
    manual = spec["kind"] == "manual"
    return {
        "name": spec["name"],
        "kind": spec["kind"],
        "metric_slot": spec.get("metric_slot"),
        "workload_slot": spec.get("workload_slot"),
        "statistic": spec.get("statistic", ""),
        "operator": None if manual else spec.get("operator", "gte"),
        "threshold": spec.get("threshold"),
        "require_significant": spec.get("require_significant", spec["kind"] == "every_metric"),
        "required": spec.get("required", True),
        "min_samples": spec.get("min_samples", 30),
        "window_days": spec.get("window_days"),
    }


def _gate(spec: dict[str, Any], kind: str, month: int) -> dict[str, Any]:
    return {
        "name": spec["name"],
        "kind": kind,
        "month": month,
        "criteria": [_criterion(c) for c in spec.get("criteria") or []],
    }


def _existing(keys: list[str]) -> tuple[set[str], set[str]]:
    """Which suggested keys the registry has: two queries for any number of templates."""
    metrics = set(
        MetricDefinition.objects.filter(key__in=keys, status=MetricDefinition.Status.ACTIVE).values_list(
            "key", flat=True
        )
    )
    return metrics, set(Workload.objects.filter(key__in=keys).values_list("key", flat=True))


def template_views(keys: list[str]) -> list[dict[str, Any]]:
    blueprints = [blueprint_load(key) for key in keys]
    slots = {bp["key"]: blueprint_slots(bp) for bp in blueprints}
    metrics, workloads = _existing([s.suggested for group in slots.values() for s in group])
    return [
        {
            "key": bp["key"],
            "name": bp["name"],
            "months": bp["months"],
            "slots": [
                {
                    "name": s.name,
                    "kind": s.kind,
                    "suggested": s.suggested,
                    "suggested_exists": s.suggested in (metrics if s.kind == "metric" else workloads),
                    "description": s.description,
                }
                for s in slots[bp["key"]]
            ],
            "phases": [
                {
                    "kind": phase["kind"],
                    "name": phase["name"],
                    "first_month": phase["months"][0],
                    "last_month": phase["months"][1],
                    "gates": [
                        _gate(phase["exit_gate"], "exit", phase["months"][1]),
                        *(_gate(m, "milestone", m["month"]) for m in phase.get("milestones") or []),
                    ],
                }
                for phase in bp["phases"]
            ],
        }
        for bp in blueprints
    ]


@extend_schema(tags=["program"])
class TemplateList(APIView):
    """Every program template. Not paged: templates are files in program/blueprints/, a handful."""

    @extend_schema(responses=TemplateOutput(many=True))
    def get(self, request: Request) -> Response:
        return Response(TemplateOutput(template_views(blueprint_keys()), many=True).data)


@extend_schema(tags=["program"])
class TemplateDetail(APIView):
    @extend_schema(responses=TemplateOutput)
    def get(self, request: Request, key: str) -> Response:
        if key not in blueprint_keys():
            raise ApplicationError(f"There is no template '{key}'.", status=404)
        return Response(TemplateOutput(template_views([key])[0]).data)
