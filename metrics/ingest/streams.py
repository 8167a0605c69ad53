"""OTLP streams: cumulative Sums and Histograms become deltas, a re-sent gauge adds nothing.

A stream is one resource + scope + metric + point attributes (hashed by formats.otlp). Its last
stored point lives in metrics.models.OtlpStream, taken FOR UPDATE in the ingest's transaction, so two
web workers, a restarted server and a restarted exporter all see the same state. The rules, as the
OpenTelemetry Collector's cumulativetodelta processor has them:

- A cumulative point is stored as its difference from the stream's last one. The first point of a
  stream, a new `start_time_unix_nano` (the exporter restarted) or a decrease (a monotonic Sum, a
  histogram's count or any bucket) is a reset: the point is its own delta, since its start. A point
  no newer than the last, or equal to it, adds nothing.
- A gauge point equal to the stream's last (value and time) adds nothing. For a definition that is
  not per_interval a gauge stands for measurements, and the SDK re-sends a synchronous gauge's last
  value at every export (cumulative temporality): a point with the last value is that re-send.
- Delta points are stored as they come.

The state moves only for points that were stored: a refused point leaves it, so the next delta covers
its interval too.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import orjson
from django.db import connection
from django.utils import timezone

from metrics.ingest.formats.histograms import Histogram, histogram_delta
from metrics.ingest.formats.otlp import GAUGE, HISTOGRAM, Point
from metrics.models import OtlpStream

# bigint holds nanoseconds until 2262; later (refused as the future anyway) is kept as the largest.
MAX_NS = 2**63 - 1

CLAIM_SQL = """
INSERT INTO metrics_otlpstream (stream, start_ns, time_ns, state, updated_at)
SELECT unnest(%s::text[]), 0, 0, NULL, now()
ON CONFLICT (stream) DO NOTHING
"""
LOCK_SQL = "SELECT stream, start_ns, time_ns, state FROM metrics_otlpstream WHERE stream = ANY(%s) ORDER BY stream FOR UPDATE"

State = tuple[int, int, dict[str, Any]]  # start_ns, time_ns, the point as sent


def _stateful(point: Point) -> bool:
    return point.kind == GAUGE or point.cumulative


def streams_lock(points: list[Point]) -> dict[str, State]:
    """The stored state of the points' streams, locked until the transaction ends (in stream order, so
    two exports never wait on each other in a cycle). Streams seen for the first time get a row."""
    streams = sorted({p.stream for p in points if _stateful(p)})
    if not streams:
        return {}
    states: dict[str, State] = {}
    with connection.cursor() as cursor:
        cursor.execute(CLAIM_SQL, [streams])
        cursor.execute(LOCK_SQL, [streams])
        for stream, start_ns, time_ns, state in cursor.fetchall():
            if state is not None:
                states[stream] = (start_ns, time_ns, state if isinstance(state, dict) else _json(state))
    return states


def _json(text: str) -> dict[str, Any]:
    loaded: dict[str, Any] = orjson.loads(text)  # Django's cursor returns jsonb as its text
    return loaded


def points_as_deltas(points: list[Point], states: dict[str, State]) -> list[tuple[Point, Point]]:
    """(as sent, as stored) of the points to store, the stored one with its row's value set (a
    histogram's: its delta's mean); the points that add nothing are left out."""
    kept: list[tuple[Point, Point]] = []
    for point in points:
        stored = _as_stored(point, states.get(point.stream))
        if stored is not None:
            kept.append((point, stored))
            if _stateful(point):  # a later point of the stream in the same export follows this one
                states[point.stream] = (_ns(point.start_ns), _ns(point.time_ns), _state_of(point))
    return kept


def _as_stored(point: Point, state: State | None) -> Point | None:
    if point.kind == GAUGE:
        if state is not None and _gauge_repeats(point, state):
            return None
        return _with_value(point, point.value)
    if not point.cumulative or state is None or _ns(point.start_ns) != state[0]:
        return _own_delta(point)
    if _ns(point.time_ns) <= state[1]:
        return None  # already counted: a retried or late export
    if point.kind == HISTOGRAM:
        assert point.histogram is not None
        delta = histogram_delta(point.histogram, Histogram.from_state(state[2]))
        if delta is None:
            return _own_delta(point)
        return (
            replace(point, histogram=delta, row={**point.row, "value": delta.mean}) if delta.count else None
        )
    assert point.value is not None
    previous = float(state[2]["value"])
    if point.monotonic and point.value < previous:
        return _own_delta(point)
    return _with_value(point, point.value - previous) if point.value != previous else None


def _gauge_repeats(point: Point, state: State) -> bool:
    """The same reading again, or (a gauge of measurements) the SDK's re-send of its last value."""
    if state[2].get("value") != point.value:
        return False
    return point.sampling != "per_interval" or _ns(point.time_ns) == state[1]


def _own_delta(point: Point) -> Point:
    if point.histogram is not None:
        return replace(point, row={**point.row, "value": point.histogram.mean})
    return _with_value(point, point.value)


def _with_value(point: Point, value: float | None) -> Point:
    return replace(point, row={**point.row, "value": value})


def _state_of(point: Point) -> dict[str, Any]:
    """What the next point of the stream is compared with: the point as it was sent."""
    if point.histogram is not None:
        return point.histogram.as_state()
    return {"value": point.value}


def _ns(nanos: int) -> int:
    return min(nanos, MAX_NS)


def streams_advance(stored: list[tuple[Point, Point]]) -> None:
    """Record (as sent, as stored) points that were stored as their streams' last points."""
    rows, now = {}, timezone.now()
    for sent, _ in stored:
        if _stateful(sent):
            rows[sent.stream] = OtlpStream(
                stream=sent.stream,
                start_ns=_ns(sent.start_ns),
                time_ns=_ns(sent.time_ns),
                state=_state_of(sent),
                updated_at=now,
            )
    if rows:
        OtlpStream.objects.bulk_update(list(rows.values()), ["start_ns", "time_ns", "state", "updated_at"])
