"""Pulling a Prometheus pull source: `query_range` per workload, through the batch ingest service.

Idempotent by the natural key: sample times are multiples of the step (the range start is aligned
down to it), and each series' run_id is `prom-<source>-<hash of its labels>`, so pulling the same
range again yields the same keys, which ingest stores as no-ops. The outcome is recorded on the
source (last_pulled_at, or last_error and consecutive_failures) and never raised to the caller.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from core.errors import ApplicationError
from metrics.ingest import MAX_ROWS, observations_ingest_rows
from metrics.models import PullSource
from metrics.pulled_rows import INGEST_SOURCE, run_id_prefix

# Prometheus refuses a query_range of more than 11,000 points per series; stay below it.
MAX_POINTS = 10_000
MAX_LABEL_TEXT = 200  # tags hold labels up to this length (ingest's tag limit is 256)


class PullError(Exception):
    """What went wrong, worded for the source's last_error."""


@dataclass
class PullResult:
    source_id: int
    ok: bool
    received: int = 0
    inserted: int = 0
    skipped: int = 0  # NaN/Inf samples, which are not measurements
    error: str = ""
    windows: list[tuple[str, str]] = field(default_factory=list)


def _aligned(moment: datetime, step: int) -> datetime:
    seconds = math.floor(moment.timestamp() / step) * step
    return datetime.fromtimestamp(seconds, tz=UTC)


def _series_run_id(source: PullSource, labels: dict[str, str]) -> str:
    digest = hashlib.sha256(json.dumps(labels, sort_keys=True).encode()).hexdigest()[:12]
    return f"{run_id_prefix(source.pk)}{digest}"


def _tags(labels: dict[str, str]) -> dict[str, str]:
    return {
        k: v
        for k, v in sorted(labels.items())[:32]
        if len(k) <= 64 and len(v) <= MAX_LABEL_TEXT and k.isascii() and v.isprintable()
    }


def _query_range(
    client: httpx.Client, source: PullSource, promql: str, start: datetime, end: datetime
) -> list[dict[str, Any]]:
    try:
        response = client.get(
            f"{source.base_url.rstrip('/')}/api/v1/query_range",
            params={
                "query": promql,
                "start": start.timestamp(),
                "end": end.timestamp(),
                "step": source.step_seconds,
            },
        )
    except httpx.HTTPError as exc:
        raise PullError(f"Prometheus at {source.base_url} did not answer: {exc}") from exc
    try:
        body = response.json()
    except ValueError as exc:
        raise PullError(f"Prometheus answered {response.status_code} with a body that is not JSON.") from exc
    if response.status_code != 200 or body.get("status") != "success":
        raise PullError(f"Prometheus answered {response.status_code}: {body.get('error') or body}"[:500])
    data = body.get("data") or {}
    if data.get("resultType") != "matrix":
        raise PullError(f"query_range returned {data.get('resultType')!r}, expected a matrix.")
    return data.get("result") or []


def _rows(
    source: PullSource, workload: str, series: list[dict[str, Any]], result: PullResult
) -> list[dict[str, Any]]:
    rows = []
    for one in series:
        labels = one.get("metric") or {}
        run_id, tags = _series_run_id(source, labels), _tags(labels)
        for stamp, text in one.get("values") or []:
            value = float(text)
            if not math.isfinite(value):
                result.skipped += 1
                continue
            row = {
                "metric": source.definition.key,
                "system": source.system.key,
                "workload": workload,
                "value": value,
                "observed_at": datetime.fromtimestamp(float(stamp), tz=UTC).isoformat(),
                "run_id": run_id,
                "source": INGEST_SOURCE,
                "tags": tags,
            }
            if source.unit:
                row["unit"] = source.unit
            rows.append(row)
    return rows


def _pull(source: PullSource, since: datetime | None, until: datetime, result: PullResult) -> None:
    step = source.step_seconds
    start = (
        since or source.last_pulled_at or until - timedelta(seconds=settings.PROMETHEUS_PULL_FIRST_LOOKBACK)
    )
    start = _aligned(start, step)
    workloads = [w.key for w in source.workloads.all()]
    timeout = httpx.Timeout(settings.PROMETHEUS_PULL_TIMEOUT_SECONDS)
    with httpx.Client(timeout=timeout) as client:
        window_start = start
        while window_start <= until:
            window_end = min(until, window_start + timedelta(seconds=step * (MAX_POINTS - 1)))
            result.windows.append((window_start.isoformat(), window_end.isoformat()))
            for workload in workloads:
                promql = source.query.format(workload=workload, system=source.system.key)
                rows = _rows(
                    source, workload, _query_range(client, source, promql, window_start, window_end), result
                )
                for offset in range(0, len(rows), MAX_ROWS):
                    chunk = rows[offset : offset + MAX_ROWS]
                    try:
                        ingested = observations_ingest_rows(rows=chunk, actor=None, source=INGEST_SOURCE)
                    except ApplicationError as exc:
                        problems = "; ".join(
                            f"{e.get('field') or ''} {e.get('message') or e}".strip()
                            for e in (exc.errors or [])[:3]
                        )
                        raise PullError(
                            f"Ingest refused the samples for {workload}: {exc.message} {problems}"[:1000]
                        ) from exc
                    result.received += ingested.received
                    result.inserted += ingested.inserted
            window_start = window_end + timedelta(seconds=step)


def pull_source_run(
    source: PullSource, since: datetime | None = None, until: datetime | None = None
) -> PullResult:
    """Pull from last_pulled_at (or `since`) to now (or `until`); record success or the failure."""
    until = until or timezone.now()
    result = PullResult(source_id=source.pk, ok=True)
    try:
        _pull(source, since, until, result)
    except PullError as exc:
        result.ok, result.error = False, str(exc)
    _record(source, result, until)
    return result


def _record(source: PullSource, result: PullResult, until: datetime) -> None:
    with transaction.atomic():
        locked = PullSource.objects.select_for_update().filter(pk=source.pk).first()
        if locked is None:  # deleted while pulling
            return
        if result.ok:
            # A backfill of an older range never moves the cursor backwards.
            if locked.last_pulled_at is None or until > locked.last_pulled_at:
                locked.last_pulled_at = until
            locked.consecutive_failures = 0
            locked.save(update_fields=["last_pulled_at", "consecutive_failures"])
        else:
            locked.last_error = result.error
            locked.last_error_at = timezone.now()
            locked.consecutive_failures += 1
            locked.save(update_fields=["last_error", "last_error_at", "consecutive_failures"])
    for name in ("last_pulled_at", "last_error", "last_error_at", "consecutive_failures"):
        setattr(source, name, getattr(locked, name))


def pull_sources_run_enabled(*, metric: str | None = None, since: datetime | None = None) -> list[PullResult]:
    sources = PullSource.objects.filter(enabled=True).select_related("definition", "system").order_by("pk")
    if metric:
        sources = sources.filter(definition__key=metric)
    return [pull_source_run(source, since=since) for source in sources]
