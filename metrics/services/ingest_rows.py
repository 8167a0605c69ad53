"""Checking observation rows before they are written: no ORM objects, cached lookups.

Typed rows from the JSON fast path (`ObservationIn`) are checked column by column; anything else,
and any batch that column check refuses, goes row by row so every problem of every row is named.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
from django.utils import timezone

from metrics.ingest_formats import ObservationIn
from metrics.models import MetricDefinition, System, Workload
from metrics.units import UnitError, unit_factor

CLOCK_SKEW = timedelta(minutes=5)
# Nothing measured a rebuilt stack before 1970; earlier dates are typos (year 1 broke the daily charts).
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
# jsonb's binary wire format is a version byte (1) and the JSON text. Tags are encoded once here and
# copied as text (psycopg's C text dumper), instead of through its per-row Python JSON dumper.
JSONB_VERSION = "\x01"
EMPTY_TAGS = JSONB_VERSION + "{}"
MSG_INVALID = "{count} of {total} observations are invalid; nothing was written."


# Column positions in ValidRows.columns, which is also the order COPY writes them in.
DEFINITION, SYSTEM, WORKLOAD, VALUE, UNIT, OBSERVED_AT, RUN_ID, SOURCE, TAGS = range(9)


@dataclass
class ValidRows:
    """Checked rows as columns, ready for COPY; `indexes` are their positions in the request."""

    columns: tuple[list, ...]
    indexes: list[int]
    # False when rows may repeat a natural key within the batch: the column check leaves that to
    # the primary key (a repeat makes the direct copy fail) and to the merge, which names it.
    repeats_checked: bool = True

    def __len__(self) -> int:
        return len(self.indexes)

    def distinct(self, *positions: int) -> list:
        """Sorted distinct values of one column, or of tuples of several."""
        if len(positions) == 1:
            return sorted(set(self.columns[positions[0]]))
        return sorted(set(zip(*(self.columns[p] for p in positions), strict=True)))


class Lookups:
    """Per-batch caches of reference data, so a 10,000-row batch does a handful of queries."""

    def __init__(self) -> None:
        self.systems = dict(System.objects.values_list("key", "id"))
        self.workloads = dict(Workload.objects.values_list("key", "id"))
        self.definitions: dict[str, MetricDefinition | str] = {}
        self._versions: dict[str, list[MetricDefinition]] | None = None

    def refs(self, ids: list[int]) -> list[str]:
        """Sorted key@N of the resolved definitions with these ids."""
        found = {d.pk: d for d in self.definitions.values() if isinstance(d, MetricDefinition)}
        return sorted(found[pk].ref for pk in ids)

    def definition(self, ref: Any) -> MetricDefinition | str:
        """The definition `ref` names, or an error message."""
        cached = self.definitions.get(ref) if isinstance(ref, str) else None
        if cached is not None:
            return cached
        result = self._resolve(ref)
        if isinstance(ref, str):
            self.definitions[ref] = result
        return result

    def _resolve(self, ref: Any) -> MetricDefinition | str:
        if not isinstance(ref, str) or not ref:
            return "metric is required: 'key' (its active version) or 'key@N'."
        if self._versions is None:
            self._versions = {}
            for definition in MetricDefinition.objects.all():
                self._versions.setdefault(definition.key, []).append(definition)
        key, _, version = ref.partition("@")
        versions = self._versions.get(key)
        if not versions:
            return f"unknown metric '{key}'."
        if not version:
            active = [d for d in versions if d.status == MetricDefinition.Status.ACTIVE]
            return active[0] if active else f"metric '{key}' has no active version."
        chosen = next((d for d in versions if str(d.version) == version), None)
        if chosen is None:
            return f"unknown version '{ref}'."
        if chosen.status != MetricDefinition.Status.ACTIVE:
            return f"{ref} is {chosen.status}; observations go to the active version only."
        return chosen


def _parse_value(raw: Any) -> float | str:
    if isinstance(raw, bool) or raw is None:
        return "value must be a number."
    if isinstance(raw, int | float):
        try:
            number = float(raw)
        except OverflowError:  # an integer literal beyond float range
            return "value is out of range (beyond ±1.8e308)."
    elif isinstance(raw, str):
        try:
            number = float(raw)
        except ValueError:
            return f"value '{raw[:40]}' is not a number."
    else:
        return "value must be a number."
    if not math.isfinite(number):
        return "value must be finite (not NaN or infinite)."
    return number


def _parse_time(raw: Any, latest: datetime) -> datetime | str:
    if isinstance(raw, datetime):  # a typed row from the JSON fast path, already parsed
        moment = raw
    elif not isinstance(raw, str):
        return "observed_at must be an ISO 8601 timestamp with a timezone."
    else:
        try:
            moment = datetime.fromisoformat(raw)
        except ValueError:
            return f"observed_at '{raw[:40]}' is not an ISO 8601 timestamp."
    if moment.tzinfo is None:
        return "observed_at needs a timezone (e.g. '…Z' or '+00:00')."
    if moment > latest:
        return "observed_at is more than 5 minutes in the future."
    if moment < EARLIEST:
        return "observed_at is before 1970-01-01."
    return moment


MSG_TAGS = "tags must be a JSON object without NUL characters or non-finite numbers."


def _known(ids: dict[str, int], key: Any) -> int | None:
    return ids.get(key) if isinstance(key, str) else None


def _finite_json(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite_json(item) for item in value.values())
    if isinstance(value, list):
        return all(_finite_json(item) for item in value)
    return True


def _tags_wire(tags: Any) -> str | None:
    """Tags as jsonb wire text, or None when they are not an object jsonb can hold."""
    if not tags:
        return EMPTY_TAGS
    if not isinstance(tags, dict):
        return None
    try:
        encoded = orjson.dumps(tags)
    except orjson.JSONEncodeError:  # integers beyond 64 bits, which jsonb keeps as numeric
        try:
            encoded = json.dumps(tags, allow_nan=False, separators=(",", ":")).encode()
        except (TypeError, ValueError):
            return None
    # jsonb refuses an escaped NUL; a raw one cannot appear in encoded JSON.
    return None if b"\\u0000" in encoded else JSONB_VERSION + encoded.decode()


def _text_problem(name: str, text: Any, limit: int) -> str | None:
    if not isinstance(text, str) or len(text) > limit:
        return f"{name} must be text of ≤{limit} characters."
    if "\x00" in text:  # PostgreSQL text cannot hold U+0000
        return f"{name} cannot contain the NUL character (U+0000)."
    return None


def check_typed_rows(rows: list[ObservationIn], lookups: Lookups) -> ValidRows | None:
    """The whole batch checked column by column; None if any row fails (the row-by-row check then
    names every problem). Types, lengths and timezones were already checked while decoding."""
    definitions: dict[str, MetricDefinition] = {}
    for ref in {row.metric for row in rows}:
        definition = lookups.definition(ref)
        if isinstance(definition, str):
            return None
        definitions[ref] = definition
    systems, workloads = lookups.systems, lookups.workloads
    try:
        system_ids = [systems[row.system] for row in rows]
        workload_ids = [workloads[row.workload] for row in rows]
    except KeyError:
        return None
    observed = [row.observed_at for row in rows]
    if max(observed) > timezone.now() + CLOCK_SKEW or min(observed) < EARLIEST:
        return None
    metrics = [row.metric for row in rows]
    definition_unit = {ref: definition.unit for ref, definition in definitions.items()}
    units = [row.unit or definition_unit[row.metric] for row in rows]
    values = [row.value for row in rows]
    factors = {}
    for ref, unit in set(zip(metrics, units, strict=True)):
        if unit != definition_unit[ref]:
            try:
                factors[ref, unit] = unit_factor(unit, definition_unit[ref])
            except UnitError:
                return None
    if factors:
        values = [
            value * factors.get(pair, 1.0)
            for value, pair in zip(values, zip(metrics, units, strict=True), strict=True)
        ]
    if not all(map(math.isfinite, values)):
        return None
    definition_id = {ref: definition.pk for ref, definition in definitions.items()}
    columns = (
        [definition_id[ref] for ref in metrics],
        system_ids,
        workload_ids,
        values,
        units,
        observed,
        [row.run_id for row in rows],
        [row.source for row in rows],
        [_tags_wire(row.tags) for row in rows],
    )
    if None in columns[TAGS]:
        return None
    # Hashing 10,000 fresh timezone-aware datetimes to look for repeats took a fifth of the request.
    return ValidRows(columns, list(range(len(rows))), repeats_checked=False)


def repeat_error(index: int, first_index: int, first_value: float) -> dict[str, Any]:
    return {
        "index": index,
        "field": "value",
        "message": f"row {first_index} has the same metric, system, workload, run_id and observed_at "
        f"with value {first_value}.",
    }


def check_rows(rows: list[Any], lookups: Lookups) -> tuple[ValidRows, list[dict[str, Any]]]:
    """Row by row: (the good rows, an error for every problem of every bad row)."""
    latest = timezone.now() + CLOCK_SKEW
    errors: list[dict[str, Any]] = []
    out: list[tuple] = []
    seen: dict[tuple, tuple[float, int]] = {}
    systems, workloads = lookups.systems, lookups.workloads
    for index, row in enumerate(rows):
        if not isinstance(row, dict):
            errors.append({"index": index, "field": None, "message": "each observation must be an object."})
            continue
        row_errors = len(errors)
        definition = lookups.definition(row.get("metric"))
        if isinstance(definition, str):
            errors.append({"index": index, "field": "metric", "message": definition})
        system_id = _known(systems, row.get("system"))
        if system_id is None:
            errors.append(
                {"index": index, "field": "system", "message": f"unknown system '{row.get('system')}'."}
            )
        workload_id = _known(workloads, row.get("workload"))
        if workload_id is None:
            errors.append(
                {"index": index, "field": "workload", "message": f"unknown workload '{row.get('workload')}'."}
            )
        value = _parse_value(row.get("value"))
        if isinstance(value, str):
            errors.append({"index": index, "field": "value", "message": value})
        observed_at = _parse_time(row.get("observed_at"), latest)
        if isinstance(observed_at, str):
            errors.append({"index": index, "field": "observed_at", "message": observed_at})
        unit = row.get("unit")
        if not isinstance(definition, str):
            unit = unit or definition.unit
            problem = _text_problem("unit", unit, 40)
            if problem:
                errors.append({"index": index, "field": "unit", "message": problem})
            elif unit != definition.unit:
                try:
                    factor = unit_factor(unit, definition.unit)
                except UnitError as exc:
                    errors.append({"index": index, "field": "unit", "message": str(exc)})
                else:
                    if not isinstance(value, str):
                        value = value * factor
                        if not math.isfinite(value):
                            errors.append({"index": index, "field": "value", "message": "value overflows."})
        run_id = row.get("run_id") or ""
        source = row.get("source") or ""
        tags = row.get("tags") or {}
        for name, text, limit in (("run_id", run_id, 120), ("source", source, 100)):
            problem = _text_problem(name, text, limit)
            if problem:
                errors.append({"index": index, "field": name, "message": problem})
        # The lenient JSON parser lets NaN through; orjson would write it as null without a word.
        tags_text = _tags_wire(tags) if _finite_json(tags) else None
        if tags_text is None:
            errors.append({"index": index, "field": "tags", "message": MSG_TAGS})
        if len(errors) > row_errors:
            continue
        definition_id = definition.pk
        natural_key = (definition_id, system_id, workload_id, run_id, observed_at)
        previous = seen.get(natural_key)
        if previous is not None:
            if previous[0] != value:
                errors.append(repeat_error(index, previous[1], previous[0]))
            continue
        seen[natural_key] = (value, index)
        out.append(
            (
                index,
                definition_id,
                system_id,
                workload_id,
                value,
                unit,
                observed_at,
                run_id,
                source,
                tags_text,
            )
        )
    indexes, *columns = zip(*out, strict=True) if out else ((),) * 10
    return ValidRows(tuple(list(column) for column in columns), list(indexes)), errors
