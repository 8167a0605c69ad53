"""A program's rising approval bar through the API: a program lead sets the weeks, or null for off."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.permissions import RoleRequired
from core.idempotency import IDEMPOTENCY_KEY, idempotent
from core.roles import acting_user
from program import services
from program.api.lookups import program_or_404, program_readable_or_404
from program.api.rules import WRITE_RULES
from program.blueprints.schema import MAX_BAR_WEEKS


class ApprovalBarInput(serializers.Serializer[Any]):
    approval_bar_weeks = serializers.IntegerField(
        min_value=1,
        max_value=MAX_BAR_WEEKS,
        allow_null=True,
        help_text="Weeks before a gate's due date in which medium-risk freeze exceptions need one more "
        "approval and a program lead (the frontier sprint too). null: off. Exceptions already submitted "
        "keep what they were given.",
    )


class ApprovalBarOutput(serializers.Serializer[Any]):
    slug = serializers.CharField()
    approval_bar_weeks = serializers.IntegerField(allow_null=True)


@extend_schema(tags=["program"])
class ProgramApprovalBar(APIView):
    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["program_set_approval_bar"]

    @extend_schema(responses=ApprovalBarOutput)
    def get(self, request: Request, slug: str) -> Response:
        return Response(ApprovalBarOutput(program_readable_or_404(slug, request.user)).data)

    @extend_schema(request=ApprovalBarInput, responses=ApprovalBarOutput, parameters=[IDEMPOTENCY_KEY])
    @idempotent
    def put(self, request: Request, slug: str) -> Response:
        data = ApprovalBarInput(data=request.data)
        data.is_valid(raise_exception=True)
        program = services.program_set_approval_bar(
            actor=acting_user(request),
            program=program_or_404(slug),
            weeks=data.validated_data["approval_bar_weeks"],
        )
        return Response(ApprovalBarOutput(program).data)
