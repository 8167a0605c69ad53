"""Freeze API: components, windows and levels, and the exception workflow (the check: api_check)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AnonymousUser, User
from django.core.files.uploadedfile import UploadedFile
from django.db.models import QuerySet
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, serializers, status
from rest_framework.parsers import FileUploadParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.parsers import JSONParser
from core.api.permissions import RoleRequired, WriteRule
from core.api.serializers import KeyRelatedField
from core.errors import ApplicationError
from core.idempotency import IDEMPOTENCY_KEY, idempotent
from core.roles import FRAMEWORK_ENGINEERS, acting_user
from freeze import policies, recurrence, selectors, services
from freeze.models import Component, FreezeWindow
from program import policies as program_policies
from program.models import Program


def _window_lead(user: User | AnonymousUser, kwargs: Mapping[str, Any]) -> None:
    """A lead of the program whose window the URL names (404 for a window of a private program the user
    may not read)."""
    window = FreezeWindow.objects.select_related("program").filter(pk=kwargs["pk"]).first()
    if window is None:
        return  # the view answers the 404
    policies.require_read_window(user, window, f"freeze window {kwargs['pk']}")
    policies.require_window_lead(user, window, "set freeze levels")


def _lead_anywhere(action: str) -> Callable[[User | AnonymousUser, Mapping[str, Any]], None]:
    """The program is named in the body: leading none is refused here, another program's by the service."""

    def object_rule(user: User | AnonymousUser, kwargs: Mapping[str, Any]) -> None:
        program_policies.require_lead_anywhere(user, action)

    return object_rule


# Who may write, per action: refused with 403 before the body is read (core.api.permissions); the
# rules are freeze.policies'. No roles and no object rule: anyone signed in, and the view asks
# exception_allowed_actions (requester; approvers; a lead of the window's program revokes).
WRITE_RULES = {
    "component_upsert": WriteRule(
        "manage components", object_rule=lambda user, kwargs: policies.require_manage_components(user)
    ),
    "window_create": WriteRule("create freeze windows", object_rule=_lead_anywhere("create freeze windows")),
    "levels_set": WriteRule("set freeze levels", object_rule=_window_lead),
    "exception_create": WriteRule("file freeze exceptions", (FRAMEWORK_ENGINEERS,)),
    "exception_edit": WriteRule("edit freeze exceptions", (FRAMEWORK_ENGINEERS,)),
    "exception_submit": WriteRule("submit freeze exceptions"),
    "exception_withdraw": WriteRule("withdraw freeze exceptions"),
    "exception_approve": WriteRule("approve freeze exceptions"),
    "exception_reject": WriteRule("reject freeze exceptions"),
    "exception_revoke": WriteRule("revoke exceptions"),
    "override_open": WriteRule(
        "open break-glass overrides", object_rule=_lead_anywhere("open break-glass overrides")
    ),
    # Whether this user may review this override (never its opener) is asked in check_permissions.
    "override_review": WriteRule(
        "review break-glass overrides", object_rule=_lead_anywhere("review break-glass overrides")
    ),
}


class ComponentInput(serializers.ModelSerializer[Component]):
    class Meta:
        model = Component
        fields = ["key", "name", "layer", "owner_team", "description"]


class ComponentOutput(serializers.ModelSerializer[Component]):
    class Meta:
        model = Component
        fields = ["id", *ComponentInput.Meta.fields]


@extend_schema(tags=["freeze"])
class ComponentList(generics.ListAPIView[Component]):
    queryset = Component.objects.all()
    serializer_class = ComponentOutput
    filterset_fields = ["layer", "owner_team"]
    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["component_upsert"]

    @extend_schema(request=ComponentInput, responses={201: ComponentOutput}, parameters=[IDEMPOTENCY_KEY])
    @idempotent
    def post(self, request: Request) -> Response:
        data = ComponentInput(data=request.data)
        data.is_valid(raise_exception=True)
        component = services.component_upsert(actor=acting_user(request), **data.validated_data)
        return Response(ComponentOutput(component).data, status=status.HTTP_201_CREATED)


class WallClockDateTimeField(serializers.DateTimeField):
    """Keeps a time given without a UTC offset naive: the service reads it in the window's timezone
    (DRF would read it in the server's zone, UTC, and a Berlin 18:00 would become 19:00)."""

    def enforce_timezone(self, value: datetime) -> datetime:
        if value.tzinfo is None:
            return value
        return super().enforce_timezone(value)


WALL_CLOCK_HELP = (
    "ISO 8601. With an offset (Z, +01:00) it is that instant; without one it is wall-clock time in "
    "`timezone`."
)


class WindowInput(serializers.ModelSerializer[FreezeWindow]):
    program = KeyRelatedField(slug_field="slug", queryset=Program.objects.all())
    starts_at = WallClockDateTimeField(help_text=WALL_CLOCK_HELP)
    ends_at = WallClockDateTimeField(help_text=WALL_CLOCK_HELP)

    class Meta:
        model = FreezeWindow
        fields = [
            "program",
            "name",
            "starts_at",
            "ends_at",
            "default_level",
            "rrule",
            "timezone",
            "occurrence_duration",
        ]


class WindowOutput(serializers.ModelSerializer[FreezeWindow]):
    program = serializers.CharField(source="program.slug", read_only=True)
    local_starts_at = serializers.SerializerMethodField(
        help_text="starts_at on the wall clock of `timezone`."
    )
    local_ends_at = serializers.SerializerMethodField(help_text="ends_at on the wall clock of `timezone`.")

    def _local(self, moment: datetime, window: FreezeWindow) -> str:
        return moment.astimezone(recurrence.zone(window.timezone)).replace(tzinfo=None).isoformat()

    def get_local_starts_at(self, window: FreezeWindow) -> str:
        return self._local(window.starts_at, window)

    def get_local_ends_at(self, window: FreezeWindow) -> str:
        return self._local(window.ends_at, window)

    class Meta:
        model = FreezeWindow
        fields = [
            "id",
            "program",
            "name",
            "starts_at",
            "ends_at",
            "default_level",
            "phase",
            "rrule",
            "timezone",
            "local_starts_at",
            "local_ends_at",
            "occurrence_duration",
        ]


@extend_schema(tags=["freeze"])
class WindowList(generics.ListAPIView[FreezeWindow]):
    """Windows of the programs this user may read (a private program's to its members only)."""

    queryset = FreezeWindow.objects.select_related("program")
    serializer_class = WindowOutput
    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["window_create"]

    def get_queryset(self) -> QuerySet[FreezeWindow]:
        return super().get_queryset().filter(policies.windows_readable(self.request.user))

    @extend_schema(request=WindowInput, responses={201: WindowOutput}, parameters=[IDEMPOTENCY_KEY])
    @idempotent
    def post(self, request: Request) -> Response:
        data = WindowInput(data=request.data)
        data.is_valid(raise_exception=True)
        window = services.window_create(actor=acting_user(request), **data.validated_data)
        return Response(WindowOutput(window).data, status=status.HTTP_201_CREATED)


class LevelsInput(serializers.Serializer[dict[str, Any]]):
    levels = serializers.DictField(
        child=serializers.CharField(),
        help_text='{"component-key": "frozen", …}. Only levels that differ are written; the window\'s '
        "default level removes the component's own level.",
    )
    reason = serializers.CharField(required=False, allow_blank=True, default="")


class LevelOutput(serializers.Serializer[dict[str, Any]]):
    component = serializers.CharField()
    layer = serializers.CharField()
    level = serializers.CharField()
    explicit = serializers.BooleanField(help_text="False when the window's default applies.")


def _levels_response(window: FreezeWindow) -> Response:
    rows = [
        {
            "component": r["component"].key,
            "layer": r["component"].layer,
            "level": r["level"],
            "explicit": r["explicit"],
        }
        for r in selectors.window_levels(window)
    ]
    # many=True takes a list; DRF's stubs type a plain Serializer's instance as one row.
    return Response(LevelOutput(rows, many=True).data)  # type: ignore[arg-type]


@extend_schema(tags=["freeze"])
class WindowLevels(APIView):
    """GET the freeze list of a window; POST {"levels": {...}} sets levels (program leads); ?export=csv|yaml downloads."""

    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["levels_set"]

    @extend_schema(
        parameters=[OpenApiParameter("export", str, enum=["csv", "yaml"])],
        responses=LevelOutput(many=True),
    )
    def get(self, request: Request, pk: int) -> HttpResponse:
        window = get_object_or_404(FreezeWindow.objects.select_related("program"), pk=pk)
        policies.require_read_window(request.user, window, f"freeze window {pk}")
        fmt = request.query_params.get("export", "")
        if fmt in ("csv", "yaml"):
            body = services.freeze_levels_export(window=window, fmt=fmt)
            response = HttpResponse(body, content_type="text/csv" if fmt == "csv" else "application/yaml")
            response["Content-Disposition"] = f'attachment; filename="freeze-{window.pk}.{fmt}"'
            return response
        return _levels_response(window)

    @extend_schema(request=LevelsInput, responses=LevelOutput(many=True), parameters=[IDEMPOTENCY_KEY])
    @idempotent
    def post(self, request: Request, pk: int) -> Response:
        window = get_object_or_404(FreezeWindow, pk=pk)
        data = LevelsInput(data=request.data)
        data.is_valid(raise_exception=True)
        services.freeze_levels_set(actor=acting_user(request), window=window, **data.validated_data)
        return _levels_response(window)


@extend_schema(
    tags=["freeze"],
    request={"multipart/form-data": OpenApiTypes.OBJECT},
    responses=LevelOutput(many=True),
    parameters=[IDEMPOTENCY_KEY],
)
class WindowLevelsImport(APIView):
    """Upload a CSV or YAML export (field `file`) to set the levels it lists."""

    parser_classes = [MultiPartParser, JSONParser, FileUploadParser]
    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["levels_set"]

    @idempotent
    def post(self, request: Request, pk: int) -> Response:
        window = get_object_or_404(FreezeWindow, pk=pk)
        upload = request.data.get("file") if isinstance(request.data, Mapping) else None
        if not isinstance(upload, UploadedFile):
            raise ApplicationError("Upload the CSV or YAML as 'file'.", status=400, field="file")
        services.freeze_levels_import(actor=acting_user(request), window=window, file=upload)
        return _levels_response(window)
