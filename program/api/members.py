"""A program's members through the API: list them (anyone who may read the program), grant or change
a role, remove one (the program's leads and platform admins: program.policies.may_manage_members)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import Group, User
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.permissions import RoleRequired
from core.api.serializers import KeyRelatedField
from core.errors import ApplicationError
from core.idempotency import IDEMPOTENCY_KEY, idempotent
from core.roles import acting_user
from program import selectors
from program.api.lookups import program_readable_or_404
from program.api.rules import WRITE_RULES
from program.models import ProgramMembership
from program.services.memberships import membership_grant, membership_remove


class MembershipOutput(serializers.ModelSerializer[ProgramMembership]):
    user = serializers.CharField(source="user.username", default=None, allow_null=True)
    group = serializers.CharField(source="group.name", default=None, allow_null=True)
    granted_by = serializers.CharField(source="granted_by.username", default=None, allow_null=True)

    class Meta:
        model = ProgramMembership
        fields = ["id", "member", "user", "group", "role", "granted_by", "granted_at"]


class MembershipInput(serializers.Serializer[Any]):
    user = KeyRelatedField(
        queryset=User.objects.filter(is_active=True),
        slug_field="username",
        required=False,
        allow_null=True,
        error_messages={"does_not_exist": "Unknown user '{value}'."},
        help_text="A username; or name a group instead.",
    )
    group = KeyRelatedField(
        queryset=Group.objects.all(),
        slug_field="name",
        required=False,
        allow_null=True,
        error_messages={"does_not_exist": "Unknown group '{value}'."},
        help_text="A group (team) name: every member of it holds the role.",
    )
    role = serializers.ChoiceField(choices=ProgramMembership.Role.choices)


@extend_schema(tags=["program"])
class ProgramMembers(APIView):
    """Members of a program: users or groups, each a lead, engineer or viewer there. POST grants a role,
    or changes the role the user or group holds (the program's leads and platform admins only)."""

    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["membership_write"]

    @extend_schema(responses=MembershipOutput(many=True))
    def get(self, request: Request, slug: str) -> Response:
        program = program_readable_or_404(slug, request.user)
        return Response(MembershipOutput(selectors.program_members(program), many=True).data)

    @extend_schema(request=MembershipInput, responses={201: MembershipOutput}, parameters=[IDEMPOTENCY_KEY])
    @idempotent
    def post(self, request: Request, slug: str) -> Response:
        data = MembershipInput(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        membership = membership_grant(
            actor=acting_user(request),
            program=program_readable_or_404(slug, request.user),
            role=values["role"],
            user=values.get("user"),
            group=values.get("group"),
        )
        return Response(MembershipOutput(membership).data, status=status.HTTP_201_CREATED)


@extend_schema(tags=["program"])
class ProgramMember(APIView):
    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["membership_write"]

    @extend_schema(request=None, responses={204: None}, parameters=[IDEMPOTENCY_KEY])
    @idempotent
    def delete(self, request: Request, slug: str, pk: int) -> Response:
        program = program_readable_or_404(slug, request.user)
        membership = ProgramMembership.objects.filter(program=program, pk=pk).first()
        if membership is None:
            raise ApplicationError(f"Program '{slug}' has no membership {pk}.", status=404)
        membership_remove(actor=acting_user(request), membership=membership)
        return Response(status=status.HTTP_204_NO_CONTENT)
