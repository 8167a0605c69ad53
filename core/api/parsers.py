"""Reading JSON from clients: a nesting limit, and no lone UTF-16 surrogates.

Python's json module recursed into a RecursionError (a 500) on a body nested ~1,000 deep, and it
accepts an escaped lone surrogate ("\\ud800"), which is not Unicode: PostgreSQL cannot store it and
the JSON renderer cannot echo it back in an error, so either was a 500. orjson refuses both, and is
tried first; what it refuses is read again by the standard parser (which also takes integers beyond
64 bits, and NaN where a caller allows it), then checked here, so the answer can name the field.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import IO, Any

import orjson
from rest_framework import parsers

from core.errors import ApplicationError

# Deeper than any body the API defines (observation tags stop at 4); far below the ~1,000 levels
# where the standard library's parser, encoder and repr() raise RecursionError.
MAX_DEPTH = 64
SURROGATE = re.compile("[\ud800-\udfff]")
MSG_TOO_DEEP = "nested deeper than {limit} levels."
MSG_UNREADABLE = "nested too deeply to be read."
MSG_SURROGATE = "contains a lone UTF-16 surrogate ({code}), which is not valid Unicode."


class JSONProblem(ValueError):
    """Why a JSON text was refused; `path` is the dotted path to the offending value ("" for the whole)."""

    def __init__(self, message: str, path: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.path = path


def shown(text: str, limit: int = 40) -> str:
    """`text` safe to echo in a message: shortened, lone surrogates written as \\udxxx escapes."""
    short = text if len(text) <= limit else text[:limit] + "…"
    return short.encode("utf-8", "backslashreplace").decode("utf-8")


def surrogate_problem(text: str) -> str | None:
    """The message for a string holding a lone surrogate, else None (cheap for ASCII)."""
    if text.isascii():
        return None
    found = SURROGATE.search(text)
    return MSG_SURROGATE.format(code=f"\\u{ord(found.group()):04x}") if found else None


def json_loads(raw: bytes | str, *, max_depth: int | None = MAX_DEPTH, allow_nan: bool = False) -> Any:
    """The document in `raw`; JSONProblem when it is not JSON, nests deeper than `max_depth` or
    holds a lone surrogate. With `allow_nan`, NaN and ±Infinity are read as floats.

    `max_depth=None` reads as deep as the parsers can (about 1,000 levels) and skips both checks:
    for callers that check every value themselves (observation rows), where a full walk costs."""
    try:
        document = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        document = _standard_loads(raw, allow_nan, max_depth, orjson_error=exc)
        # Only the standard parser lets lone surrogates through: only its documents need the text check.
        check_text = True
    else:
        check_text = False
    if max_depth is None:
        return document
    try:
        if isinstance(document, dict | list):
            _walk(document, 1, max_depth, check_text)
        elif check_text and isinstance(document, str):
            _refuse_surrogate(document, "")
    except _Found as found:
        raise JSONProblem(found.message, ".".join(found.path)) from None
    return document


def _standard_loads(
    raw: bytes | str, allow_nan: bool, max_depth: int | None, *, orjson_error: Exception
) -> Any:
    def refuse_constant(name: str) -> float:
        raise ValueError(f"{name} is not a JSON number")

    try:
        return json.loads(raw, parse_constant=None if allow_nan else refuse_constant)
    except RecursionError as exc:
        # orjson stopped at its own limit (1,024 levels); the standard parser ran out of stack.
        raise JSONProblem(MSG_TOO_DEEP.format(limit=max_depth) if max_depth else MSG_UNREADABLE) from exc
    except (ValueError, UnicodeDecodeError) as exc:
        raise JSONProblem(f"not valid JSON: {orjson_error}") from exc


class _Found(Exception):
    """A problem found while walking; the path is filled in on the way out. Too deep is reported at
    the top-level field: a path as long as the nesting helps nobody."""

    def __init__(self, message: str, *, top_only: bool = False) -> None:
        self.message = message
        self.top_only = top_only
        self.path: list[str] = []


def _refuse_surrogate(text: str, prefix: str) -> None:
    problem = surrogate_problem(text)
    if problem:
        raise _Found(prefix + problem)


def _walk(node: dict[Any, Any] | list[Any], depth: int, max_depth: int, check_text: bool) -> None:
    """Recursion is bounded by `max_depth`, so it cannot run out of stack."""
    if depth > max_depth:
        raise _Found(MSG_TOO_DEEP.format(limit=max_depth), top_only=True)
    for key, value in node.items() if isinstance(node, dict) else enumerate(node):
        try:
            if check_text:
                if isinstance(key, str):
                    _refuse_surrogate(key, "a key ")
                if isinstance(value, str):
                    _refuse_surrogate(value, "")
            if isinstance(value, dict | list):
                _walk(value, depth + 1, max_depth, check_text)
        except _Found as found:
            if found.top_only:
                found.path = [shown(str(key))]
            else:
                found.path.insert(0, shown(str(key)))
            raise


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser on `json_loads`: a 400 naming the problem (and the field), never a 500."""

    def parse(
        self,
        stream: IO[bytes],
        media_type: str | None = None,
        parser_context: Mapping[str, Any] | None = None,
    ) -> Any:
        # DRF's own helper (the charset of the Content-Type, or DEFAULT_CHARSET); the stub lacks it.
        encoding: str = parsers.get_encoding(parser_context or {})  # type: ignore[attr-defined]
        try:
            text = stream.read().decode(encoding)
        except UnicodeDecodeError as exc:
            raise ApplicationError(f"The body is not valid {encoding}.", status=400, field="body") from exc
        try:
            return json_loads(text, allow_nan=not self.strict)
        except JSONProblem as exc:
            raise json_error(exc) from exc


def json_error(problem: JSONProblem, *, field: str = "body") -> ApplicationError:
    """A 400 naming the field where the problem is (`field` when it is the whole body)."""
    named = problem.path or field
    return ApplicationError(
        f"{named}: {problem.message}", status=400, errors=[{"field": named, "message": problem.message}]
    )


class RawBodyParser(parsers.BaseParser):
    """Hands the body over untouched, for endpoints that decode it themselves (observation ingest in
    JSON, NDJSON and CSV; OTLP protobuf; incident CSV import), fast."""

    media_type = "*/*"

    # DRF hands request.data whatever a parser returns; the stub allows only mappings.
    def parse(  # type: ignore[override]
        self,
        stream: IO[bytes] | None,
        media_type: str | None = None,
        parser_context: Mapping[str, Any] | None = None,
    ) -> bytes:
        return stream.read() if stream is not None else b""
