"""OTLP streams (metrics.ingest.streams): cumulative points become deltas, repeats add nothing, state
in PostgreSQL. Hand-built requests, so each rule is driven exactly; test_otlp_sdk.py drives the SDK."""

from __future__ import annotations

import threading

import pytest
from django.db import connection
from opentelemetry.proto.metrics.v1.metrics_pb2 import (
    AggregationTemporality,
    ExponentialHistogramDataPoint,
    HistogramDataPoint,
    Metric,
    NumberDataPoint,
)

from metrics.models import HistogramPoint, Observation, OtlpStream
from tests.conftest import api_token, make_user
from tests.metrics.factories import definition, reference_data
from tests.metrics.test_otlp_receiver import NOW_NS, START_NS, answer, attrs, export, post

CUMULATIVE = AggregationTemporality.AGGREGATION_TEMPORALITY_CUMULATIVE
DELTA = AggregationTemporality.AGGREGATION_TEMPORALITY_DELTA
SECOND = 10**9


@pytest.fixture
def token(ref, ingest_user) -> str:
    definition(key="tokens", unit="token", direction="higher_is_better", sampling="per_interval")
    definition(key="level", unit="token", direction="higher_is_better", sampling="per_interval")
    definition(key="depth", unit="token", direction="lower_is_better", sampling="per_step")
    return api_token(ingest_user, "ingest")


def counter(
    *points: tuple[float, int, int], name="tokens", temporality=CUMULATIVE, monotonic=True, **point_attrs
):
    """A Sum of (value, start_ns, time_ns) points."""
    metric = Metric(name=name, unit="{token}")
    metric.sum.aggregation_temporality = temporality
    metric.sum.is_monotonic = monotonic
    for value, start, at in points:
        metric.sum.data_points.append(
            NumberDataPoint(
                as_double=value,
                start_time_unix_nano=start,
                time_unix_nano=at,
                attributes=attrs(**point_attrs),
            )
        )
    return metric


def gauge_points(name: str, *points: tuple[float, int]) -> Metric:
    metric = Metric(name=name, unit="{token}")
    for value, at in points:
        metric.gauge.data_points.append(NumberDataPoint(as_double=value, time_unix_nano=at))
    return metric


def push(token: str, *metrics: Metric, **resource) -> None:
    result = answer(post(export(*metrics, **resource), token))
    assert not result.HasField("partial_success"), result.partial_success.error_message


def values(key: str = "tokens") -> list[float]:
    return list(
        Observation.objects.filter(definition__key=key)
        .order_by("observed_at")
        .values_list("value", flat=True)
    )


T1, T2, T3, T4 = (NOW_NS - 40 * SECOND, NOW_NS - 30 * SECOND, NOW_NS - 20 * SECOND, NOW_NS - 10 * SECOND)


def test_a_cumulative_sum_is_stored_as_what_it_added_since_its_last_point(token):
    push(token, counter((100, START_NS, T1)))
    push(token, counter((120, START_NS, T2)))
    push(token, counter((120, START_NS, T3)))  # the export at shutdown: the same total
    assert values() == [100.0, 20.0]


def test_a_new_start_time_or_a_decrease_is_a_reset_and_the_point_its_own_delta(token):
    push(token, counter((100, START_NS, T1)))
    push(token, counter((7, START_NS + SECOND, T2)))  # the exporter restarted
    push(token, counter((3, START_NS + SECOND, T3)))  # a monotonic sum went down: a reset too
    push(token, counter((10, START_NS + SECOND, T4)))
    assert values() == [100.0, 7.0, 3.0, 7.0]


def test_a_late_or_retried_cumulative_point_adds_nothing(token):
    push(token, counter((100, START_NS, T2)))
    push(token, counter((90, START_NS, T1)))  # older than the last: already counted
    push(token, counter((100, START_NS, T2)))  # the same export again
    assert values() == [100.0]


def test_an_up_down_counter_stores_its_changes_including_decreases(token):
    push(token, counter((10, START_NS, T1), name="level", monotonic=False))
    push(token, counter((4, START_NS, T2), name="level", monotonic=False))
    assert values("level") == [10.0, -6.0]


def test_each_attribute_set_and_each_resource_is_its_own_stream(token):
    push(token, counter((100, START_NS, T1), host="a"), rebuild__run_id="r1")
    push(token, counter((50, START_NS, T1), host="b"), rebuild__run_id="r2")
    push(token, counter((130, START_NS, T2), host="a"), rebuild__run_id="r1")
    push(token, counter((60, START_NS, T2), host="b"), rebuild__run_id="r2")
    by_run = {}
    for run_id, value in Observation.objects.order_by("observed_at").values_list("run_id", "value"):
        by_run.setdefault(run_id, []).append(value)
    assert by_run == {"r1": [100.0, 30.0], "r2": [50.0, 10.0]}
    assert OtlpStream.objects.count() == 2


def test_delta_sums_are_stored_as_they_come(token):
    push(token, counter((5, T1, T2), temporality=DELTA))
    push(token, counter((5, T2, T3), temporality=DELTA))
    assert values() == [5.0, 5.0]
    assert not OtlpStream.objects.exists()  # deltas need no state


def test_a_refused_point_leaves_the_state_so_the_next_delta_covers_it(token):
    push(token, counter((100, START_NS, T1)))
    future = NOW_NS + 3600 * SECOND
    result = answer(post(export(counter((150, START_NS, future))), token)).partial_success
    assert result.rejected_data_points == 1 and "future" in result.error_message
    push(token, counter((170, START_NS, T2)))
    assert values() == [100.0, 70.0]


def test_a_gauge_point_equal_to_the_last_one_adds_nothing(token):
    push(token, gauge_points("level", (3.0, T1)))
    push(token, gauge_points("level", (3.0, T1)))  # the same value at the same time
    push(token, gauge_points("level", (3.0, T2)))  # per_interval: a new reading of the level
    assert values("level") == [3.0, 3.0]


def test_a_gauge_of_measurements_resent_with_its_last_value_adds_nothing(token):
    # The SDK's synchronous gauge, cumulative: every export re-sends the last value at a new time.
    push(token, gauge_points("depth", (4.0, T1)))
    push(token, gauge_points("depth", (4.0, T2)))
    push(token, gauge_points("depth", (7.0, T3)))
    push(token, gauge_points("depth", (7.0, T4)))
    assert values("depth") == [4.0, 7.0]


def histogram(
    *points: tuple[int, float, list[int], int, int], bounds=(1.0, 2.0), temporality=CUMULATIVE
) -> Metric:
    """An explicit-bucket histogram of (count, sum, bucket counts, start_ns, time_ns) points, in ms."""
    metric = Metric(name="latency", unit="ms")
    metric.histogram.aggregation_temporality = temporality
    for count, total, counts, start, at in points:
        metric.histogram.data_points.append(
            HistogramDataPoint(
                count=count,
                sum=total,
                bucket_counts=counts,
                explicit_bounds=bounds,
                start_time_unix_nano=start,
                time_unix_nano=at,
            )
        )
    return metric


def test_a_cumulative_histogram_is_stored_as_the_buckets_it_added(token):
    push(token, histogram((2, 1.5, [1, 1, 0], START_NS, T1)))
    push(token, histogram((5, 8.5, [1, 2, 2], START_NS, T2)))
    push(token, histogram((5, 8.5, [1, 2, 2], START_NS, T3)))  # nothing new: no point
    rows = list(
        HistogramPoint.objects.order_by("observed_at").values_list("count", "sum", "lows", "highs", "counts")
    )
    inf = float("inf")
    assert rows == [
        (2, 0.0015, [-inf, 0.001], [0.001, 0.002], [1, 1]),  # in the definition's seconds
        (3, 0.007, [0.001, 0.002], [0.002, inf], [1, 2]),
    ]


def test_a_histogram_whose_count_went_down_is_a_reset(token):
    push(token, histogram((5, 8.5, [1, 2, 2], START_NS, T1)))
    push(token, histogram((1, 0.5, [1, 0, 0], START_NS, T2)))
    assert list(HistogramPoint.objects.order_by("observed_at").values_list("count", flat=True)) == [5, 1]


def test_an_exponential_histogram_that_rescaled_subtracts_at_the_coarser_scale(token):
    metric = Metric(name="latency", unit="s")
    metric.exponential_histogram.aggregation_temporality = CUMULATIVE
    first = ExponentialHistogramDataPoint(
        count=2, sum=3.1, scale=1, start_time_unix_nano=START_NS, time_unix_nano=T1
    )
    first.positive.offset, first.positive.bucket_counts[:] = 0, [1, 1]  # (1, √2], (√2, 2]
    second = ExponentialHistogramDataPoint(
        count=3, sum=8.1, scale=0, start_time_unix_nano=START_NS, time_unix_nano=T2
    )
    second.positive.offset, second.positive.bucket_counts[:] = 0, [2, 0, 1]  # (1, 2] ×2, (4, 8]
    metric.exponential_histogram.data_points.extend([first])
    push(token, metric)
    del metric.exponential_histogram.data_points[:]
    metric.exponential_histogram.data_points.extend([second])
    push(token, metric)
    rows = list(
        HistogramPoint.objects.order_by("observed_at").values_list("count", "lows", "highs", "counts")
    )
    assert rows[1] == (1, [4.0], [8.0], [1])
    assert rows[0][1] == [1.0, pytest.approx(2**0.5)]


def test_two_workers_exporting_one_stream_at_once_store_its_total_once(transactional_db):
    reference_data()
    definition(key="tokens", unit="token", direction="higher_is_better", sampling="per_interval")
    secret = api_token(make_user("exporter", perms=("metrics.add_observation",)), "ingest")
    requests = [export(counter((100, START_NS, T1))), export(counter((150, START_NS, T2)))]
    barrier = threading.Barrier(2)

    def send(request) -> None:
        barrier.wait()
        try:
            answer(post(request, secret))
        finally:
            connection.close()

    threads = [threading.Thread(target=send, args=(r,)) for r in requests]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # Either order: 100 then +50, or 150 then the older point adding nothing. Never 250.
    assert sum(values()) == 150.0


def test_each_attribute_set_of_a_histogram_is_stored_at_the_same_moment(token):
    metric = histogram((2, 1.5, [1, 1, 0], START_NS, T1), (1, 2.5, [0, 0, 1], START_NS, T1))
    metric.histogram.data_points[0].attributes.extend(attrs(phase="forward"))
    metric.histogram.data_points[1].attributes.extend(attrs(phase="backward"))
    push(token, metric)
    tags = sorted((h.tags["phase"], h.count) for h in HistogramPoint.objects.all())
    assert tags == [("backward", 1), ("forward", 2)]
