"""The observations list's page as one SQL statement (two at most, across metrics), for the filters scripts send.

Through the ORM a page cost more than its query: a FilterSet built per request, the metric resolved
by a query of its own, a join for a system or workload key (which PostgreSQL ran before the sort,
over every matching row), then QuerySet compilation. Here the filters are cleaned by the
FilterSet's own form fields (so a bad value is the same 400 naming the parameter), names become
subqueries (one round trip: `metric`, `system` and `workload` by key), and DRF's CursorPagination
drives `KeysetPage` exactly as it drives a queryset — order_by, a filter on observed_at, a slice — so
the cursor tokens and links are DRF's own. A page that comes back empty is then
checked for an unknown `metric`, `system` or `workload` (a 400 naming it); a found page never needs
that query.

Across every metric (no `metric`) the page is ordered by `timezone('UTC', observed_at)`, the expression
the observation_utc_time index holds, and each time bound is written on it too, so PostgreSQL reads the
page from that index, starting at the cursor, partition by partition in a Merge Append (0.3 ms where
time bands over BRIN took 1.4). Planning and starting that Merge Append costs PostgreSQL per monthly
partition (0.36 ms a page at 7 partitions, 0.65 ms at 17), so the page first asks only the NEAR days
next to its cursor (or now): their rows come first in the page's order, so a full page from them is the
page; only a page they cannot fill asks again over all time (a second query, on sparse data). With
`metric` the page keeps plain observed_at and reads observation_definition_time: the expression index
cannot tempt the planner there. A page bounded in time on one side only, whose other filters are keys
looked up by subquery, is prepared and runs one generic plan (core.db.prepared): no planning per page,
so a cursor's page across metrics skips the NEAR days, which would bound it on both sides.

`batch` (a model choice, validated by a query) and anything unexpected take the FilterSet path.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import django_filters
import orjson
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import QueryDict
from django.utils.dateparse import parse_datetime
from rest_framework.exceptions import NotFound, ValidationError

from core.errors import ApplicationError
from core.replica import read_connection
from metrics import selectors
from metrics.models import MetricDefinition, System, Workload
from metrics.refs import MetricRefError, metric_ref_parse

PAGING = frozenset({"cursor", "page_size"})
# Query parameters this path answers; each is cleaned by the FilterSet field of the same name.
FILTERS = ("metric", "system", "workload", "since", "until", "run_id", "source")
# observed_at as the text DRF's cursor takes of it (str() of a UTC datetime: microseconds only when
# not zero), written by PostgreSQL: loading 50 timestamps through Django's time-zone-aware loader,
# then writing each twice (the answer's ISO 8601, the cursor's position) cost more worker CPU than
# the rest of the page's read.
POSITION = (
    "to_char(observed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')"
    " || CASE WHEN mod(extract(microseconds FROM observed_at)::bigint, 1000000) = 0 THEN ''"
    " ELSE to_char(observed_at AT TIME ZONE 'UTC', '.US') END || '+00:00'"
)
# tags as text, parsed by orjson below: psycopg's own jsonb loader (the standard library's json) took
# 80 µs of a page's 125 µs of row loading, even for empty tags.
COLUMNS = (
    f"definition_id, system_id, workload_id, value, unit, {POSITION}, run_id, source, tags::text, batch_id"
)
# The list's order (metrics.selectors.observations_list) and its mirror image for `previous` pages.
ORDER = "observed_at DESC, definition_id, system_id, workload_id, run_id"
REVERSED_ORDER = "observed_at, definition_id DESC, system_id DESC, workload_id DESC, run_id DESC"
# Across every metric: the same order on the indexed expression (metrics.models.UTC_TIME).
UTC_TIME = "timezone('UTC', observed_at)"
ACROSS_ORDER = f"{UTC_TIME} DESC, definition_id, system_id, workload_id, run_id"
ACROSS_REVERSED_ORDER = f"{UTC_TIME}, definition_id DESC, system_id DESC, workload_id DESC, run_id DESC"
# How far from its cursor (or now) a page across metrics looks first: this month's and last month's
# partitions, and the ones ahead.
NEAR = timedelta(days=31)
FIELDS = ("definition_id", "system_id", "workload_id", "value", "unit", "observed_at", "run_id", "source", "tags", "batch_id")  # fmt: skip

ACTIVE_DEFINITION = (
    "definition_id = (SELECT id FROM metrics_metricdefinition WHERE key = %s AND status = %s"
    " ORDER BY version DESC LIMIT 1)"
)
DEFINITION_VERSION = (
    "definition_id = (SELECT id FROM metrics_metricdefinition WHERE key = %s AND version = %s)"
)
SYSTEM = "system_id = (SELECT id FROM metrics_system WHERE key = %s)"
WORKLOAD = "workload_id = (SELECT id FROM metrics_workload WHERE key = %s)"


def answers(query_params: QueryDict) -> bool:
    """Whether this path serves these parameters (else the FilterSet does)."""
    return all(name in PAGING or name in FILTERS for name in query_params)


def cleaned_filters(
    query_params: QueryDict, filterset_class: type[django_filters.FilterSet]
) -> dict[str, Any]:
    """The parameters given, cleaned by the FilterSet's fields; empty ones dropped as django-filter does."""
    values: dict[str, Any]
    errors: dict[str, list[str]]
    values, errors = {}, {}
    for name in FILTERS:
        if name not in query_params:
            continue
        try:
            value = filterset_class.base_filters[name].field.clean(query_params.get(name))
        except DjangoValidationError as error:
            errors[name] = error.messages
            continue
        if value not in (None, "", [], (), {}):
            values[name] = value
    if errors:
        raise ValidationError(errors)
    return values


class KeysetPage:
    """What CursorPagination asks of a queryset — order_by, filter on the first ordering field, a
    slice — answered by one SQL statement with the keyset predicate written out."""

    def __init__(self, filters: dict[str, Any]) -> None:
        self.conditions: list[str] = []
        self.params: list[Any] = []
        self.bounds: list[tuple[str, datetime]] = []  # (operator, moment) on observed_at
        self.position: datetime | None = None  # the cursor's
        self.since: datetime | None = None
        self.until: datetime | None = None
        self.metric = filters.get("metric")
        self.reverse = False
        # Whether a filter's value is written into the statement (run_id, source), where a plan made
        # for that value may differ; metric, system and workload are looked up by a subquery, whose
        # value no plan knows.
        self.values_in_plan = any(name in filters for name in ("run_id", "source"))
        if self.metric is not None:
            self._metric(self.metric)
        self.keys = {name: filters[name] for name in ("system", "workload") if name in filters}
        for name, condition in (("system", SYSTEM), ("workload", WORKLOAD)):
            if name in filters:
                self._where(condition, filters[name])
        if "since" in filters:
            self.since = self._bound(">=", filters["since"])
        if "until" in filters:
            self.until = self._bound("<", filters["until"])
        for name in ("run_id", "source"):
            if name in filters:
                self._where(f"{name} = %s", filters[name])

    def _where(self, condition: str, *params: Any) -> None:
        self.conditions.append(condition)
        self.params.extend(params)

    def _bound(self, operator: str, moment: datetime) -> datetime:
        # In UTC: PostgreSQL refuses offsets Python accepts (+17:18), and a cursor's position is UTC.
        utc = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
        self.bounds.append((operator, utc))
        return utc

    def _metric(self, ref: str) -> None:
        try:
            key, version = metric_ref_parse(ref)
        except MetricRefError as error:
            raise ApplicationError(error.message, status=400, field="metric") from None
        if version is not None:
            self._where(DEFINITION_VERSION, key, version)
        else:
            self._where(ACTIVE_DEFINITION, key, MetricDefinition.Status.ACTIVE)

    # --- the queryset protocol CursorPagination.paginate_queryset uses ----------------------------

    def order_by(self, *ordering: str) -> KeysetPage:
        self.reverse = not ordering[0].startswith("-")
        return self

    def filter(self, **position: Any) -> KeysetPage:
        ((lookup, value),) = position.items()
        try:
            moment = parse_datetime(value) if isinstance(value, str) else value
        except ValueError:  # well formed, yet no such moment (month 13)
            moment = None
        if not isinstance(moment, datetime):
            raise NotFound("Invalid cursor")
        self.position = self._bound("<" if lookup == "observed_at__lt" else ">", moment)
        return self

    def __getitem__(self, window: slice) -> list[dict[str, Any]]:
        rows = self.rows(offset=window.start or 0, limit=window.stop - (window.start or 0))
        if not rows:
            self._refuse_unknown_keys()
        return rows

    def _refuse_unknown_keys(self) -> None:
        """An empty page may be an unknown key: that is a 400 naming the parameter, not an empty list.
        Only an empty page pays for the check (one query per key given)."""
        if self.metric is not None:
            selectors.definition_resolve(self.metric)
        for name, model in (("system", System), ("workload", Workload)):
            key = self.keys.get(name)
            if key is not None and not model.objects.filter(key=key).exists():
                raise ApplicationError(f"Unknown {name} '{key}'.", status=400, field=name)

    def rows(self, *, offset: int, limit: int) -> list[dict[str, Any]]:
        near = self._near_bound()
        # The NEAR days save planning. A page that runs one generic plan without them (a cursor's,
        # or `until`'s) is not planned at all, and adding them would bound it on both sides.
        if near is not None and (
            self._one_plan_fits([*self.bounds, near]) or not self._one_plan_fits(self.bounds)
        ):
            found = self._fetch(offset=offset, limit=limit, bounds=[*self.bounds, near])
            if len(found) == limit:
                return found
        return self._fetch(offset=offset, limit=limit, bounds=self.bounds)

    def _one_plan_fits(self, bounds: list[tuple[str, datetime]]) -> bool:
        """Whether one generic plan is the best plan for any values of this statement, so it is prepared
        and never planned again (core.db.prepared). Bounded in time on one side only, the page's best
        plan is a time index read from its bound (or the newest row) in the partitions the bound leaves,
        whatever the bound: across metrics 0.30 → 0.10 ms of PostgreSQL, for one metric over 19 monthly
        partitions 0.73 → 0.10 ms. Bounded on both sides, a generic plan must guess how many rows lie
        between the bounds (0.5 % of the table): on a table of some 20,000 rows that guess chose sorting
        all of them over the index, and on 1M rows a page took 5 ms instead of 0.24. run_id and source
        are written into the statement, where the best plan may depend on the value."""
        directions = {operator[0] for operator, _ in bounds}  # '<' or '>'
        return not self.values_in_plan and len(directions) <= 1

    def _near_bound(self) -> tuple[str, datetime] | None:
        """Across metrics: the edge of the NEAR days next to the cursor (or now, or `until`), on the
        side the page reads towards; None when the filters are narrower already, or with `metric`."""
        if self.metric is not None:
            return None
        if self.reverse:  # ascending from the cursor (a `previous` page)
            if self.position is None:
                return None
            edge = self.position + NEAR
            return None if self.until is not None and self.until <= edge else ("<", edge)
        start = self.position or min(self.until or datetime.now(UTC), datetime.now(UTC))
        edge = start - NEAR
        return None if self.since is not None and self.since >= edge else (">=", edge)

    def _fetch(self, *, offset: int, limit: int, bounds: list[tuple[str, datetime]]) -> list[dict[str, Any]]:
        conditions, params = list(self.conditions), list(self.params)
        across_metrics = self.metric is None
        for operator, moment in bounds:
            conditions.append(f"observed_at {operator} %s")  # prunes the months' partitions
            params.append(moment)
            if across_metrics:  # where the index scan starts and stops
                conditions.append(f"{UTC_TIME} {operator} timezone('UTC', %s::timestamptz)")
                params.append(moment)
        if across_metrics:
            order = ACROSS_REVERSED_ORDER if self.reverse else ACROSS_ORDER
        else:
            order = REVERSED_ORDER if self.reverse else ORDER
        where = " AND ".join(conditions) or "TRUE"
        sql = f"SELECT {COLUMNS} FROM metrics_observation WHERE {where} ORDER BY {order} LIMIT %s OFFSET %s"
        params += [limit, offset]
        connection = read_connection()
        prepared = self._one_plan_fits(bounds)
        with connection.prepared_cursor() if prepared else connection.cursor() as cursor:  # type: ignore[attr-defined]
            cursor.execute(sql, params)
            found = cursor.fetchall()
        rows = [dict(zip(FIELDS, values, strict=True)) for values in found]
        for row in rows:
            # "2026-11-30 15:00:00.500000+00:00" is the cursor's position; the answer writes it as DRF
            # writes a UTC datetime, "2026-11-30T15:00:00.500000Z" (metrics.observation_rows).
            position = row["observed_at"]
            row["observed_at_text"] = f"{position[:10]}T{position[11:-6]}Z"
            row["tags"] = orjson.loads(row["tags"])
        return rows
