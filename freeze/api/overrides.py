"""Break-glass overrides API: open (program leads), list (?awaiting_review=true), review (another lead)."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, serializers, status
from rest_framework.filters import BaseFilterBackend
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.permissions import RoleRequired
from core.api.serializers import KeyRelatedField
from core.idempotency import IDEMPOTENCY_KEY, idempotent
from core.roles import acting_user
from freeze import services
from freeze.api.windows import WRITE_RULES
from freeze.models import Component, FreezeOverride

TRUE = ("1", "true", "yes")


class OverrideOutput(serializers.ModelSerializer[FreezeOverride]):
    component = serializers.CharField(source="component.key")
    opened_by = serializers.CharField(source="opened_by.username")
    reviewed_by = serializers.CharField(source="reviewed_by.username", allow_null=True, default=None)
    in_force = serializers.SerializerMethodField()
    review_status = serializers.ChoiceField(
        choices=["awaiting", "overdue", "reviewed"],
        read_only=True,
        help_text="overdue: no review note 72 h after opening.",
    )
    review_due_at = serializers.DateTimeField(read_only=True)

    class Meta:
        model = FreezeOverride
        fields = [
            "id",
            "component",
            "opened_by",
            "reason",
            "starts_at",
            "ends_at",
            "in_force",
            "review_status",
            "review_due_at",
            "review_note",
            "reviewed_by",
            "reviewed_at",
        ]

    def get_in_force(self, obj: FreezeOverride) -> bool:
        return obj.in_force()


class OverrideInput(serializers.Serializer[dict[str, Any]]):
    component = KeyRelatedField(slug_field="key", queryset=Component.objects.all())
    reason = serializers.CharField(max_length=2000, help_text="What is broken and why it cannot wait.")
    ends_at = serializers.DateTimeField(help_text="At most 24 h from now; the override starts now.")


class ReviewInput(serializers.Serializer[dict[str, Any]]):
    review_note = serializers.CharField(max_length=4000, help_text="What was changed; should it have waited?")


class OverrideListInput(serializers.Serializer[dict[str, Any]]):
    component = KeyRelatedField(
        slug_field="key",
        queryset=Component.objects.all(),
        required=False,
        help_text="Only this component's (key)",
    )


def overrides_list() -> QuerySet[FreezeOverride]:
    return FreezeOverride.objects.select_related("component", "opened_by", "reviewed_by")


@extend_schema(
    tags=["freeze"],
    parameters=[
        OpenApiParameter("awaiting_review", bool, description="Only overrides without a review note"),
        OpenApiParameter("in_force", bool, description="Only overrides in force now"),
        OverrideListInput,
    ],
)
class OverrideList(generics.ListAPIView[FreezeOverride]):
    """Break-glass overrides, newest first; POST opens one now (program leads, at most 24 h)."""

    serializer_class = OverrideOutput
    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["override_open"]
    filter_backends: list[type[BaseFilterBackend]] = []

    def get_queryset(self) -> QuerySet[FreezeOverride]:
        params = self.request.query_params
        queryset = overrides_list()
        if params.get("awaiting_review") in TRUE:
            queryset = queryset.filter(reviewed_at__isnull=True)
        if params.get("in_force") in TRUE:
            now = timezone.now()
            queryset = queryset.filter(starts_at__lte=now, ends_at__gt=now)
        query = OverrideListInput(data=params)
        query.is_valid(raise_exception=True)  # an unknown (or NUL) key is a 400 naming `component`
        if query.validated_data.get("component"):
            queryset = queryset.filter(component=query.validated_data["component"])
        return queryset

    @extend_schema(request=OverrideInput, responses={201: OverrideOutput}, parameters=[IDEMPOTENCY_KEY])
    @idempotent
    def post(self, request: Request) -> Response:
        data = OverrideInput(data=request.data)
        data.is_valid(raise_exception=True)
        override = services.override_open(actor=acting_user(request), **data.validated_data)
        return Response(OverrideOutput(override).data, status=status.HTTP_201_CREATED)


@extend_schema(tags=["freeze"])
class OverrideReview(APIView):
    """A program lead other than the opener writes the review note (due 72 h after opening)."""

    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["override_review"]

    def check_permissions(self, request: Request) -> None:
        super().check_permissions(request)
        # The object-level rule before the body: 404 for no such override, 403 for its opener.
        services.override_reviewer_check(actor=acting_user(request), override=self._override())

    def _override(self) -> FreezeOverride:
        return get_object_or_404(overrides_list(), pk=self.kwargs["pk"])

    @extend_schema(request=ReviewInput, responses=OverrideOutput, parameters=[IDEMPOTENCY_KEY])
    @idempotent
    def post(self, request: Request, pk: int) -> Response:
        data = ReviewInput(data=request.data)
        data.is_valid(raise_exception=True)
        override = services.override_review(
            actor=acting_user(request), override=self._override(), note=data.validated_data["review_note"]
        )
        return Response(OverrideOutput(override).data)
