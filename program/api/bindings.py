"""A program's slot bindings through the API: read them, bind slots later (program leads)."""

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
from program.selectors.bindings import program_bindings


class SlotBindingOutput(serializers.Serializer[Any]):
    name = serializers.CharField()
    kind = serializers.ChoiceField(choices=["metric", "workload"])
    description = serializers.CharField(allow_blank=True)
    suggested = serializers.CharField(allow_blank=True)
    bound = serializers.ListField(
        child=serializers.CharField(), help_text="Keys its criteria use (metric as key@N); empty: unbound."
    )
    criteria = serializers.IntegerField(help_text="Measured criteria using this slot.")
    unbound = serializers.IntegerField(help_text="Of them, on undecided gates and still unbound.")
    decided = serializers.IntegerField(help_text="Of them, on decided gates: binding skips these.")


class BindInput(serializers.Serializer[Any]):
    bindings = serializers.DictField(
        child=serializers.CharField(),
        allow_empty=False,
        help_text="{slot: key}: a metric slot takes 'key' (its active version) or 'key@N', a workload "
        "slot a workload key.",
    )


class BindOutput(serializers.Serializer[Any]):
    bound = serializers.DictField(child=serializers.CharField())
    criteria_updated = serializers.IntegerField()
    skipped_gates = serializers.ListField(
        child=serializers.CharField(), help_text="Decided gates whose criteria were left as they are."
    )
    slots = SlotBindingOutput(many=True)


@extend_schema(tags=["program"])
class ProgramBindings(APIView):
    """The template slots of a program and what they are bound to. Binding fills in every criterion
    that uses the slot on an undecided gate; criteria of decided gates are skipped and named."""

    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["program_bind"]

    @extend_schema(responses=SlotBindingOutput(many=True))
    def get(self, request: Request, slug: str) -> Response:
        program = program_readable_or_404(slug, request.user)
        return Response(SlotBindingOutput(program_bindings(program), many=True).data)

    @extend_schema(request=BindInput, responses=BindOutput, parameters=[IDEMPOTENCY_KEY])
    @idempotent
    def post(self, request: Request, slug: str) -> Response:
        program = program_or_404(slug)
        data = BindInput(data=request.data)
        data.is_valid(raise_exception=True)
        result = services.program_bind(
            actor=acting_user(request), program=program, bindings=data.validated_data["bindings"]
        )
        body = {
            "bound": result.bound,
            "criteria_updated": result.criteria_updated,
            "skipped_gates": result.skipped_gates,
            "slots": program_bindings(program),
        }
        return Response(BindOutput(body).data)
