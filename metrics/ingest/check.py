"""Checking observation rows against the rules (rules.py) and the reference data (Lookups).

One check, row by row, for every format (typed JSON rows, NDJSON, CSV, OTLP points), so every problem
of every row is named. No ORM objects, reference data cached once per batch.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from core.api.parsers import shown
from metrics.ingest import rules
from metrics.ingest.formats import Unreadable, as_dict
from metrics.models import MetricDefinition, System, Workload
from metrics.refs import MetricRefError, metric_ref_parse

# The row field an OTLP histogram point names its stream in (formats.otlp).
OTLP_STREAM = "otlp_stream"
# Column positions in ValidRows.columns, which is also the order COPY writes them in.
DEFINITION, SYSTEM, WORKLOAD, VALUE, UNIT, OBSERVED_AT, RUN_ID, SOURCE, TAGS = range(9)


@dataclass
class ValidRows:
    """Checked rows as columns, ready for COPY; `indexes` are their positions in the request."""

    columns: tuple[list[Any], ...]
    indexes: list[int]

    def __len__(self) -> int:
        return len(self.indexes)

    def distinct(self, *positions: int) -> list[Any]:
        """Sorted distinct values of one column, or of tuples of several."""
        if len(positions) == 1:
            return sorted(set(self.columns[positions[0]]))
        return sorted(set(zip(*(self.columns[p] for p in positions), strict=True)))


# The metric reference rule. Which version a row's `metric` names: `key` is the active version; `key@N` is that version when it
# is active or a draft (a draft collects shadow data beside the active version before it is activated,
# issue 11); a deprecated version refuses the row and names the version to send to instead.


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
            return "metric is required: 'key' (its active version) or 'key@N' (that active or draft version)."
        if self._versions is None:
            self._versions = {}
            for definition in MetricDefinition.objects.all():
                self._versions.setdefault(definition.key, []).append(definition)
        try:
            key, version = metric_ref_parse(ref)
        except MetricRefError as exc:
            return f"'{shown(ref)}': {exc.problem}"
        versions = self._versions.get(key)
        if not versions:
            return f"unknown metric '{shown(key)}'."
        if version is None:
            active = [d for d in versions if d.status == MetricDefinition.Status.ACTIVE]
            return active[0] if active else f"metric '{key}' has no active version; name one as '{key}@N'."
        chosen = next((d for d in versions if d.version == version), None)
        if chosen is None:
            return f"unknown version '{shown(ref)}'."
        if chosen.status == MetricDefinition.Status.DEPRECATED:  # a draft takes shadow data
            active_ref = next((d.ref for d in versions if d.status == MetricDefinition.Status.ACTIVE), None)
            return f"{chosen.ref} is deprecated; " + (
                f"send to '{key}' ({active_ref})." if active_ref else f"'{key}' has no active version."
            )
        return chosen


def check_rows(rows: list[Any], lookups: Lookups) -> tuple[ValidRows, list[dict[str, Any]]]:
    """Every row checked the one way: (the good rows as columns, an error for every problem of every
    bad row). A row repeating an earlier row's natural key with the same value is dropped; with another
    value it is an error."""
    latest = rules.time_latest()
    errors: list[dict[str, Any]] = []
    out: list[tuple[Any, ...]] = []
    seen: dict[tuple[Any, ...], tuple[float, int]] = {}
    for index, row in enumerate(rows):
        raw = as_dict(row)
        checked, problems = _row_check(raw, lookups, latest)
        if problems:
            errors += [{"index": index, "field": field, "message": message} for field, message in problems]
            continue
        assert checked is not None
        # An OTLP histogram point's stream is part of its key (metrics.models.HistogramPoint): the
        # attribute sets of one histogram are exported at one moment. The database still has the last word.
        stream = raw.get(OTLP_STREAM, "") if isinstance(raw, dict) else ""
        natural_key = (checked[0], checked[1], checked[2], checked[RUN_ID], checked[OBSERVED_AT], stream)
        previous = seen.get(natural_key)
        if previous is not None:
            if previous[0] != checked[VALUE]:
                errors.append(rules.repeat_error(index, previous[1], previous[0]))
            continue
        seen[natural_key] = (checked[VALUE], index)
        out.append((index, *checked))
    indexes, *columns = zip(*out, strict=True) if out else ((),) * 10
    return ValidRows(tuple(list(column) for column in columns), list(indexes)), errors


Problems = list[tuple[str | None, str]]


def _row_check(row: Any, lookups: Lookups, latest: datetime) -> tuple[tuple[Any, ...] | None, Problems]:
    """One row: its columns (in ValidRows order), or every (field, message) wrong with it."""
    if isinstance(row, Unreadable):
        return None, [(row.field, row.message)]
    if not isinstance(row, dict):
        return None, [(None, "each observation must be an object.")]
    problems: Problems = []
    definition = lookups.definition(row.get("metric"))
    if isinstance(definition, str):
        problems.append(("metric", definition))
    system_id = _known(lookups.systems, row.get("system"))
    if system_id is None:
        problems.append(("system", rules.reference_problem("system", row.get("system"))))
    workload_id = _known(lookups.workloads, row.get("workload"))
    if workload_id is None:
        problems.append(("workload", rules.reference_problem("workload", row.get("workload"))))
    parsed = rules.value_parse(row.get("value"))
    if isinstance(parsed, str):
        problems.append(("value", parsed))
    observed_at = rules.time_parse(row.get("observed_at"), latest)
    if isinstance(observed_at, str):
        problems.append(("observed_at", observed_at))
    value, unit = _in_definition_unit(parsed, row.get("unit"), definition, problems)
    run_id, source = row.get("run_id") or "", row.get("source") or ""
    for name, text in (("run_id", run_id), ("source", source)):
        problem = rules.text_problem(name, text)
        if problem:
            problems.append((name, problem))
    tags_text = _tags_text(row.get("tags") or {}, problems)
    if problems or isinstance(definition, str) or value is None:  # the isinstance checks: for mypy
        return None, problems
    return (definition.pk, system_id, workload_id, value, unit, observed_at, run_id, source, tags_text), []


def _in_definition_unit(
    value: float | str, unit: Any, definition: MetricDefinition | str, problems: Problems
) -> tuple[float | None, Any]:
    """The value converted into the definition's unit and within its bounds (None when refused), and
    the unit it came in (the definition's when the row names none)."""
    if isinstance(definition, str):
        return None, unit
    unit = unit or definition.unit
    problem = rules.text_problem("unit", unit)
    if problem:
        problems.append(("unit", problem))
    else:
        factor = rules.unit_conversion(unit, definition)
        if isinstance(factor, str):
            problems.append(("unit", factor))
        elif factor != 1.0 and not isinstance(value, str):
            value = value * factor
            if not rules.is_finite(value):
                problems.append(("value", rules.MSG_OVERFLOW))
    if isinstance(value, str) or not rules.is_finite(value):
        return None, unit
    problem = rules.bound_problem(value, definition)
    if problem:
        problems.append(("value", problem))
    return value, unit


def _tags_text(tags: Any, problems: Problems) -> str | None:
    if isinstance(tags, Unreadable):
        problems.append(("tags", tags.message))
        return None
    try:
        return rules.tags_wire(tags)
    except rules.TagsError as error:
        problems.append(("tags", str(error)))
        return None


def _known(ids: dict[str, int], key: Any) -> int | None:
    return ids.get(key) if isinstance(key, str) else None
