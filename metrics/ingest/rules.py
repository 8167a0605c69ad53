"""The one set of rules an observation row must pass, each written once.

The one check (check.check_rows) asks each row these `*_problem` / `*_parse` forms, which name what
is wrong. A rule's limit and message live here only; the typed JSON decoder (formats.batch) takes its
text limits from TEXT_LIMITS too.
"""

from __future__ import annotations

import json
import math
import re
from datetime import UTC, datetime, timedelta
from typing import Any, NoReturn

import orjson
from django.utils import timezone

from core.api.parsers import SURROGATE, shown, surrogate_problem
from metrics.models import MetricDefinition
from metrics.units import UnitError, unit_factor

MSG_INVALID = "{count} of {total} observations are invalid; nothing was written."

# --- time: no future (beyond clock skew), nothing before 1970 ----------------------------------------

CLOCK_SKEW = timedelta(minutes=5)
# Nothing measured a rebuilt stack before 1970; earlier dates are typos (year 1 broke the daily charts).
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)


def time_latest() -> datetime:
    """The latest observed_at a batch checked now may hold."""
    return timezone.now() + CLOCK_SKEW


def time_parse(raw: Any, latest: datetime) -> datetime | str:
    """Row form: the moment in UTC, or why it is refused."""
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


# --- value: a finite number in decimal notation, within the definition's bounds -----------------------

# A value is a JSON number, or text in the same decimal notation (CSV has only text). Python's float()
# also reads "1_000", "١٢", " 1 " and "infinity", which are not numbers to anyone else.
NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
MSG_NOT_FINITE = "value must be finite (not NaN or infinite)."
MSG_OVERFLOW = "value overflows."


is_finite = math.isfinite  # also for a value after unit conversion


def value_parse(raw: Any) -> float | str:
    """Row form: the number, or why it is refused."""
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
    if not is_finite(number):
        return MSG_NOT_FINITE
    return number


def bound_problem(value: float, definition: MetricDefinition) -> str | None:
    """Bounds are in the definition's unit, as `value` is after conversion."""
    low, high = definition.min_value, definition.max_value
    if low is not None and value < low:
        return f"value {value:g} {definition.unit} is below the minimum of {definition.ref}, {low:g} {definition.unit}."
    if high is not None and value > high:
        return f"value {value:g} {definition.unit} is above the maximum of {definition.ref}, {high:g} {definition.unit}."
    return None


# --- unit: convertible to the definition's ----------------------------------------------------------


def unit_conversion(unit: str, definition: MetricDefinition) -> float | str:
    """The factor from `unit` to the definition's unit (1.0 when the same), or why it cannot convert."""
    if unit == definition.unit:
        return 1.0
    try:
        return unit_factor(unit, definition.unit)
    except UnitError as exc:
        return str(exc)


# --- references: metric (see check.Lookups), system, workload ---------------------------------------


def reference_problem(name: str, key: Any) -> str:
    # Never repr() the value: a list nested 1,000 deep raises RecursionError there.
    return f"unknown {name} '{shown(key)}'." if isinstance(key, str) else f"{name} must be a key (text)."


# --- text fields: length, no NUL, no lone surrogate ----------------------------------------------------

TEXT_LIMITS = {"unit": 40, "run_id": 120, "source": 100}


def _text_limit(what: str, text: str, limit: int) -> str | None:
    if len(text) > limit:
        return f"{what} is {len(text):,} characters; the limit is {limit}."
    if "\x00" in text:  # PostgreSQL text and jsonb cannot hold U+0000
        return f"{what} contains the NUL character (U+0000)."
    # Nor can they, or the error renderer, encode a lone surrogate.
    problem = surrogate_problem(text)
    return f"{what} {problem}" if problem else None


def text_problem(name: str, text: Any) -> str | None:
    limit = TEXT_LIMITS[name]
    if not isinstance(text, str):
        return f"{name} must be text of ≤{limit} characters."
    return _text_limit(name, text, limit)


# --- natural key: one value per (metric, system, workload, run_id, observed_at) -----------------------


def repeat_error(index: int, first_index: int, first_value: float) -> dict[str, Any]:
    return {
        "index": index,
        "field": "value",
        "message": f"row {first_index} has the same metric, system, workload, run_id and observed_at "
        f"with value {first_value}.",
    }


# --- tags: room for labels (host, rack, commit, a small config), not for payloads --------------------

# Each broken limit is a row error on `tags` naming the key. README "Ingest limits" lists them.
MAX_TAG_ITEMS = 64  # keys of one object, items of one list
MAX_TAG_KEY_LENGTH = 64  # characters
MAX_TAG_TEXT_LENGTH = 256  # characters of one string value
MAX_TAG_DEPTH = 4  # {"a": {"b": {"c": {"d": 1}}}} is 4 levels
MAX_TAG_BYTES = 4096  # the tags encoded as JSON
# jsonb's binary wire format is a version byte (1) and the JSON text. Tags are encoded once here and
# copied as text (psycopg's C text dumper), instead of through its per-row Python JSON dumper.
JSONB_VERSION = "\x01"
EMPTY_TAGS = JSONB_VERSION + "{}"


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


def _tags_walk(node: dict[str, Any] | list[Any], depth: int, seen: int) -> int:
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
    for key, value in node.items() if isinstance(node, dict) else enumerate(node):
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
