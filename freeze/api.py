"""Freeze API: components, windows and levels, the freeze check, and the exception workflow."""

from __future__ import annotations

from collections.abc import Mapping

from django.core.files.uploadedfile import UploadedFile
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, serializers, status
from rest_framework.parsers import FileUploadParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.parsers import JSONParser
from core.api.permissions import RoleRequired, WriteRule
from core.api.serializers import KeyRelatedField
from core.errors import ApplicationError
from core.idempotency import IDEMPOTENCY_KEY, idempotent
from core.roles import FRAMEWORK_ENGINEERS, PROGRAM_LEADS
from freeze import selectors, services
from freeze.models import Component, FreezeWindow
from program.models import Program

# Who may write, per action: refused with 403 before the body is read (core.api.permissions).
# No roles: anyone signed in, and the view asks exception_allowed_actions (requester; approvers).
WRITE_RULES = {
    "component_upsert": WriteRule("manage components", (PROGRAM_LEADS,)),
    "window_create": WriteRule("create freeze windows", (PROGRAM_LEADS,)),
    "levels_set": WriteRule("set freeze levels", (PROGRAM_LEADS,)),
    "exception_create": WriteRule("file freeze exceptions", (FRAMEWORK_ENGINEERS,)),
    "exception_edit": WriteRule("edit freeze exceptions", (FRAMEWORK_ENGINEERS,)),
    "exception_submit": WriteRule("submit freeze exceptions"),
    "exception_withdraw": WriteRule("withdraw freeze exceptions"),
    "exception_approve": WriteRule("approve freeze exceptions"),
    "exception_reject": WriteRule("reject freeze exceptions"),
    "exception_revoke": WriteRule("revoke exceptions", (PROGRAM_LEADS,)),
}


class ComponentSerializer(serializers.ModelSerializer):
    class Meta:
        model = Component
        fields = ["id", "key", "name", "layer", "owner_team", "description"]


@extend_schema(tags=["freeze"])
class ComponentList(generics.ListAPIView):
    queryset = Component.objects.all()
    serializer_class = ComponentSerializer
    filterset_fields = ["layer", "owner_team"]
    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["component_upsert"]

    @extend_schema(
        request=ComponentSerializer, responses={201: ComponentSerializer}, parameters=[IDEMPOTENCY_KEY]
    )
    @idempotent
    def post(self, request):
        data = ComponentSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        component = services.component_upsert(actor=request.user, **data.validated_data)
        return Response(ComponentSerializer(component).data, status=status.HTTP_201_CREATED)


class WindowSerializer(serializers.ModelSerializer):
    program = KeyRelatedField(slug_field="slug", queryset=Program.objects.all())

    class Meta:
        model = FreezeWindow
        fields = ["id", "program", "name", "starts_at", "ends_at", "default_level", "phase"]
        read_only_fields = ["phase"]


@extend_schema(tags=["freeze"])
class WindowList(generics.ListAPIView):
    queryset = FreezeWindow.objects.select_related("program")
    serializer_class = WindowSerializer
    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["window_create"]

    @extend_schema(request=WindowSerializer, responses={201: WindowSerializer}, parameters=[IDEMPOTENCY_KEY])
    @idempotent
    def post(self, request):
        data = WindowSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        window = services.window_create(actor=request.user, **data.validated_data)
        return Response(WindowSerializer(window).data, status=status.HTTP_201_CREATED)


class LevelsInput(serializers.Serializer):
    levels = serializers.DictField(child=serializers.CharField(), help_text='{"component-key": "frozen", …}')
    reason = serializers.CharField(required=False, allow_blank=True, default="")


class LevelRow(serializers.Serializer):
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
        for r in selectors.freeze_list(window)
    ]
    return Response(LevelRow(rows, many=True).data)


@extend_schema(tags=["freeze"])
class WindowLevels(APIView):
    """GET the freeze list of a window; POST {"levels": {...}} sets levels (program leads); ?export=csv|yaml downloads."""

    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["levels_set"]

    @extend_schema(
        parameters=[OpenApiParameter("export", str, enum=["csv", "yaml"])],
        responses=LevelRow(many=True),
    )
    def get(self, request, pk):
        window = get_object_or_404(FreezeWindow, pk=pk)
        fmt = request.query_params.get("export", "")
        if fmt in ("csv", "yaml"):
            body = services.freeze_levels_export(window=window, fmt=fmt)
            response = HttpResponse(body, content_type="text/csv" if fmt == "csv" else "application/yaml")
            response["Content-Disposition"] = f'attachment; filename="freeze-{window.pk}.{fmt}"'
            return response
        return _levels_response(window)

    @extend_schema(request=LevelsInput, responses=LevelRow(many=True), parameters=[IDEMPOTENCY_KEY])
    @idempotent
    def post(self, request, pk):
        window = get_object_or_404(FreezeWindow, pk=pk)
        data = LevelsInput(data=request.data)
        data.is_valid(raise_exception=True)
        services.freeze_levels_set(actor=request.user, window=window, **data.validated_data)
        return _levels_response(window)


@extend_schema(
    tags=["freeze"],
    request={"multipart/form-data": OpenApiTypes.OBJECT},
    responses=LevelRow(many=True),
    parameters=[IDEMPOTENCY_KEY],
)
class WindowLevelsImport(APIView):
    """Upload a CSV or YAML export (field `file`) to set the levels it lists."""

    parser_classes = [MultiPartParser, JSONParser, FileUploadParser]
    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["levels_set"]

    @idempotent
    def post(self, request, pk):
        window = get_object_or_404(FreezeWindow, pk=pk)
        upload = request.data.get("file") if isinstance(request.data, Mapping) else None
        if not isinstance(upload, UploadedFile):
            raise ApplicationError("Upload the CSV or YAML as 'file'.", status=400, field="file")
        name = getattr(upload, "name", "")
        fmt = "yaml" if name.endswith((".yaml", ".yml")) else "csv"
        try:
            text = upload.read().decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise ApplicationError("The file is not UTF-8.", status=400, field="file") from exc
        services.freeze_levels_import(actor=request.user, window=window, text=text, fmt=fmt)
        return _levels_response(window)


class CheckQuery(serializers.Serializer):
    component = serializers.SlugField()
    at = serializers.DateTimeField(required=False)


class CheckOutput(serializers.Serializer):
    component = serializers.CharField()
    at = serializers.DateTimeField()
    decision = serializers.ChoiceField(choices=["allowed", "needs_approval", "forbidden"])
    level = serializers.CharField()
    window = serializers.DictField(allow_null=True)
    exception = serializers.DictField(allow_null=True)
    reason = serializers.CharField()


def check_as_dict(check: selectors.FreezeCheck) -> dict:
    return {
        "component": check.component.key,
        "at": check.at,
        "decision": check.decision,
        "level": check.level,
        "window": None
        if check.window is None
        else {
            "id": check.window.pk,
            "name": check.window.name,
            "starts_at": check.window.starts_at,
            "ends_at": check.window.ends_at,
        },
        "exception": None
        if check.exception is None
        else {
            "id": check.exception.pk,
            "title": check.exception.title,
            "valid_until": check.exception.change_ends_at,
        },
        "reason": check.reason,
    }


@extend_schema(tags=["freeze"], parameters=[CheckQuery], responses=CheckOutput)
class FreezeCheckView(APIView):
    """May this component change now (or at `at`)? For CI pipelines: one call, one answer."""

    def get(self, request):
        query = CheckQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        component = Component.objects.filter(key=query.validated_data["component"]).first()
        if component is None:
            raise ApplicationError(
                f"Unknown component '{query.validated_data['component']}'.", status=404, field="component"
            )
        check = selectors.freeze_check(component, query.validated_data.get("at"))
        return Response(CheckOutput(check_as_dict(check)).data)
