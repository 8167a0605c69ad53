"""Program API for the plan itself: correcting a phase's actual dates."""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.permissions import RoleRequired
from core.idempotency import IDEMPOTENCY_KEY, idempotent
from core.roles import acting_user
from program import services
from program.api.programs import PhaseOutput
from program.api.rules import WRITE_RULES
from program.models import Phase


class ActualDatesInput(serializers.Serializer[Any]):
    """Either date may be left out to keep it; null clears an active phase's end."""

    actual_start = serializers.DateField(required=False)
    actual_end = serializers.DateField(required=False, allow_null=True)
    reason = serializers.CharField(max_length=2000)


@extend_schema(
    tags=["program"], request=ActualDatesInput, responses=PhaseOutput, parameters=[IDEMPOTENCY_KEY]
)
class PhaseActualDates(APIView):
    """Backfill when a phase really started or ended (program leads), with a reason for the history."""

    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["phase_backfill_dates"]

    @idempotent
    def post(self, request: Request, pk: int) -> Response:
        data = ActualDatesInput(data=request.data)
        data.is_valid(raise_exception=True)
        phase = services.phase_backfill_dates(
            actor=acting_user(request), phase=get_object_or_404(Phase, pk=pk), **data.validated_data
        )
        phase = Phase.objects.prefetch_related("gates").get(pk=phase.pk)
        return Response(PhaseOutput(phase).data)
