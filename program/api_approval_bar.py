"""A program's rising approval bar through the API: a program lead sets the weeks, or null for off."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.permissions import RoleRequired, WriteRule
from core.errors import ApplicationError
from core.idempotency import IDEMPOTENCY_KEY, idempotent
from core.roles import PROGRAM_LEADS
from program import services
from program.blueprints.schema import MAX_BAR_WEEKS
from program.models import Program

WRITE_RULES = {"program_set_approval_bar": WriteRule("set the approval bar", (PROGRAM_LEADS,))}


class ApprovalBarInput(serializers.Serializer):
    approval_bar_weeks = serializers.IntegerField(
        min_value=1,
        max_value=MAX_BAR_WEEKS,
        allow_null=True,
        help_text="Weeks before a gate's due date in which medium-risk freeze exceptions need one more "
        "approval and a program lead (the frontier sprint too). null: off. Exceptions already submitted "
        "keep what they were given.",
    )


class ApprovalBarOutput(serializers.Serializer):
    slug = serializers.CharField()
    approval_bar_weeks = serializers.IntegerField(allow_null=True)


@extend_schema(tags=["program"])
class ProgramApprovalBar(APIView):
    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["program_set_approval_bar"]

    @extend_schema(responses=ApprovalBarOutput)
    def get(self, request, slug):
        return Response(ApprovalBarOutput(_program(slug)).data)

    @extend_schema(request=ApprovalBarInput, responses=ApprovalBarOutput, parameters=[IDEMPOTENCY_KEY])
    @idempotent
    def put(self, request, slug):
        data = ApprovalBarInput(data=request.data)
        data.is_valid(raise_exception=True)
        program = services.program_set_approval_bar(
            lead=request.user, program=_program(slug), weeks=data.validated_data["approval_bar_weeks"]
        )
        return Response(ApprovalBarOutput(program).data)


def _program(slug: str) -> Program:
    program = Program.objects.filter(slug=slug).first()
    if program is None:
        raise ApplicationError(f"There is no program '{slug}'.", status=404)
    return program
