"""GET /api/v1/criteria/{id}/calibration/: how a criterion would have decided at earlier moments.

Anyone signed in reads it (a viewer too). `at` names the moments (at most 26, ISO 8601); without it,
every week (or every few weeks) from the program's start, and now. Each moment uses only the
observations made before it (program.calibration)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.permissions import RoleRequired
from core.errors import ApplicationError
from program import policies
from program.calibration import MAX_POINTS, calibration_criterion_get, criterion_calibration
from program.calibration_reading import calibration_reading
from program.models import Criterion, CriterionResult


def _interval(help_text: str = "") -> serializers.ListField:
    return serializers.ListField(
        child=serializers.FloatField(), min_length=2, max_length=2, allow_null=True, help_text=help_text
    )


class CalibrationInput(serializers.Serializer[Any]):
    at = serializers.ListField(
        child=serializers.DateTimeField(),
        required=False,
        min_length=1,
        max_length=MAX_POINTS,
        help_text=f"Moments to judge at (repeat the parameter, at most {MAX_POINTS}). "
        "Default: weekly from the program's start, and now.",
    )


class CalibrationPointOutput(serializers.Serializer[Any]):
    at = serializers.DateTimeField(help_text="Only observations with observed_at before this moment count.")
    outcome = serializers.ChoiceField(choices=CriterionResult.Outcome.choices)
    reason = serializers.CharField()
    n_baseline = serializers.IntegerField()
    n_candidate = serializers.IntegerField()
    value = serializers.FloatField(allow_null=True, help_text="The number compared with the threshold.")
    value_ci = _interval("Its (1 − α) interval.")
    relative_performance = serializers.FloatField(allow_null=True, help_text="> 1: the candidate is better.")
    relative_performance_ci = _interval()
    approximate = serializers.BooleanField(help_text="Read from the day rollups (whole UTC days).")


class CalibrationOutput(serializers.Serializer[Any]):
    criterion = serializers.IntegerField(source="criterion.pk")
    name = serializers.CharField(source="criterion.name")
    kind = serializers.ChoiceField(source="criterion.kind", choices=Criterion.Kind.choices)
    metric = serializers.CharField(source="criterion.metric.ref", default=None, allow_null=True)
    workload = serializers.CharField(source="criterion.workload.key", default=None, allow_null=True)
    window_days = serializers.IntegerField(source="criterion.window_days", allow_null=True)
    # The JSON field is named `label`; DRF's Field.label (the field's title) is another thing.
    label = serializers.CharField(  # type: ignore[assignment]
        help_text="What `value` is: relative performance, improvement %, …"
    )
    operator = serializers.ChoiceField(choices=Criterion.Operator.choices)
    threshold = serializers.FloatField(allow_null=True)
    reading = serializers.CharField(help_text="The calibration in a sentence or two.")
    unavailable = serializers.CharField(help_text="Why there are no points; blank when there are.")
    points = CalibrationPointOutput(many=True)


@extend_schema(tags=["program"], parameters=[CalibrationInput], responses=CalibrationOutput)
class CriterionCalibration(APIView):
    """How the criterion would have decided at each earlier moment, with only the data of then."""

    permission_classes = [RoleRequired]

    def get(self, request: Request, pk: int) -> Response:
        try:
            criterion = calibration_criterion_get(pk)
        except Criterion.DoesNotExist:
            raise ApplicationError(f"There is no criterion {pk}.", status=404) from None
        policies.require_read(request.user, criterion.gate.phase.program, f"criterion {pk}")
        query = CalibrationInput(data=request.query_params)
        query.is_valid(raise_exception=True)
        calibration = criterion_calibration(criterion, points=query.validated_data.get("at"))
        calibration.reading = calibration_reading(calibration)
        return Response(CalibrationOutput(calibration).data)
