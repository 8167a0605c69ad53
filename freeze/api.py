"""Freeze API: components, windows and levels, and the exception workflow (the check: api_check)."""

from __future__ import annotations

from collections.abc import Mapping

from django.core.files.uploadedfile import UploadedFile
from django.db.models import Prefetch
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
from core.api.serializers import KeyRelatedField, ReasonInput
from core.errors import ApplicationError
from core.idempotency import IDEMPOTENCY_KEY, idempotent
from core.roles import FRAMEWORK_ENGINEERS, PROGRAM_LEADS
from freeze import selectors, services
from freeze.models import Approval, Component, FreezeException, FreezeWindow
from program.models import Program

# Who may write, per action: refused with 403 before the body is read (core.api.permissions).
# No roles: anyone signed in, and the view asks exception_actor_check (requester; approvers).
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
    "override_open": WriteRule("open break-glass overrides", (PROGRAM_LEADS,)),
    "override_review": WriteRule("review break-glass overrides", (PROGRAM_LEADS,)),
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
            "occurrence_duration",
        ]
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
    levels = serializers.DictField(
        child=serializers.CharField(),
        help_text='{"component-key": "frozen", …}. Only levels that differ are written; the window\'s '
        "default level removes the component's own level.",
    )
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
        for r in selectors.window_levels(window)
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
        services.freeze_levels_import(actor=request.user, window=window, file=upload)
        return _levels_response(window)


class ApprovalOutput(serializers.Serializer):
    approver = serializers.CharField(source="approver.username")
    verdict = serializers.CharField()
    comment = serializers.CharField()
    as_program_lead = serializers.BooleanField()
    created_at = serializers.DateTimeField()
    dismissed_at = serializers.DateTimeField(allow_null=True)


class ExceptionOutput(serializers.ModelSerializer):
    component = serializers.CharField(source="component.key")
    window = serializers.IntegerField(source="window_id")
    requester = serializers.CharField(source="requester.username")
    last_editor = serializers.CharField(source="last_editor.username")
    status = serializers.CharField(source="effective_status")
    approvals = serializers.SerializerMethodField()

    class Meta:
        model = FreezeException
        fields = [
            "id",
            "component",
            "window",
            "requester",
            "last_editor",
            "title",
            "change",
            "justification",
            "risk",
            "rollback_plan",
            "change_starts_at",
            "change_ends_at",
            "status",
            "required_approvals",
            "submitted_at",
            "decided_at",
            "closing_reason",
            "approvals",
        ]

    def get_approvals(self, obj) -> list[dict]:
        approvals = getattr(obj, "prefetched_approvals", None)
        if approvals is None:
            approvals = obj.approvals.select_related("approver")
        return ApprovalOutput(approvals, many=True).data


class ExceptionInput(serializers.Serializer):
    component = KeyRelatedField(slug_field="key", queryset=Component.objects.all())
    window = serializers.PrimaryKeyRelatedField(
        queryset=FreezeWindow.objects.all(),
        required=False,
        help_text="Defaults to the window in force at change_starts_at.",
    )
    title = serializers.CharField(max_length=160)
    change = serializers.CharField()
    justification = serializers.CharField()
    risk = serializers.ChoiceField(choices=FreezeException.Risk.choices)
    rollback_plan = serializers.CharField()
    change_starts_at = serializers.DateTimeField()
    change_ends_at = serializers.DateTimeField()


class ExceptionEdit(serializers.Serializer):
    title = serializers.CharField(max_length=160, required=False)
    change = serializers.CharField(required=False)
    justification = serializers.CharField(required=False)
    risk = serializers.ChoiceField(choices=FreezeException.Risk.choices, required=False)
    rollback_plan = serializers.CharField(required=False)
    change_starts_at = serializers.DateTimeField(required=False)
    change_ends_at = serializers.DateTimeField(required=False)


def _with_approvals(queryset):
    return queryset.prefetch_related(
        Prefetch(
            "approvals", queryset=Approval.objects.select_related("approver"), to_attr="prefetched_approvals"
        )
    )


@extend_schema(
    tags=["freeze"],
    parameters=[
        OpenApiParameter("mine", bool, description="Only my requests"),
        OpenApiParameter("awaiting", bool, description="Only exceptions awaiting my approval"),
    ],
)
class ExceptionList(generics.ListAPIView):
    serializer_class = ExceptionOutput
    filterset_fields = ["status", "risk", "component__key", "window"]
    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["exception_create"]

    def get_queryset(self):
        params = self.request.query_params
        if params.get("awaiting") in ("1", "true"):
            queryset = selectors.exceptions_awaiting(self.request.user)
        else:
            queryset = selectors.exceptions_list()
        if params.get("mine") in ("1", "true"):
            queryset = queryset.filter(requester=self.request.user)
        return _with_approvals(queryset)

    @extend_schema(request=ExceptionInput, responses={201: ExceptionOutput}, parameters=[IDEMPOTENCY_KEY])
    @idempotent
    def post(self, request):
        data = ExceptionInput(data=request.data)
        data.is_valid(raise_exception=True)
        exception = services.exception_create(requester=request.user, **data.validated_data)
        return Response(ExceptionOutput(exception).data, status=status.HTTP_201_CREATED)


def _exception(pk: int) -> FreezeException:
    return get_object_or_404(_with_approvals(selectors.exceptions_list()), pk=pk)


@extend_schema(tags=["freeze"])
class ExceptionDetail(APIView):
    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["exception_edit"]

    @extend_schema(responses=ExceptionOutput)
    def get(self, request, pk):
        return Response(ExceptionOutput(_exception(pk)).data)

    @extend_schema(request=ExceptionEdit, responses=ExceptionOutput)
    def patch(self, request, pk):
        data = ExceptionEdit(data=request.data)
        data.is_valid(raise_exception=True)
        services.exception_edit(editor=request.user, exception=_exception(pk), changes=data.validated_data)
        return Response(ExceptionOutput(_exception(pk)).data)


class CommentInput(serializers.Serializer):
    comment = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000)


def _transition_view(name: str, call, input_serializer):
    class View(APIView):
        permission_classes = [RoleRequired]
        write_rule = WRITE_RULES[f"exception_{name}"]

        def check_permissions(self, request):
            super().check_permissions(request)
            if request.method == "POST":
                # The object-level rules, before the body too: 404 for no such exception, else 403.
                services.exception_actor_check(
                    user=request.user, exception=_exception(self.kwargs["pk"]), action=name
                )

        @extend_schema(
            tags=["freeze"],
            request=input_serializer,
            responses=ExceptionOutput,
            operation_id=f"freeze_exceptions_{name}",
            parameters=[IDEMPOTENCY_KEY],
        )
        @idempotent
        def post(self, request, pk):
            data = input_serializer(data=request.data)
            data.is_valid(raise_exception=True)
            call(request.user, _exception(pk), data.validated_data)
            return Response(ExceptionOutput(_exception(pk)).data)

    View.__name__ = f"Exception{name.title()}"
    View.__doc__ = f"{name.title()} a freeze exception."
    return View


ExceptionSubmit = _transition_view(
    "submit", lambda u, e, d: services.exception_submit(requester=u, exception=e), CommentInput
)
ExceptionApprove = _transition_view(
    "approve",
    lambda u, e, d: services.exception_approve(approver=u, exception=e, comment=d["comment"]),
    CommentInput,
)
ExceptionReject = _transition_view(
    "reject",
    lambda u, e, d: services.exception_reject(approver=u, exception=e, reason=d["reason"]),
    ReasonInput,
)
ExceptionWithdraw = _transition_view(
    "withdraw",
    lambda u, e, d: services.exception_withdraw(requester=u, exception=e, reason=d["reason"]),
    ReasonInput,
)
ExceptionRevoke = _transition_view(
    "revoke", lambda u, e, d: services.exception_revoke(lead=u, exception=e, reason=d["reason"]), ReasonInput
)
