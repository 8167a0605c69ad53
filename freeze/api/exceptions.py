"""Freeze exception API: the list (filtered on the effective status), detail and edit, and one endpoint
per action, each a call of the exception_act service the pages use too."""

from __future__ import annotations

from typing import Any, cast

from django.contrib.auth.models import User
from django.db.models import Prefetch, QuerySet
from django.http import QueryDict
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, serializers, status
from rest_framework.filters import BaseFilterBackend
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.permissions import RoleRequired, scope_refusal
from core.api.serializers import IdRelatedField, KeyRelatedField, ReasonInput
from core.errors import ApplicationError
from core.idempotency import IDEMPOTENCY_KEY, idempotent
from core.roles import acting_user
from freeze import policies, selectors, services
from freeze.api.windows import WRITE_RULES
from freeze.models import Approval, Component, ExpectedImpact, FreezeException, FreezeWindow
from freeze.selectors.exceptions import exception_allowed_actions
from freeze.selectors.impact import ImpactOutcome, exception_impacts
from metrics.models import MetricDefinition


class ApprovalOutput(serializers.Serializer[Approval]):
    approver = serializers.CharField(source="approver.username")
    verdict = serializers.CharField()
    comment = serializers.CharField()
    as_program_lead = serializers.BooleanField()
    created_at = serializers.DateTimeField()
    dismissed_at = serializers.DateTimeField(allow_null=True)


class ExceptionOutput(serializers.ModelSerializer[FreezeException]):
    component = serializers.CharField(source="component.key")
    window = serializers.IntegerField(source="window_id")
    requester = serializers.CharField(source="requester.username")
    last_editor = serializers.CharField(source="last_editor.username")
    status = serializers.SerializerMethodField(
        help_text="The effective status: expired once the change window ended."
    )
    approvals = serializers.SerializerMethodField()
    affected_metrics = serializers.SerializerMethodField(help_text="Keys of the gate metrics it may affect.")
    expected_impacts = serializers.SerializerMethodField(
        help_text="Per affected metric: the expected direction (better, worse, unchanged) and size in %."
    )

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
            "requires_lead_approval",
            "approval_rule",
            "affected_metrics",
            "expected_impacts",
            "submitted_at",
            "decided_at",
            "closing_reason",
            "approvals",
        ]

    def get_status(self, obj: FreezeException) -> str:
        # Lists read the queryset's annotation (the same expression the ?status= filter uses).
        return getattr(obj, "current_status", None) or obj.effective_status

    def get_affected_metrics(self, obj: FreezeException) -> list[str]:
        return sorted({m.key for m in obj.affected_metrics.all()})

    def get_expected_impacts(self, obj: FreezeException) -> list[dict[str, Any]]:
        return [
            {"metric": i.metric.key, "direction": i.direction, "size_pct": i.size_pct}
            for i in sorted(obj.expected_impacts.all(), key=lambda i: i.metric.key)
        ]

    def get_approvals(self, obj: FreezeException) -> list[dict[str, Any]]:
        approvals = getattr(obj, "prefetched_approvals", None)
        if approvals is None:
            approvals = obj.approvals.select_related("approver")
        # many=True takes the rows; DRF's stubs type a plain Serializer's instance as one row.
        return list(ApprovalOutput(approvals, many=True).data)  # type: ignore[arg-type]


def affected_metrics_field() -> serializers.ManyRelatedField:
    """Active gate metrics by key; an unknown key is a 400 naming `affected_metrics`."""
    # many=True: RelatedField.__new__ answers a ManyRelatedField wrapping the KeyRelatedField.
    return cast(
        serializers.ManyRelatedField,
        KeyRelatedField(
            slug_field="key",
            queryset=MetricDefinition.objects.filter(status=MetricDefinition.Status.ACTIVE),
            many=True,
            required=False,
            help_text="Keys of gate metrics the change may affect; their gates re-evaluate when it is approved, "
            "revoked or expires.",
        ),
    )


def expected_impacts_field() -> serializers.ListField:
    # Entries are checked by the service (freeze.services.expected_impacts), which names each entry's
    # field (expected_impacts[0].direction) and knows which metrics the exception names.
    return serializers.ListField(
        child=serializers.DictField(),
        required=False,
        help_text='Per affected metric: {"metric": key, "direction": "better" | "worse" | "unchanged", '
        '"size_pct": percent (for unchanged, the ± band)}. Replaces the whole set; each affected metric '
        "needs one before submission.",
    )


def metric_keys(validated: dict[str, Any]) -> dict[str, Any]:
    """The services take metric keys (the pages send keys too)."""
    if "affected_metrics" in validated:
        return {**validated, "affected_metrics": [m.key for m in validated["affected_metrics"]]}
    return dict(validated)


class ExceptionInput(serializers.Serializer[dict[str, Any]]):
    component = KeyRelatedField(slug_field="key", queryset=Component.objects.all())
    window = IdRelatedField(
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
    affected_metrics = affected_metrics_field()
    expected_impacts = expected_impacts_field()


class ExceptionEditInput(serializers.Serializer[dict[str, Any]]):
    title = serializers.CharField(max_length=160, required=False)
    change = serializers.CharField(required=False)
    justification = serializers.CharField(required=False)
    risk = serializers.ChoiceField(choices=FreezeException.Risk.choices, required=False)
    rollback_plan = serializers.CharField(required=False)
    change_starts_at = serializers.DateTimeField(required=False)
    change_ends_at = serializers.DateTimeField(required=False)
    affected_metrics = affected_metrics_field()
    expected_impacts = expected_impacts_field()


def _with_approvals(queryset: QuerySet[FreezeException]) -> QuerySet[FreezeException]:
    return queryset.prefetch_related(
        "affected_metrics",
        Prefetch("expected_impacts", queryset=ExpectedImpact.objects.select_related("metric")),
        Prefetch(
            "approvals", queryset=Approval.objects.select_related("approver"), to_attr="prefetched_approvals"
        ),
    )


def effective_status_filter(
    queryset: QuerySet[FreezeException], value: str | None
) -> QuerySet[FreezeException]:
    """?status= filters on the effective status, what the answer shows: an approved exception whose
    change window ended is in an `expired` list, never an `approved` one."""
    if not value:
        return queryset
    if value not in FreezeException.Status.values:
        raise ApplicationError(
            f"Unknown status '{value}': use one of {', '.join(FreezeException.Status.values)}.",
            status=400,
            field="status",
        )
    # current_status is with_effective_status's annotation (exceptions_list), which django-stubs does not follow.
    return queryset.filter(current_status=value)  # type: ignore[misc]


class ExceptionListInput(serializers.Serializer[dict[str, Any]]):
    """The list's filters that name rows: an unknown key or id is a 400 naming the parameter."""

    risk = serializers.ChoiceField(choices=FreezeException.Risk.choices, required=False)
    component__key = KeyRelatedField(
        slug_field="key", queryset=Component.objects.all(), required=False, help_text="The component's key"
    )
    window = IdRelatedField(
        queryset=FreezeWindow.objects.all(), required=False, help_text="The freeze window's id"
    )


def readable_windows_only(serializer: serializers.Serializer[Any], user: User) -> None:
    """A private program's window is unknown (400 naming `window`) to whoever may not read it."""
    field = cast("IdRelatedField[FreezeWindow]", serializer.fields["window"])
    field.queryset = FreezeWindow.objects.filter(policies.windows_readable(user))


def exception_list_filter(
    queryset: QuerySet[FreezeException], params: QueryDict, user: User
) -> QuerySet[FreezeException]:
    query = ExceptionListInput(data=params)
    readable_windows_only(query, user)
    query.is_valid(raise_exception=True)
    wanted = query.validated_data
    if "risk" in wanted:
        queryset = queryset.filter(risk=wanted["risk"])
    if "component__key" in wanted:
        queryset = queryset.filter(component=wanted["component__key"])
    if "window" in wanted:
        queryset = queryset.filter(window=wanted["window"])
    return queryset


@extend_schema(
    tags=["freeze"],
    parameters=[
        ExceptionListInput,
        OpenApiParameter(
            "status", str, enum=FreezeException.Status.values, description="The effective status"
        ),
        OpenApiParameter("mine", bool, description="Only my requests"),
        OpenApiParameter("awaiting", bool, description="Only exceptions awaiting my approval"),
    ],
)
class ExceptionList(generics.ListAPIView[FreezeException]):
    serializer_class = ExceptionOutput
    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["exception_create"]
    # exception_list_filter reads the query (its keys through KeyRelatedField)
    filter_backends: list[type[BaseFilterBackend]] = []

    def get_queryset(self) -> QuerySet[FreezeException]:
        params = self.request.query_params
        if params.get("awaiting") in ("1", "true"):
            queryset = selectors.exceptions_awaiting(acting_user(self.request))
        else:
            queryset = selectors.exceptions_list()
        user = acting_user(self.request)
        queryset = queryset.filter(policies.exceptions_readable(user))
        if params.get("mine") in ("1", "true"):
            queryset = queryset.filter(requester=user)
        queryset = exception_list_filter(queryset, params, user)
        return _with_approvals(effective_status_filter(queryset, params.get("status")))

    @extend_schema(request=ExceptionInput, responses={201: ExceptionOutput}, parameters=[IDEMPOTENCY_KEY])
    @idempotent
    def post(self, request: Request) -> Response:
        data = ExceptionInput(data=request.data)
        readable_windows_only(data, acting_user(request))
        data.is_valid(raise_exception=True)
        exception = services.exception_create(actor=acting_user(request), **metric_keys(data.validated_data))
        return Response(ExceptionOutput(exception).data, status=status.HTTP_201_CREATED)


def _exception(pk: int, user: User) -> FreezeException:
    """The exception the URL names; a 404 for one of a private program this user may not read."""
    exception = get_object_or_404(
        _with_approvals(selectors.exceptions_list().select_related("window__program")), pk=pk
    )
    policies.require_read_window(user, exception.window, f"freeze exception {pk}")
    return exception


@extend_schema(tags=["freeze"])
class ExceptionDetail(APIView):
    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["exception_edit"]

    def check_permissions(self, request: Request) -> None:
        if (
            request.user.is_authenticated
            and request.method == "PATCH"
            and scope_refusal(request, self) is None
        ):
            # One of a private program this user may not read does not exist for them: the 404 comes
            # before the write rule's 403, as it does for reading it (the token's scope still first).
            _exception(self.kwargs["pk"], acting_user(request))
        super().check_permissions(request)

    @extend_schema(responses=ExceptionOutput)
    def get(self, request: Request, pk: int) -> Response:
        return Response(ExceptionOutput(_exception(pk, acting_user(request))).data)

    @extend_schema(request=ExceptionEditInput, responses=ExceptionOutput)
    def patch(self, request: Request, pk: int) -> Response:
        user = acting_user(request)
        exception = _exception(pk, user)  # the 404 before the body is read
        data = ExceptionEditInput(data=request.data)
        data.is_valid(raise_exception=True)
        services.exception_edit(
            actor=user,
            exception=exception,
            changes=cast(services.ExceptionChanges, metric_keys(data.validated_data)),
        )
        return Response(ExceptionOutput(_exception(pk, user)).data)


class CommentInput(serializers.Serializer[dict[str, Any]]):
    comment = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000)


def _action_view(name: str, input_serializer: type[serializers.Serializer[dict[str, Any]]]) -> type[APIView]:
    class View(APIView):
        permission_classes = [RoleRequired]
        write_rule = WRITE_RULES[f"exception_{name}"]

        def check_permissions(self, request: Request) -> None:
            super().check_permissions(request)
            if request.method == "POST":
                # The actor rule, before the body too: 404 for no such exception (or one of a private
                # program the user may not read), else 403.
                user = acting_user(request)
                exception_allowed_actions(user, _exception(self.kwargs["pk"], user)).require(name)

        @extend_schema(
            tags=["freeze"],
            request=input_serializer,
            responses=ExceptionOutput,
            operation_id=f"freeze_exceptions_{name}",
            parameters=[IDEMPOTENCY_KEY],
        )
        @idempotent
        def post(self, request: Request, pk: int) -> Response:
            data = input_serializer(data=request.data)
            data.is_valid(raise_exception=True)
            text = data.validated_data.get("reason", data.validated_data.get("comment", ""))
            user = acting_user(request)
            services.exception_act(actor=user, exception=_exception(pk, user), action=name, text=text)
            return Response(ExceptionOutput(_exception(pk, user)).data)

    View.__name__ = f"Exception{name.title()}"
    View.__doc__ = f"{name.title()} a freeze exception."
    return View


ExceptionSubmit = _action_view("submit", CommentInput)
ExceptionApprove = _action_view("approve", CommentInput)
ExceptionReject = _action_view("reject", ReasonInput)
ExceptionWithdraw = _action_view("withdraw", ReasonInput)
ExceptionRevoke = _action_view("revoke", ReasonInput)


class ImpactOutput(serializers.Serializer[ImpactOutcome]):
    metric = serializers.CharField()
    system = serializers.CharField(help_text="Where the change lands: the program's candidate system.")
    state = serializers.CharField(help_text="pending (window not over), not_carried_out, or compared")
    expected = serializers.SerializerMethodField()
    before = serializers.SerializerMethodField(help_text="[since, until) of the baseline window.")
    after = serializers.SerializerMethodField(help_text="[since, until) of the window after the change.")
    after_filling = serializers.SerializerMethodField(help_text="The after-window has not ended yet.")
    comparison = serializers.SerializerMethodField(help_text="The registry's comparison, after vs before.")
    agreement = serializers.CharField(help_text="What happened set against what was expected.")

    def get_expected(self, obj: ImpactOutcome) -> dict[str, Any] | None:
        e = obj.expected
        return {"direction": e.direction, "size_pct": e.size_pct} if e else None

    def get_before(self, obj: ImpactOutcome) -> list[str] | None:
        return [t.isoformat() for t in obj.windows.before] if obj.windows else None

    def get_after(self, obj: ImpactOutcome) -> list[str] | None:
        return [t.isoformat() for t in obj.windows.after] if obj.windows else None

    def get_after_filling(self, obj: ImpactOutcome) -> bool | None:
        return obj.windows.filling if obj.windows else None

    def get_comparison(self, obj: ImpactOutcome) -> dict[str, Any] | None:
        return obj.comparison.as_dict() if obj.comparison else None


@extend_schema(tags=["freeze"], responses=ImpactOutput(many=True))
class ExceptionImpact(APIView):
    """Per gate metric the exception names: what was expected and, after its change window, the
    metric before against after it (freeze.selectors.impact)."""

    permission_classes = [RoleRequired]

    def get(self, request: Request, pk: int) -> Response:
        exception = _exception(pk, acting_user(request))
        rows = exception_impacts(exception)
        return Response(ImpactOutput(rows, many=True).data)  # type: ignore[arg-type]
