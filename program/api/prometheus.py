"""A Prometheus-compatible HTTP API over the stored series, for Grafana's Prometheus data source.

Mounted at /api/prom/ (config/urls.py), so the data source URL is `https://<tracker>/api/prom` and
Grafana's calls land on /api/prom/api/v1/…. What it answers (docs/architecture.md, "Grafana's query API"): the
series of program.selectors.prometheus, through the PromQL subset of program.promql.

Why this and not PostgreSQL views for Grafana's SQL data source: the tracker's own authentication
(API tokens with the `read` scope, or the session) and program membership decide what a dashboard
sees, exactly as on the pages; a step's value is the comparison chart's own selector, with the
definition's unit and the rollups' rule of when a side is read from day rollups; and Grafana holds
no database credentials.

Responses and errors are Prometheus' shapes, `{"status": "success", "data": …}` and
`{"status": "error", "errorType": "bad_data", "error": "…"}` (400; 401 and 403 for authentication
and scope, 404 for a path it does not have), not the tracker's API error shape: Grafana reads these.
Every endpoint takes GET, and POST with a form-encoded body (Grafana POSTs by default), and needs only
the `read` scope, whichever the method: all of it is reading. Left out of the OpenAPI schema, which
describes the tracker's own API; Prometheus documents this one.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from django.http import QueryDict
from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.version import version
from core.api.errors import exception_handler as tracker_exception_handler
from core.replica import replica_reads
from program.promql import (
    METRIC_NAME,
    PromQLError,
    Scalar,
    Selector,
    parse_duration,
    parse_query,
    parse_selector,
    parse_time,
)
from program.selectors import prometheus as series

# Prometheus refuses a range with more points per series than this, with this message.
MAX_POINTS = 11_000
MSG_RESOLUTION = "exceeded maximum resolution of 11,000 points per timeseries. Try decreasing the query resolution (?step=XX)"
MSG_STEP = "zero or negative query resolution step widths are not accepted. Try a positive integer"
MSG_END_BEFORE_START = "end timestamp must not be before start time"
# Prometheus' own errorTypes where it has one (bad_data, not_found, unavailable); the rest name the status.
ERROR_TYPES = {
    400: "bad_data",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    429: "too_many_requests",
    503: "unavailable",
}
# Grafana reads the version to decide which API features it may use (match[] on label values came in
# Prometheus 2.24); the subset answers what that version's clients ask.
PROMETHEUS_VERSION = "2.53.0"
HELP = (
    "One statistic (stat) of a program's baseline or candidate system (side) on one tracker metric, per "
    "hour or UTC day, in the definition's unit (unit)."
)


def prometheus_error(status: int, message: str) -> Response:
    return Response(
        {"status": "error", "errorType": ERROR_TYPES.get(status, "internal"), "error": message}, status=status
    )


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """The tracker's handler decides the status (and keeps 401's WWW-Authenticate); the body becomes
    Prometheus' error shape."""
    if isinstance(exc, PromQLError):
        return prometheus_error(400, str(exc))
    response = tracker_exception_handler(exc, context)
    if response is None:
        return None
    data = getattr(response, "data", None)
    message = data.get("detail", "") if isinstance(data, dict) else str(exc)
    answer = prometheus_error(response.status_code, str(message))
    for header in ("WWW-Authenticate", "Retry-After"):
        if header in response:
            answer[header] = response[header]
    return answer


def success(data: Any) -> Response:
    return Response({"status": "success", "data": data})


def sample(value: float) -> str:
    """A sample value as Prometheus writes it (Go's shortest 'f' format, NaN, +Inf, -Inf)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return str(np.format_float_positional(value, trim="-"))


@extend_schema(exclude=True)
class PrometheusView(APIView):
    """GET and POST alike; the parameters are the query string's, or the form body's on POST."""

    token_scope = "read"

    def get_exception_handler(self) -> Any:
        return exception_handler

    def params(self, request: Request) -> QueryDict:
        if request.method == "POST" and isinstance(request.data, QueryDict):
            merged = request.query_params.copy()
            for key, values in request.data.lists():
                merged.setlist(key, values)
            return merged
        return request.query_params

    def get(self, request: Request, **kwargs: Any) -> Response:
        with replica_reads():  # every endpoint is a pure read of the registry, whatever the method
            return self.answer(self.params(request), request, **kwargs)

    def post(self, request: Request, **kwargs: Any) -> Response:
        return self.get(request, **kwargs)

    def answer(self, params: QueryDict, request: Request, **kwargs: Any) -> Response:
        raise NotImplementedError


def _required(params: QueryDict, name: str) -> str:
    value = params.get(name)
    if not value:
        raise PromQLError(f'invalid parameter "{name}": missing')
    return value


def _matches(params: QueryDict) -> list[Selector]:
    return [parse_selector(text, labels=series.LABELS) for text in params.getlist("match[]")]


def _query(params: QueryDict) -> Selector | Scalar:
    return parse_query(_required(params, "query"), labels=series.LABELS)


class QueryRange(PrometheusView):
    def answer(self, params: QueryDict, request: Request, **kwargs: Any) -> Response:
        query = _query(params)
        start = parse_time(_required(params, "start"), "start")
        end = parse_time(_required(params, "end"), "end")
        step = parse_duration(_required(params, "step"), "step")
        if end < start:
            raise PromQLError(MSG_END_BEFORE_START)
        if step <= 0:
            raise PromQLError(MSG_STEP)
        if (end - start) / step > MAX_POINTS:
            raise PromQLError(MSG_RESOLUTION)
        if isinstance(query, Scalar):  # a scalar over a range: the same value at every step
            steps = [round(start + k * step, 3) for k in range(int((end - start) // step) + 1)]
            return success(
                {
                    "resultType": "matrix",
                    "result": [{"metric": {}, "values": [[t, sample(query.value)] for t in steps]}],
                }
            )
        found = series.series_range(request.user, query, start=start, end=end, step=step)
        return success(
            {
                "resultType": "matrix",
                "result": [
                    {"metric": s.labels, "values": [[t, sample(value)] for t, value in s.values]}
                    for s in found
                ],
            }
        )


class Query(PrometheusView):
    """An instant query at `time` (default now): a range of one step, so the value of the hour holding
    it."""

    def answer(self, params: QueryDict, request: Request, **kwargs: Any) -> Response:
        query = _query(params)
        given = params.get("time")
        at = parse_time(given, "time") if given else round(timezone.now().timestamp(), 3)
        if isinstance(query, Scalar):
            return success({"resultType": "scalar", "result": [at, sample(query.value)]})
        found = series.series_range(request.user, query, start=at, end=at, step=1)
        return success(
            {
                "resultType": "vector",
                "result": [
                    {"metric": s.labels, "value": [s.values[0][0], sample(s.values[0][1])]} for s in found
                ],
            }
        )


def _check_times(params: QueryDict) -> None:
    """`start` and `end` of series and label calls are checked and then ignored: which series exist does
    not depend on time here (module docstring of program.selectors.prometheus)."""
    for name in ("start", "end"):
        value = params.get(name)
        if value:
            parse_time(value, name)


class Series(PrometheusView):
    def answer(self, params: QueryDict, request: Request, **kwargs: Any) -> Response:
        selectors = _matches(params)
        if not selectors:
            raise PromQLError("no match[] parameter provided")
        _check_times(params)
        return success([key.labels() for key in series.series_matching(request.user, selectors)])


class Labels(PrometheusView):
    def answer(self, params: QueryDict, request: Request, **kwargs: Any) -> Response:
        _check_times(params)
        return success(series.label_names(request.user, _matches(params)))


class LabelValues(PrometheusView):
    def answer(self, params: QueryDict, request: Request, **kwargs: Any) -> Response:
        name = kwargs["name"]
        if name != "__name__" and not name.replace("_", "a").isalnum():
            raise PromQLError(f'invalid label name: "{name}"')
        _check_times(params)
        return success(series.label_values(request.user, name, _matches(params)))


class Metadata(PrometheusView):
    def answer(self, params: QueryDict, request: Request, **kwargs: Any) -> Response:
        asked = params.get("metric")
        if asked and asked != METRIC_NAME:
            return success({})
        return success({METRIC_NAME: [{"type": "gauge", "help": HELP, "unit": ""}]})


class QueryExemplars(PrometheusView):
    """Grafana asks when a panel shows exemplars; the tracker has none."""

    def answer(self, params: QueryDict, request: Request, **kwargs: Any) -> Response:
        _query(params)
        return success([])


class BuildInfo(PrometheusView):
    def answer(self, params: QueryDict, request: Request, **kwargs: Any) -> Response:
        return success(
            {
                "version": PROMETHEUS_VERSION,
                "revision": f"rebuild-tracker {version()}",
                "branch": "",
                "buildUser": "rebuild-tracker",
                "buildDate": "",
                "goVersion": "",
            }
        )


class Unknown(PrometheusView):
    def answer(self, params: QueryDict, request: Request, **kwargs: Any) -> Response:
        raise exceptions.NotFound(f"this API has no {request.path}; see docs/architecture.md")
