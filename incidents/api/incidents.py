"""Incidents API: list / file, retrieve / update, bug classes, MTTD-MTTR, CSV import."""

from __future__ import annotations

from typing import Any, cast

from django.db.models import QuerySet
from django.http import QueryDict
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, serializers, status
from rest_framework.filters import BaseFilterBackend
from rest_framework.pagination import CursorPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.parsers import RawBodyParser
from core.api.permissions import RoleRequired, WriteRule
from core.api.serializers import KeyRelatedField
from core.idempotency import IDEMPOTENCY_KEY, idempotent
from core.roles import FRAMEWORK_ENGINEERS, PROGRAM_LEADS, acting_user
from incidents import importing, selectors, services
from incidents.inputs import IncidentInput
from incidents.models import TIME_FIELDS, BugClass, Incident, Severity
from metrics.models import System

WRITERS = (FRAMEWORK_ENGINEERS, PROGRAM_LEADS)
# Who may write, per action: refused with 403 before the body is read (core.api.permissions).
WRITE_RULES = {
    "incident_file": WriteRule("file incidents", WRITERS),
    "incident_update": WriteRule("update incidents", WRITERS),
    "incident_import": WriteRule("import incidents", WRITERS),
}


class IncidentOutput(serializers.ModelSerializer[Incident]):
    system = serializers.CharField(source="system.key")
    component = serializers.CharField(source="component.key")
    workload = serializers.CharField(source="workload.key", allow_null=True, default=None)
    bug_class = serializers.CharField(source="bug_class.key")
    reporter = serializers.CharField(source="reporter.username", allow_null=True, default=None)
    # A CharField, not a ChoiceField: the schema's enum named "state" belongs to freeze exceptions.
    state = serializers.CharField(read_only=True, help_text="open, mitigated or resolved")

    class Meta:
        model = Incident
        fields = [
            "id",
            "title",
            "state",
            "system",
            "component",
            "workload",
            "bug_class",
            "severity",
            *TIME_FIELDS,
            "troubleshooting",
            "checklist",
            "link",
            "owner_team",
            "recurrence_of",
            "alert_fingerprint",
            "reporter",
            "created_at",
            "updated_at",
        ]


class IncidentListInput(serializers.Serializer[dict[str, Any]]):
    """The list's and MTTR's filters; an unknown system or bug class key is a 400 naming it."""

    system = KeyRelatedField(
        slug_field="key", queryset=System.objects.all(), required=False, help_text="System key"
    )
    bug_class = KeyRelatedField(
        slug_field="key", queryset=BugClass.objects.all(), required=False, help_text="Bug class key"
    )
    severity = serializers.ChoiceField(choices=Severity.choices, required=False)
    since = serializers.DateTimeField(required=False)
    until = serializers.DateTimeField(required=False)
    state = serializers.ChoiceField(choices=["open", "resolved"], required=False)


def incident_filter(params: QueryDict) -> selectors.IncidentFilter:
    """The query string as a filter; a bad value is a 400 naming its parameter."""
    query = IncidentListInput(data=params)
    query.is_valid(raise_exception=True)
    wanted = dict(query.validated_data)
    for name in ("system", "bug_class"):
        if name in wanted:
            wanted[name] = wanted[name].key
    return selectors.IncidentFilter(**wanted)


class NewestOpened(CursorPagination):
    ordering = ("-opened_at", "-id")
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500


FILTER_PARAMETERS = [
    OpenApiParameter("system", str, description="System key"),
    OpenApiParameter("bug_class", str, description="Bug class key"),
    OpenApiParameter("severity", str, enum=Severity.values),
    OpenApiParameter("since", OpenApiTypes.DATETIME, description="Opened at or after"),
    OpenApiParameter("until", OpenApiTypes.DATETIME, description="Opened before"),
]


@extend_schema(
    tags=["incidents"],
    parameters=[*FILTER_PARAMETERS, OpenApiParameter("state", str, enum=["open", "resolved"])],
)
class IncidentList(generics.ListAPIView[Incident]):
    """Incidents, newest opened first (cursor pages); POST files one (engineers and leads)."""

    serializer_class = IncidentOutput
    pagination_class = NewestOpened
    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["incident_file"]
    filter_backends: list[type[BaseFilterBackend]] = []

    def get_queryset(self) -> QuerySet[Incident]:
        return selectors.incidents_list(incident_filter(self.request.query_params))

    @extend_schema(request=IncidentInput, responses={201: IncidentOutput}, parameters=[IDEMPOTENCY_KEY])
    @idempotent
    def post(self, request: Request) -> Response:
        data = IncidentInput(data=request.data)
        data.is_valid(raise_exception=True)
        incident = services.incident_file(actor=acting_user(request), **data.validated_data)
        return Response(IncidentOutput(incident).data, status=status.HTTP_201_CREATED)


@extend_schema(tags=["incidents"])
class IncidentDetail(APIView):
    """One incident; PATCH changes the fields sent (setting resolved_at resolves it)."""

    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["incident_update"]

    def _incident(self) -> Incident:
        return get_object_or_404(selectors.incidents_list(), pk=self.kwargs["pk"])

    @extend_schema(responses=IncidentOutput)
    def get(self, request: Request, pk: int) -> Response:
        return Response(IncidentOutput(self._incident()).data)

    @extend_schema(request=IncidentInput(partial=True), responses=IncidentOutput)
    def patch(self, request: Request, pk: int) -> Response:
        incident = self._incident()
        data = IncidentInput(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        incident = services.incident_update(
            actor=acting_user(request),
            incident=incident,
            changes=cast(services.IncidentChanges, dict(data.validated_data)),
        )
        return Response(IncidentOutput(selectors.incidents_list().get(pk=incident.pk)).data)


class BugClassOutput(serializers.ModelSerializer[BugClass]):
    class Meta:
        model = BugClass
        fields = ["key", "name", "runbook"]


@extend_schema(tags=["incidents"])
class BugClassList(generics.ListAPIView[BugClass]):
    """The bug-class vocabulary with each class's runbook steps."""

    serializer_class = BugClassOutput
    permission_classes = [RoleRequired]
    pagination_class = None
    filter_backends: list[type[BaseFilterBackend]] = []

    def get_queryset(self) -> QuerySet[BugClass]:
        return selectors.bug_classes_list()


class SpeedOutput(serializers.Serializer[selectors.Speed]):
    bug_class = serializers.CharField()
    bug_class_name = serializers.CharField()
    system = serializers.CharField()
    count = serializers.IntegerField(help_text="Incidents opened in the window.")
    resolved = serializers.IntegerField()
    mttd_hours = serializers.FloatField(allow_null=True, help_text="Mean hours from opened to detected.")
    mttr_hours = serializers.FloatField(allow_null=True, help_text="Mean hours from opened to resolved.")
    mttr_p50_hours = serializers.FloatField(
        allow_null=True, help_text="Median hours from opened to resolved."
    )


@extend_schema(tags=["incidents"], parameters=FILTER_PARAMETERS, responses=SpeedOutput(many=True))
class IncidentSpeed(APIView):
    """MTTD and MTTR per bug class × system over incidents opened in the window."""

    permission_classes = [RoleRequired]

    def get(self, request: Request) -> Response:
        rows = selectors.incident_speed(incident_filter(request.query_params))
        # many=True takes a list; DRF's stubs type a plain Serializer's instance as one row.
        return Response(SpeedOutput(rows, many=True).data)  # type: ignore[arg-type]


class RecurrenceOutput(serializers.Serializer[selectors.Recurrence]):
    bug_class = serializers.CharField()
    bug_class_name = serializers.CharField()
    system = serializers.CharField()
    month = serializers.DateTimeField(help_text="The month's first day, 00:00 UTC (by opened_at).")
    count = serializers.IntegerField(help_text="Incidents of the class opened that month.")
    recurrences = serializers.IntegerField(help_text="Of them, those recurring an earlier incident.")
    rate = serializers.FloatField(help_text="recurrences / count (0–1); lower is better.")


@extend_schema(tags=["incidents"], parameters=FILTER_PARAMETERS, responses=RecurrenceOutput(many=True))
class IncidentRecurrence(APIView):
    """The recurrence rate ("the same pitfall again") per bug class × system × month, newest first."""

    permission_classes = [RoleRequired]

    def get(self, request: Request) -> Response:
        rows = selectors.recurrence_by_month(incident_filter(request.query_params))
        return Response(RecurrenceOutput(rows, many=True).data)  # type: ignore[arg-type]


@extend_schema(
    tags=["incidents"],
    request={"text/csv": OpenApiTypes.STR},
    responses={201: IncidentOutput(many=True)},
    parameters=[IDEMPOTENCY_KEY],
)
class IncidentImport(APIView):
    """A CSV of incidents (header row: the fields of a POST), all-or-nothing: a 422 lists every bad
    row as {index, field, message}."""

    parser_classes = [RawBodyParser]
    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["incident_import"]

    @idempotent
    def post(self, request: Request) -> Response:
        body = request.data if isinstance(request.data, bytes) else b""
        incidents = importing.incidents_import(actor=acting_user(request), body=body)
        return Response(IncidentOutput(incidents, many=True).data, status=status.HTTP_201_CREATED)
