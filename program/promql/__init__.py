"""The PromQL subset and the Prometheus HTTP API's parameters, parsed without Django."""

from program.promql.parse import (
    METRIC_NAME,
    Matcher,
    PromQLError,
    Scalar,
    Selector,
    parse_query,
    parse_selector,
)
from program.promql.times import parse_duration, parse_time

__all__ = [
    "METRIC_NAME",
    "Matcher",
    "PromQLError",
    "Scalar",
    "Selector",
    "parse_duration",
    "parse_query",
    "parse_selector",
    "parse_time",
]
