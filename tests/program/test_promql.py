"""The PromQL subset (program/promql): what it reads, how its matchers match, and what it refuses."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest

from program.promql import PromQLError, Scalar, parse_duration, parse_query, parse_selector, parse_time

LABELS = frozenset({"metric", "program", "side", "stat", "system", "unit", "workload"})


def test_a_selector_reads_equality_and_alternation_matchers():
    selector = parse_query(
        'rebuild_tracker_observation{metric="step-time", stat=~"p50|p95", program=\'rebuild\',}',
        labels=LABELS,
    )
    assert selector.matches(
        {
            "__name__": "rebuild_tracker_observation",
            "metric": "step-time",
            "stat": "p95",
            "program": "rebuild",
        }
    )
    assert not selector.matches(
        {
            "__name__": "rebuild_tracker_observation",
            "metric": "step-time",
            "stat": "p99",
            "program": "rebuild",
        }
    )
    assert selector.literal_values("stat") == {"p50", "p95"}
    assert selector.literal_values("side") is None


def test_grafanas_multi_value_and_all_formats_are_read():
    escaped = parse_selector(r'{program=~"(rebuild|a\\.b)", side=~".*", stat=~".+"}', labels=LABELS)
    assert escaped.literal_values("program") == {"rebuild", "a.b"}
    assert escaped.matches({"program": "a.b", "stat": "mean"})
    assert not escaped.matches({"program": "a.b"})  # .+ wants a value
    assert escaped.literal_values("side") is None


def test_an_empty_equality_matches_a_series_without_the_label():
    pooled = parse_selector('rebuild_tracker_observation{workload=""}', labels=LABELS)
    assert pooled.matches({"__name__": "rebuild_tracker_observation"})
    assert not pooled.matches({"__name__": "rebuild_tracker_observation", "workload": "x"})


@pytest.mark.parametrize(
    ("text", "value"), [("1+1", 2.0), ("2 * (3 - 1) / 4", 1.0), ("-1.5e1", -15.0), ("7 % 4", 3.0)]
)
def test_arithmetic_on_numbers_is_a_scalar(text, value):
    assert parse_query(text, labels=LABELS) == Scalar(value)


def test_division_by_zero_is_infinity_as_in_promql():
    assert parse_query("1/0", labels=LABELS) == Scalar(math.inf)
    assert math.isnan(parse_query("0/0", labels=LABELS).value)


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("", "empty query"),
        ("rate(x[5m])", "function rate()"),
        ("count by (metric) (rebuild_tracker_observation)", "aggregation count()"),
        ("rebuild_tracker_observation offset 1h", "'offset'"),
        ('{metric="a"} * 2', "after the selector"),
        ('{metric="a"', "expected ',' or '}' after a matcher"),
        ('{metric="a}', "unterminated quoted string"),
        ("{metric=a}", "expected a quoted string"),
        ('{metric="a\\q"}', "unknown escape sequence"),
        ('{metric!~"a"}', "the matcher !~"),
        ('{metric=~"a+"}', 'the regular expression metric=~"a+"'),
        ('{metric=""}', "at least one non-empty matcher"),
        ('{host="a"}', "label 'host' is not supported"),
        ("node_load1", "serves rebuild_tracker_observation only"),
        ("2 ** 3", "only + - * / %"),
    ],
)
def test_anything_else_is_refused_naming_it(text, named):
    with pytest.raises(PromQLError, match=None) as refused:
        parse_query(text, labels=LABELS)
    assert named in str(refused.value)


def test_times_and_durations_read_as_prometheus_reads_them():
    assert parse_time("1767225600", "start") == 1767225600.0
    assert parse_time("2026-01-01T00:00:00Z", "start") == 1767225600.0
    assert parse_time("2026-01-01T01:00:00+01:00", "end") == 1767225600.0
    assert parse_duration("90", "step") == 90.0
    assert parse_duration("1h30m", "step") == 5400.0
    assert parse_duration("250ms", "step") == 0.25
    with pytest.raises(PromQLError, match='invalid parameter "step"'):
        parse_duration("1 hour", "step")
    with pytest.raises(PromQLError, match='invalid parameter "time"'):
        parse_time("nan", "time")


@pytest.mark.parametrize(
    "text", ["1e15", "-1e15", "9999-12-31T23:30:00Z", "0001-01-01T00:00:00Z", "253402300799"]
)
def test_a_time_datetime_cannot_hold_with_a_bucket_added_is_refused_as_prometheus_words_it(text):
    with pytest.raises(PromQLError) as refused:
        parse_time(text, "end")
    assert str(refused.value) == f'invalid parameter "end": cannot parse "{text}" to a valid timestamp'


def test_times_a_week_inside_datetimes_range_are_read():
    assert parse_time("9999-12-24T00:00:00Z", "end") == datetime(9999, 12, 24, tzinfo=UTC).timestamp()
    assert parse_time("0001-01-08T00:00:00Z", "start") == datetime(1, 1, 8, tzinfo=UTC).timestamp()


def test_a_long_sum_is_refused_by_its_length_not_pythons_recursion_limit():
    with pytest.raises(PromQLError, match="a scalar expression of 2399 characters: at most 200"):
        parse_query("+".join(["1"] * 1200), labels=LABELS)
    assert parse_query("+".join(["1"] * 100), labels=LABELS) == Scalar(100.0)


@pytest.mark.parametrize("text", ["1e310", "2 * -1e400"])
def test_a_number_past_a_floats_range_is_refused_as_prometheus_refuses_it(text):
    with pytest.raises(PromQLError, match=r'error parsing number: parsing "1e\d+": value out of range'):
        parse_query(text, labels=LABELS)


def test_an_integer_literal_past_a_floats_range_is_refused_not_an_overflow(monkeypatch):
    # 310 digits is over the length cap; with the cap raised, the literal itself is refused.
    monkeypatch.setattr("program.promql.parse.MAX_SCALAR_LENGTH", 400)
    with pytest.raises(PromQLError, match="value out of range"):
        parse_query("1" * 310, labels=LABELS)
