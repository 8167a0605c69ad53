"""Metrics API: the observations list and batch ingest."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any, cast

import django_filters
from django.conf import settings
from django.db import models
from django.db.models import F, Func, QuerySet, Value
from django.db.models.lookups import GreaterThanOrEqual, LessThan
from django.http import StreamingHttpResponse
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django_filters.rest_framework import DjangoFilterBackend
from django_filters.utils import translate_validation
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.pagination import Cursor, CursorPagination
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from core.api.errors import PayloadTooLarge
from core.api.filters import UtcDateTimeFilter
from core.api.parsers import RawBodyParser
from core.api.permissions import RoleRequired
from core.api.renderers import CSVRenderer, csv_lines
from core.errors import ApplicationError
from core.idempotency import IDEMPOTENCY_KEY, REPLAY_HEADER, idempotency_key
from core.roles import acting_user
from metrics import ingest, observation_rows, selectors
from metrics.api.write_rules import WRITE_RULES
from metrics.models import Observation, System, Workload
from metrics.units import value_in_unit


class ObservationOutput(serializers.ModelSerializer[Observation]):
    """`value` in `unit`, the definition's (as stored and compared); `arrival_value` in `arrival_unit`,
    as it was sent."""

    metric = serializers.CharField(source="definition.ref")
    system = serializers.CharField(source="system.key")
    workload = serializers.CharField(source="workload.key")
    value = serializers.FloatField(help_text="In `unit`, the definition's unit.")
    unit = serializers.CharField(source="definition.unit", help_text="The definition's unit.")
    arrival_value = serializers.SerializerMethodField(help_text="The value as sent, in `arrival_unit`.")
    arrival_unit = serializers.SerializerMethodField(help_text="The unit the value was sent in.")

    class Meta:
        model = Observation
        fields = [
            "metric",
            "system",
            "workload",
            "value",
            "unit",
            "arrival_value",
            "arrival_unit",
            "observed_at",
            "run_id",
            "source",
            "tags",
            "batch",
        ]

    def get_arrival_unit(self, obj: Observation) -> str:
        return obj.unit or obj.definition.unit

    def get_arrival_value(self, obj: Observation) -> float:
        return value_in_unit(obj.value, obj.definition.unit, self.get_arrival_unit(obj))


class UtcTimestamp(models.DateTimeField):  # type: ignore[type-arg]  # generic in the stubs only
    """`timezone('UTC', observed_at)` (a timestamp without time zone) read back as the aware UTC moment
    it is, and compared as one: so a cursor's position is written as observed_at's would be."""

    def from_db_value(self, value: datetime | None, expression: Any, connection: Any) -> datetime | None:
        return None if value is None else value.replace(tzinfo=UTC)

    def get_db_prep_value(self, value: Any, connection: Any, prepared: bool = False) -> Any:
        moment = value if prepared else self.get_prep_value(value)
        return moment.astimezone(UTC).replace(tzinfo=None) if isinstance(moment, datetime) else moment


# A list across every metric with no bound of its own (no since, until, run or batch) reads this much:
# the newest rows, as a dashboard asks, never a walk back through every month (an API change, README).
DEFAULT_SPAN = timedelta(days=7)
BOUNDS = ("since", "until", "run_id", "batch")

# The expression the observation_utc_time index holds (metrics.models.UTC_TIME).
UTC_TIME = Func(Value("UTC"), F("observed_at"), function="timezone", output_field=UtcTimestamp())


class ObservationFilter(django_filters.FilterSet):  # type: ignore[misc]  # django-filter is untyped; --strict only
    """An unknown metric, system or workload is a 400 naming the parameter, not an empty page."""

    metric = django_filters.CharFilter(method="filter_metric", help_text="key (active version) or key@N")
    system = django_filters.CharFilter(method="filter_reference", help_text="System key.")
    workload = django_filters.CharFilter(method="filter_reference", help_text="Workload key.")
    since = UtcDateTimeFilter(field_name="observed_at", lookup_expr="gte")
    until = UtcDateTimeFilter(field_name="observed_at", lookup_expr="lt")

    class Meta:
        model = Observation
        fields = ["run_id", "batch", "source"]

    # The window's start as read, the default span included (an export's file name says it).
    window_start: datetime | None = None

    def filter_metric(self, queryset: QuerySet[Observation], name: str, value: str) -> QuerySet[Observation]:
        return queryset.filter(definition=selectors.definition_resolve(value, field=name))

    def filter_reference(
        self, queryset: QuerySet[Observation], name: str, value: str
    ) -> QuerySet[Observation]:
        # A dict of the two classes is typed by their join, type[Model], which has no `objects`.
        model = cast("type[System] | type[Workload]", {"system": System, "workload": Workload}[name])
        found = model.objects.filter(key=value).values_list("pk", flat=True).first()
        if found is None:
            raise ApplicationError(f"Unknown {name} '{value}'.", status=400, field=name)
        return queryset.filter(**{f"{name}_id": found})

    def filter_queryset(self, queryset: QuerySet[Observation]) -> QuerySet[Observation]:
        queryset = super().filter_queryset(queryset)
        window = self.form.cleaned_data
        self.window_start = window.get("since")
        if window.get("metric"):
            return queryset
        since = window.get("since")
        if since is None and not any(window.get(bound) not in (None, "") for bound in BOUNDS):
            since = timezone.now() - DEFAULT_SPAN
            queryset = queryset.filter(observed_at__gte=since)
        # Across every metric the page is read from observation_utc_time (NewestFirst): the window written
        # on that expression too is where the index scan starts and stops (the bounds on observed_at prune
        # the months). Without it `until` read every newer row of its month: 10 ms a page at 1M rows.
        if since is not None:
            queryset = queryset.filter(GreaterThanOrEqual(UTC_TIME, since))
        if window.get("until") is not None:
            queryset = queryset.filter(LessThan(UTC_TIME, window["until"]))
        self.window_start = since
        return queryset


ORDERING = ("-observed_at", "definition_id", "system_id", "workload_id", "run_id")
# Across every metric: the same order on the UTC time, which observation_utc_time serves; no index
# holds observed_at alone (it would tempt the planner away from a metric's own index).
ACROSS_METRICS = ("-utc_time", *ORDERING[1:])


class NewestFirst(CursorPagination):
    """Pages by cursor without a total: over millions of observations the count cost more than the
    page. Ties on observed_at are broken by the rest of the natural key."""

    ordering = ORDERING
    page_size = 100
    page_size_query_param = "page_size"
    max_page_size = 1000

    def paginate_queryset(
        self, queryset: QuerySet[Any, Any], request: Request, view: APIView | None = None
    ) -> list[Any] | None:
        if request.query_params.get("metric"):
            self.ordering = ORDERING  # observation_definition_time
        else:
            queryset = queryset.annotate(utc_time=UTC_TIME)
            self.ordering = ACROSS_METRICS
            cursor = self.decode_cursor(request)
            if cursor is not None and cursor.position is not None:
                # DRF bounds the page on utc_time, where the index scan starts; the same bound on
                # observed_at, the partition key, prunes the months beyond the cursor.
                side = "gte" if cursor.reverse else "lte"
                queryset = queryset.filter(**{f"observed_at__{side}": cursor.position})
        return super().paginate_queryset(queryset, request, view)

    def decode_cursor(self, request: Request) -> Cursor | None:
        cursor = super().decode_cursor(request)
        if cursor is not None and cursor.position is not None:
            try:
                moment = parse_datetime(str(cursor.position))  # the stubs type it int
            except ValueError:  # well formed, yet no such moment (month 13)
                moment = None
            if moment is None:
                raise NotFound(self.invalid_cursor_message)
        return cursor


@extend_schema(tags=["metrics"])
class ObservationList(generics.ListAPIView[Observation]):
    """Newest first. Filter by metric (and system, workload, time window or run) to keep pages fast.
    Without `metric`, `since`, `until`, `run_id` or `batch`, only the last 7 days are listed."""

    queryset = selectors.observations_list()
    serializer_class = ObservationOutput  # the schema; rows are written by metrics.observation_rows
    filterset_class = ObservationFilter
    pagination_class = NewestFirst

    # JSON, or the same columns as CSV (`?format=csv`, `Accept: text/csv`): one page, the next in `Link`.
    # api_settings imports the setting's dotted paths as classes; the stubs type it as the strings.
    renderer_classes = [*cast("list[type[BaseRenderer]]", api_settings.DEFAULT_RENDERER_CLASSES), CSVRenderer]
    csv_columns = ObservationOutput.Meta.fields

    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        rows = self.paginate_queryset(observation_rows.page_rows(self.filter_queryset(self.get_queryset())))
        # pagination_class is set, so there is always a page (None means no paginator); its rows are dicts.
        response = self.get_paginated_response(
            observation_rows.rows_as_json(cast("list[dict[str, Any]]", rows))
        )
        next_page = cast(NewestFirst, self.paginator).get_next_link()
        if next_page:
            response["Link"] = f'<{next_page}>; rel="next"'
        if request.accepted_renderer.format == CSVRenderer.format:
            response["Content-Disposition"] = 'attachment; filename="observations.csv"'
        return response


class IngestOutput(serializers.Serializer[dict[str, Any]]):
    batch = serializers.IntegerField()
    received = serializers.IntegerField()
    inserted = serializers.IntegerField()
    duplicates = serializers.IntegerField()
    definitions = serializers.ListField(child=serializers.CharField())


@extend_schema(
    tags=["metrics"],
    request={
        "application/json": OpenApiTypes.OBJECT,
        "application/x-ndjson": OpenApiTypes.STR,
        "text/csv": OpenApiTypes.STR,
    },
    parameters=[IDEMPOTENCY_KEY],
    responses={201: IngestOutput},
)
class ObservationBatch(APIView):
    """All-or-nothing batch ingest. A 422 lists every bad row as {index, field, message}."""

    parser_classes = [RawBodyParser]
    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["observations_ingest"]
    token_scope = "ingest"

    def post(self, request: Request) -> Response:
        if int(request.META.get("CONTENT_LENGTH") or 0) > settings.DATA_UPLOAD_MAX_MEMORY_SIZE:
            raise PayloadTooLarge(
                f"The body exceeds {settings.DATA_UPLOAD_MAX_MEMORY_SIZE:,} bytes; send smaller batches."
            )
        # The service replays a repeated Idempotency-Key itself, in the batch's own transaction.
        result = ingest.observations_ingest(
            body=request.data if isinstance(request.data, bytes) else b"",
            content_type=request.content_type or "",
            actor=acting_user(request),  # RoleRequired lets only a signed-in user write
            source=request.headers.get("User-Agent", "")[:100],
            idempotency_key=idempotency_key(request),
        )
        headers = {REPLAY_HEADER: "true"} if result.replayed else None
        return Response(result.as_dict(), status=status.HTTP_201_CREATED, headers=headers)


# An export answers at most this many rows (settings.OBSERVATION_EXPORT_MAX_ROWS); beyond it, a 400.
MSG_EXPORT_TOO_LARGE = (
    "This export holds more than {limit:,} observations; narrow it with since and until (or metric, "
    "system, workload, run_id)."
)
EXPORT_CHUNK = 2000  # rows per fetch from the server-side cursor and per piece of the answer


@extend_schema(
    tags=["metrics"],
    responses={
        (200, "text/csv"): OpenApiResponse(
            OpenApiTypes.STR, description="A header row, then every observation the filters select."
        )
    },
)
class ObservationExport(generics.ListAPIView[Observation]):
    """Every observation the list's filters select, newest first, as one CSV download (streamed): the
    list's columns — `value` in `unit`, the definition's; times ISO 8601 in UTC; tags as JSON — which
    `POST /api/v1/observations/batch/` (text/csv) and `import_observations` read back. Without `metric`,
    `since`, `until`, `run_id` or `batch`, only the last 7 days, as the list. More rows than the export
    limit (1,000,000 by default) is a 400 naming `since`."""

    # A ListAPIView so that the schema lists the filters, from the same ObservationFilter as the list.
    queryset = selectors.observations_list()
    serializer_class = ObservationOutput  # the schema of a row; rows are written by observation_rows
    filterset_class = ObservationFilter
    pagination_class = None
    # The answer is CSV whatever is asked; these let `Accept: text/csv` and `?format=csv` in (not a 406
    # or 404), and write an error in the format asked for, as the list does.
    renderer_classes = ObservationList.renderer_classes

    # A download streamed as it is read, not a Response that DRF renders once the rows are all in memory.
    def list(self, request: Request, *args: Any, **kwargs: Any) -> StreamingHttpResponse:  # type: ignore[override]
        backend = DjangoFilterBackend()
        filterset = backend.get_filterset(request, self.get_queryset(), self)
        if not filterset.is_valid():
            raise translate_validation(filterset.errors)
        queryset = filterset.qs
        if not request.query_params.get("metric"):
            queryset = queryset.annotate(utc_time=UTC_TIME).order_by(*ACROSS_METRICS)  # as NewestFirst
        # The rows are read after this view returns, where the replica switch is off: keep its choice.
        queryset = queryset.using(queryset.db)
        limit = settings.OBSERVATION_EXPORT_MAX_ROWS
        if queryset.order_by()[: limit + 1].count() > limit:
            raise ApplicationError(MSG_EXPORT_TOO_LARGE.format(limit=limit), status=400, field="since")
        response = StreamingHttpResponse(
            csv_lines(self.csv_columns, observation_rows.rows_streamed(queryset, chunk_size=EXPORT_CHUNK)),
            content_type="text/csv; charset=utf-8",
        )
        response["Content-Disposition"] = f'attachment; filename="{_export_name(filterset)}"'
        return response

    csv_columns = ObservationOutput.Meta.fields


def _export_name(filterset: ObservationFilter) -> str:
    """observations_<metric or all>_<since or start>_<until or the day of the export>.csv"""
    window = filterset.form.cleaned_data
    since, until = filterset.window_start, window.get("until")
    return (
        "_".join(
            [
                "observations",
                window.get("metric") or "all",
                f"{since:%Y-%m-%d}" if since else "start",
                f"{until or timezone.now():%Y-%m-%d}",
            ]
        ).replace("/", "-")
        + ".csv"
    )
