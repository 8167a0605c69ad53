"""Tag filters and the group-by key of a sliced comparison: parsed and checked once, for the API,
the comparison page and a criterion's `tag_filters` / `group_by`.

A filter is {key: [values]}: a row matches when, for every key (AND), its tag equals one of the
values (OR). Values are text and match text tags only (`tags.cluster=3` does not match the number 3):
the same jsonb containment the SQL runs (slices.TAG_MATCH). Keys and values keep the ingest's tag
limits (metrics.ingest.rules), so a filter can name anything a row can carry and nothing it cannot.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.api.parsers import shown, surrogate_problem
from core.errors import ApplicationError
from metrics.ingest.rules import MAX_TAG_ITEMS, MAX_TAG_KEY_LENGTH, MAX_TAG_TEXT_LENGTH

PREFIX = "tags."
TagFilters = dict[str, list[str]]


def _text_problem(what: str, text: Any, limit: int) -> str | None:
    if not isinstance(text, str) or not text:
        return f"{what} must be non-empty text."
    if len(text) > limit:
        return f"{what} is {len(text):,} characters; the limit is {limit}."
    if "\x00" in text:
        return f"{what} contains the NUL character (U+0000)."
    problem = surrogate_problem(text)
    return f"{what} {problem}" if problem else None


def _refuse(field: str, message: str) -> None:
    raise ApplicationError(message, status=400, field=field)


def tag_filters_check(filters: Any, *, field: str = "tag_filters") -> TagFilters:
    """{key: [values]} within the tag limits, values de-duplicated in their order; 400 naming `field`
    (the API's query names each parameter, tags.<key>, instead)."""
    if filters in (None, ""):
        return {}
    if not isinstance(filters, dict):
        _refuse(field, 'must be an object of tag keys to lists of values, e.g. {"severity": ["sev1"]}.')
    if len(filters) > MAX_TAG_ITEMS:
        _refuse(field, f"{len(filters)} keys; the limit is {MAX_TAG_ITEMS}.")
    checked: TagFilters = {}
    for key, values in filters.items():
        problem = _text_problem("the key", key, MAX_TAG_KEY_LENGTH)
        if problem:
            _refuse(field, f"{shown(str(key))}: {problem}")
        if isinstance(values, str):
            values = [values]
        if not isinstance(values, list) or not values:
            _refuse(field, f"{key}: needs a non-empty list of values.")
        if len(values) > MAX_TAG_ITEMS:
            _refuse(field, f"{key}: {len(values)} values; the limit is {MAX_TAG_ITEMS}.")
        for value in values:
            problem = _text_problem("a value", value, MAX_TAG_TEXT_LENGTH)
            if problem:
                _refuse(field, f"{key}: {problem}")
        checked[key] = list(dict.fromkeys(values))
    return checked


def group_by_check(group_by: Any, *, field: str = "group_by") -> str | None:
    if group_by in (None, ""):
        return None
    problem = _text_problem("group_by", group_by, MAX_TAG_KEY_LENGTH)
    if problem:
        _refuse(field, problem)
    return str(group_by)  # _text_problem refused anything but a string


def tag_filters_from_query(params: Mapping[str, Any]) -> TagFilters:
    """`tags.<key>=<value>` parameters (a QueryDict's repeated values, or one value per key of a plain
    mapping); a bad one is a 400 naming that parameter."""
    filters: TagFilters = {}
    for name in params:
        if not name.startswith(PREFIX):
            continue
        values = params.getlist(name) if hasattr(params, "getlist") else [params[name]]
        values = [v for v in values if v != ""] or values
        key = name[len(PREFIX) :]
        tag_filters_check({key: values}, field=name)
        filters[key] = list(dict.fromkeys(values))
    if len(filters) > MAX_TAG_ITEMS:
        _refuse("tags", f"{len(filters)} tag filters; the limit is {MAX_TAG_ITEMS}.")
    return filters


def tag_filters_text(filters: TagFilters) -> str:
    """severity in (sev1, sev2) and cluster = a: how pages and reasons show a filter."""
    parts = []
    for key, values in filters.items():
        parts.append(f"{key} = {values[0]}" if len(values) == 1 else f"{key} in ({', '.join(values)})")
    return " and ".join(parts)


def tag_filters_from_text(text: str, *, field: str = "tag_filters") -> dict[str, list[str]]:
    """ "severity=sev1,sev2; cluster=a" → {"severity": ["sev1", "sev2"], "cluster": ["a"]}."""
    filters: dict[str, list[str]] = {}
    for part in filter(None, (p.strip() for p in text.split(";"))):
        key, sep, values = part.partition("=")
        if not sep or not key.strip():
            raise ApplicationError(
                f"'{part}' is not key=value[,value…] (e.g. severity=sev1,sev2; cluster=a).",
                status=400,
                field=field,
            )
        filters.setdefault(key.strip(), []).extend(v.strip() for v in values.split(",") if v.strip())
    return filters


def tag_filters_as_text(filters: TagFilters) -> str:
    """The inverse of tag_filters_from_text: what a form's text box shows."""
    return "; ".join(f"{key}={','.join(values)}" for key, values in (filters or {}).items())
