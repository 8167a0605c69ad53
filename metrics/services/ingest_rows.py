"""Checking observation rows before they are written: no ORM objects, cached lookups.

Typed rows from the JSON fast path (`ObservationIn`) are checked column by column; anything else,
and any batch that column check refuses, goes row by row so every problem of every row is named.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, NoReturn

import orjson
from django.utils import timezone

from core.api.parsers import SURROGATE, shown, surrogate_problem
from metrics.ingest_formats import ObservationIn, Unreadable
from metrics.models import MetricDefinition
from metrics.services.ingest_lookups import Lookups
from metrics.units import UnitError, unit_factor

CLOCK_SKEW = timedelta(minutes=5)
# Nothing measured a rebuilt stack before 1970; earlier dates are typos (year 1 broke the daily charts).
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
# jsonb's binary wire format is a version byte (1) and the JSON text. Tags are encoded once here and
# copied as text (psycopg's C text dumper), instead of through its per-row Python JSON dumper.
JSONB_VERSION = "\x01"
EMPTY_TAGS = JSONB_VERSION + "{}"
MSG_INVALID = "{count} of {total} observations are invalid; nothing was written."

# Limits on one row's tags: room for labels (host, rack, commit, a small config), not for payloads.
# Each broken limit is a row error on `tags` naming the key. README "Ingest limits" lists them.
MAX_TAG_ITEMS = 64  # keys of one object, items of one list
MAX_TAG_KEY_LENGTH = 64  # characters
MAX_TAG_TEXT_LENGTH = 256  # characters of one string value
MAX_TAG_DEPTH = 4  # {"a": {"b": {"c": {"d": 1}}}} is 4 levels
MAX_TAG_BYTES = 4096  # the tags encoded as JSON
# A value is a JSON number, or text in the same decimal notation (CSV has only text). Python's float()
# also reads "1_000", "١٢", " 1 " and "infinity", which are not numbers to anyone else.
NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


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


def _parse_value(raw: Any) -> float | str:
    if isinstance(raw, bool) or raw is None:
        return "value must be a number."
    if isinstance(raw, int | float):
        try:
            number = float(raw)
        except OverflowError:  # an integer literal beyond float range
            return "value is out of range (beyond ±1.8e308)."
    elif isinstance(raw, str):
        if not NUMBER.fullmatch(raw):
            return f"value '{shown(raw)}' is not a number in decimal notation (e.g. 1000, 0.25, 1e-05)."
        number = float(raw)
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
            return f"observed_at '{shown(raw)}' is not an ISO 8601 timestamp."
    if moment.tzinfo is None:
        return "observed_at needs a timezone (e.g. '…Z' or '+00:00')."
    if moment > latest:
        return "observed_at is more than 5 minutes in the future."
    if moment < EARLIEST:
        return "observed_at is before 1970-01-01."
    # PostgreSQL takes UTC offsets only up to ±15:59; Python up to ±23:59.
    return moment.astimezone(UTC)


def _known(ids: dict[str, int], key: Any) -> int | None:
    return ids.get(key) if isinstance(key, str) else None


def _unknown(name: str, key: Any) -> str:
    # Never repr() the value: a list nested 1,000 deep raises RecursionError there.
    return f"unknown {name} '{shown(key)}'." if isinstance(key, str) else f"{name} must be a key (text)."


class TagsError(ValueError):
    """The first tags limit a row breaks; `path` leads to the key (tags.host.name)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
        self.path: list[str] = ["tags"]

    def __str__(self) -> str:
        return f"{'.'.join(self.path)}: {self.message}"


def tags_wire(tags: Any) -> str:
    """Tags as jsonb wire text; TagsError when they are not an object within the limits."""
    if not tags:
        return EMPTY_TAGS
    if not isinstance(tags, dict):
        raise TagsError("must be a JSON object.")
    _tags_walk(tags, 1, 0)
    try:
        encoded = orjson.dumps(tags)
    except orjson.JSONEncodeError:  # integers beyond 64 bits, which jsonb keeps as numeric
        encoded = json.dumps(tags, separators=(",", ":")).encode()
    if len(encoded) > MAX_TAG_BYTES:
        raise TagsError(f"{len(encoded):,} bytes as JSON; the limit is {MAX_TAG_BYTES:,}.")
    return JSONB_VERSION + encoded.decode()


def _tags_walk(node: dict | list, depth: int, seen: int) -> int:
    """Check one object or list and what it holds; returns the values seen so far. Recursion stops at
    MAX_TAG_DEPTH and the count at the byte limit, so a huge value costs no more than a small one.
    Every tagged row of a batch passes here: the common case (short plain text) is kept to a few
    builtin calls per value, and only a value that fails is looked at again to say why."""
    if depth > MAX_TAG_DEPTH:
        raise TagsError(f"nested deeper than {MAX_TAG_DEPTH} levels.")
    if len(node) > MAX_TAG_ITEMS:
        raise TagsError(
            f"{len(node):,} {'keys' if isinstance(node, dict) else 'items'}; the limit is {MAX_TAG_ITEMS}."
        )
    seen += len(node)
    if seen > MAX_TAG_BYTES // 2:  # every value takes at least two bytes of JSON ("1,")
        raise TagsError(f"more than {MAX_TAG_BYTES:,} bytes as JSON.")
    is_object = isinstance(node, dict)
    for key, value in node.items() if is_object else enumerate(node):
        kind = type(value)
        if (
            (is_object and type(key) is str and _odd_text(key, MAX_TAG_KEY_LENGTH))
            or (kind is str and _odd_text(value, MAX_TAG_TEXT_LENGTH))
            or (kind is float and not math.isfinite(value))
        ):
            _refuse_tag(key, value)
        if kind is dict or kind is list:
            try:
                seen = _tags_walk(value, depth + 1, seen)
            except TagsError as error:
                error.path.insert(1, shown(str(key)))
                raise
    return seen


def _odd_text(text: str, limit: int) -> bool:
    return len(text) > limit or "\x00" in text or (not text.isascii() and SURROGATE.search(text) is not None)


def _refuse_tag(key: Any, value: Any) -> NoReturn:
    """Why this key or value broke a limit, as a TagsError at tags.<key>."""
    problem = None
    if isinstance(key, str):
        problem = _text_limit("the key", key, MAX_TAG_KEY_LENGTH)
    if isinstance(value, str) and not problem:
        problem = _text_limit("the value", value, MAX_TAG_TEXT_LENGTH)
    # The lenient JSON parser lets NaN through; orjson would write it as null without a word.
    error = TagsError(problem or "numbers must be finite (not NaN or infinite).")
    error.path.append(shown(str(key)))
    raise error


def _text_limit(what: str, text: str, limit: int) -> str | None:
    if len(text) > limit:
        return f"{what} is {len(text):,} characters; the limit is {limit}."
    if "\x00" in text:  # PostgreSQL text and jsonb cannot hold U+0000
        return f"{what} contains the NUL character (U+0000)."
    # Nor can they, or the error renderer, encode a lone surrogate.
    problem = surrogate_problem(text)
    return f"{what} {problem}" if problem else None


def _text_problem(name: str, text: Any, limit: int) -> str | None:
    if not isinstance(text, str):
        return f"{name} must be text of ≤{limit} characters."
    return _text_limit(name, text, limit)


def _bound_problem(value: float, definition: MetricDefinition) -> str | None:
    """Bounds are in the definition's unit, as `value` is after conversion."""
    low, high = definition.min_value, definition.max_value
    if low is not None and value < low:
        return f"value {value:g} {definition.unit} is below the minimum of {definition.ref}, {low:g} {definition.unit}."
    if high is not None and value > high:
        return f"value {value:g} {definition.unit} is above the maximum of {definition.ref}, {high:g} {definition.unit}."
    return None


def _typed_tags(tags: dict | None) -> str | None:
    try:
        return tags_wire(tags)
    except TagsError:
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
    bounded = {ref for ref, d in definitions.items() if d.min_value is not None or d.max_value is not None}
    if bounded and any(
        _bound_problem(value, definitions[ref])
        for value, ref in zip(values, metrics, strict=True)
        if ref in bounded
    ):
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
        [_typed_tags(row.tags) for row in rows],
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
        if isinstance(row, Unreadable):
            errors.append({"index": index, "field": row.field, "message": row.message})
            continue
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
                {"index": index, "field": "system", "message": _unknown("system", row.get("system"))}
            )
        workload_id = _known(workloads, row.get("workload"))
        if workload_id is None:
            errors.append(
                {"index": index, "field": "workload", "message": _unknown("workload", row.get("workload"))}
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
            if isinstance(value, float) and math.isfinite(value):
                problem = _bound_problem(value, definition)
                if problem:
                    errors.append({"index": index, "field": "value", "message": problem})
        run_id = row.get("run_id") or ""
        source = row.get("source") or ""
        tags = row.get("tags") or {}
        for name, text, limit in (("run_id", run_id, 120), ("source", source, 100)):
            problem = _text_problem(name, text, limit)
            if problem:
                errors.append({"index": index, "field": name, "message": problem})
        if isinstance(tags, Unreadable):
            errors.append({"index": index, "field": "tags", "message": tags.message})
        else:
            try:
                tags_text = tags_wire(tags)
            except TagsError as error:
                errors.append({"index": index, "field": "tags", "message": str(error)})
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
