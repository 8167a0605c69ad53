"""Metrics API: the observations list and batch ingest."""

from __future__ import annotations

from typing import Any, cast

import django_filters
from django.conf import settings
from django.db.models import QuerySet
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers, status
from rest_framework.pagination import CursorPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.errors import PayloadTooLarge
from core.api.filters import UtcDateTimeFilter
from core.api.parsers import RawBodyParser
from core.api.permissions import RoleRequired
from core.errors import ApplicationError
from core.idempotency import IDEMPOTENCY_KEY, REPLAY_HEADER, idempotency_key
from core.roles import acting_user
from metrics import ingest, observation_rows, selectors
from metrics.api import observations_keyset
from metrics.api.write_rules import WRITE_RULES
from metrics.models import Observation, System, Workload


class ObservationOutput(serializers.ModelSerializer[Observation]):
    metric = serializers.CharField(source="definition.ref")
    system = serializers.CharField(source="system.key")
    workload = serializers.CharField(source="workload.key")

    class Meta:
        model = Observation
        fields = [
            "metric",
            "system",
            "workload",
            "value",
            "unit",
            "observed_at",
            "run_id",
            "source",
            "tags",
            "batch",
        ]


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


class NewestFirst(CursorPagination):
    """Pages by cursor without a total: over millions of observations the count cost more than the
    page. Ties on observed_at are broken by the rest of the natural key."""

    ordering = ("-observed_at", "definition_id", "system_id", "workload_id", "run_id")
    page_size = 100
    page_size_query_param = "page_size"
    max_page_size = 1000


@extend_schema(tags=["metrics"])
class ObservationList(generics.ListAPIView[Observation]):
    """Newest first. Filter by metric (and system, workload, time window or run) to keep pages fast."""

    queryset = selectors.observations_list()
    serializer_class = ObservationOutput  # the schema; rows are written by metrics.observation_rows
    filterset_class = ObservationFilter
    pagination_class = NewestFirst

    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        if observations_keyset.answers(request.query_params):  # the usual filters: one SQL statement
            filters = observations_keyset.cleaned_filters(request.query_params, self.filterset_class)
            # CursorPagination takes anything with order_by, filter and slicing; the stubs ask for a QuerySet.
            rows = self.paginate_queryset(observations_keyset.KeysetPage(filters))  # type: ignore[arg-type]
        else:
            # The stubs' row type defaults to the model, so a values() queryset is refused there too.
            rows = self.paginate_queryset(
                observation_rows.page_rows(self.filter_queryset(self.get_queryset()))  # type: ignore[arg-type]
            )
        # pagination_class is set, so there is always a page (None means no paginator); its rows are dicts.
        return self.get_paginated_response(observation_rows.rows_as_json(cast("list[dict[str, Any]]", rows)))


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
