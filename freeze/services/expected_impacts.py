"""The expected impact of an exception: for each gate metric it names (affected_metrics), the
direction and size the requester expects. Set with the metrics on create and edit (a list replaces
the whole set; a metric no longer named loses its expectation). A draft may lack some; submitting,
or editing a submitted or approved exception, needs one per named metric, so every exception that
can be approved says what it expects. Not material: like naming a metric, stating an expectation
changes what is watched, not what ships. Each refusal is a 400 naming the entry's field."""

from __future__ import annotations

from typing import Any, TypedDict

from core.errors import ApplicationError
from freeze.models import ExpectedImpact, FreezeException

MSG_LIST = "expected_impacts must be a list of {metric, direction, size_pct}."
MSG_METRIC = "'{key}' is not among the gate metrics this exception may affect ({known})."
MSG_TWICE = "'{key}' has an expected impact already; give one per metric."
MSG_DIRECTION = "direction must be one of {choices}."
MSG_SIZE = "size_pct must be a number of percent from 0 to 1000."
MSG_MISSING = (
    "State the expected impact (direction and size) on {keys}: every gate metric it may affect needs one."
)
MAX_SIZE = 1000.0


class ImpactInput(TypedDict):
    metric: str
    direction: str
    size_pct: float


def _entry(index: int, entry: Any, by_key: dict[str, Any], seen: set[str]) -> ExpectedImpact:
    where = f"expected_impacts[{index}]"
    if not isinstance(entry, dict):
        raise ApplicationError(MSG_LIST, status=400, field=where)
    key = entry.get("metric")
    if not isinstance(key, str) or key not in by_key:
        known = ", ".join(sorted(by_key)) or "none named"
        raise ApplicationError(MSG_METRIC.format(key=key, known=known), status=400, field=f"{where}.metric")
    if key in seen:
        raise ApplicationError(MSG_TWICE.format(key=key), status=400, field=f"{where}.metric")
    seen.add(key)
    direction = entry.get("direction")
    if direction not in ExpectedImpact.Direction.values:
        choices = ", ".join(ExpectedImpact.Direction.values)
        raise ApplicationError(MSG_DIRECTION.format(choices=choices), status=400, field=f"{where}.direction")
    size = entry.get("size_pct")
    if isinstance(size, bool) or not isinstance(size, int | float) or not 0 <= size <= MAX_SIZE:
        raise ApplicationError(MSG_SIZE, status=400, field=f"{where}.size_pct")
    return ExpectedImpact(metric=by_key[key], direction=direction, size_pct=float(size))


def expected_impacts_set(exception: FreezeException, entries: Any | None) -> bool:
    """Replace the expectations with `entries` (None: keep them, dropping those of metrics no longer
    named). True if anything changed. Call after the affected metrics are set."""
    by_key = {m.key: m for m in exception.affected_metrics.all()}
    current = {
        (i.metric.key, i.direction, i.size_pct) for i in exception.expected_impacts.select_related("metric")
    }
    if entries is None:
        dropped = exception.expected_impacts.exclude(metric__key__in=list(by_key)).delete()[0]
        return dropped > 0
    if not isinstance(entries, list):
        raise ApplicationError(MSG_LIST, status=400, field="expected_impacts")
    seen: set[str] = set()
    wanted = [_entry(index, entry, by_key, seen) for index, entry in enumerate(entries)]
    if {(i.metric.key, i.direction, i.size_pct) for i in wanted} == current:
        return False
    exception.expected_impacts.all().delete()
    for impact in wanted:
        impact.exception = exception
    ExpectedImpact.objects.bulk_create(wanted)
    return True


def expected_impacts_complete_check(exception: FreezeException) -> None:
    """Refuse (400, `expected_impacts`) while a named gate metric has no stated expectation."""
    stated = set(exception.expected_impacts.values_list("metric__key", flat=True))
    missing = sorted(set(exception.affected_metrics.values_list("key", flat=True)) - stated)
    if missing:
        raise ApplicationError(
            MSG_MISSING.format(keys=", ".join(missing)), status=400, field="expected_impacts"
        )
