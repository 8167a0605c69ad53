"""Checking observation rows against the rules (rules.py) and the reference data (Lookups).

Typed rows from the JSON fast path (`ObservationIn`) are checked column by column; anything else,
and any batch that column check refuses, goes row by row so every problem of every row is named.
No ORM objects, reference data cached once per batch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.api.parsers import shown
from metrics.ingest import rules
from metrics.ingest.formats import ObservationIn, Unreadable
from metrics.models import MetricDefinition, System, Workload
from metrics.refs import MetricRefError, metric_ref_parse

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


def check_typed_rows(rows: list[ObservationIn], lookups: Lookups) -> ValidRows | None:
    """The whole batch checked column by column; None if any row fails (the row-by-row check then
    names every problem). Types, lengths and timezones were already checked while decoding."""
    metrics = [row.metric for row in rows]
    definitions: dict[str, MetricDefinition] = {}
    for ref in set(metrics):
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
    if not rules.times_ok(observed, rules.time_latest()):
        return None
    definition_unit = {ref: definition.unit for ref, definition in definitions.items()}
    units = [row.unit or definition_unit[row.metric] for row in rows]
    values = [row.value for row in rows]
    factors = {}
    for ref, unit in set(zip(metrics, units, strict=True)):
        factor = rules.unit_conversion(unit, definitions[ref])
        if isinstance(factor, str):
            return None
        if unit != definition_unit[ref]:
            factors[ref, unit] = factor
    if factors:
        values = [
            value * factors.get(pair, 1.0)
            for value, pair in zip(values, zip(metrics, units, strict=True), strict=True)
        ]
    if not rules.values_ok(values):
        return None
    bounded = {ref for ref, d in definitions.items() if rules.is_bounded(d)}
    if bounded and any(
        rules.bound_problem(value, definitions[ref])
        for value, ref in zip(values, metrics, strict=True)
        if ref in bounded
    ):
        return None
    definition_id = {ref: definition.pk for ref, definition in definitions.items()}
    if len(definition_id) == 1:  # the usual batch: one metric, its id repeated at C speed
        definition_ids = [*definition_id.values()] * len(rows)
    else:
        definition_ids = list(map(definition_id.__getitem__, metrics))
    columns = (
        definition_ids,
        system_ids,
        workload_ids,
        values,
        units,
        observed,
        [row.run_id for row in rows],
        [row.source for row in rows],
        # Most rows carry no tags: those skip the two calls of the tags rules.
        [rules.tags_wire_or_none(row.tags) if row.tags else rules.EMPTY_TAGS for row in rows],
    )
    if None in columns[TAGS]:
        return None
    # Hashing 10,000 fresh timezone-aware datetimes to look for repeats took a fifth of the request.
    return ValidRows(columns, list(range(len(rows))), repeats_checked=False)


def check_rows(rows: list[Any], lookups: Lookups) -> tuple[ValidRows, list[dict[str, Any]]]:
    """Row by row: (the good rows, an error for every problem of every bad row)."""
    latest = rules.time_latest()
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
                {
                    "index": index,
                    "field": "system",
                    "message": rules.reference_problem("system", row.get("system")),
                }
            )
        workload_id = _known(workloads, row.get("workload"))
        if workload_id is None:
            message = rules.reference_problem("workload", row.get("workload"))
            errors.append({"index": index, "field": "workload", "message": message})
        value = rules.value_parse(row.get("value"))
        if isinstance(value, str):
            errors.append({"index": index, "field": "value", "message": value})
        observed_at = rules.time_parse(row.get("observed_at"), latest)
        if isinstance(observed_at, str):
            errors.append({"index": index, "field": "observed_at", "message": observed_at})
        unit = row.get("unit")
        if not isinstance(definition, str):
            unit = unit or definition.unit
            problem = rules.text_problem("unit", unit)
            if problem:
                errors.append({"index": index, "field": "unit", "message": problem})
            else:
                factor = rules.unit_conversion(unit, definition)
                if isinstance(factor, str):
                    errors.append({"index": index, "field": "unit", "message": factor})
                elif factor != 1.0 and not isinstance(value, str):
                    value = value * factor
                    if not rules.is_finite(value):
                        errors.append({"index": index, "field": "value", "message": rules.MSG_OVERFLOW})
            if isinstance(value, float) and rules.is_finite(value):
                problem = rules.bound_problem(value, definition)
                if problem:
                    errors.append({"index": index, "field": "value", "message": problem})
        run_id = row.get("run_id") or ""
        source = row.get("source") or ""
        tags = row.get("tags") or {}
        for name, text in (("run_id", run_id), ("source", source)):
            problem = rules.text_problem(name, text)
            if problem:
                errors.append({"index": index, "field": name, "message": problem})
        if isinstance(tags, Unreadable):
            errors.append({"index": index, "field": "tags", "message": tags.message})
        else:
            try:
                tags_text = rules.tags_wire(tags)
            except rules.TagsError as error:
                errors.append({"index": index, "field": "tags", "message": str(error)})
        # A bad definition or value was named above; the isinstance checks say so to the type checker.
        if len(errors) > row_errors or isinstance(definition, str) or isinstance(value, str):
            continue
        definition_id = definition.pk
        natural_key = (definition_id, system_id, workload_id, run_id, observed_at)
        previous = seen.get(natural_key)
        if previous is not None:
            if previous[0] != value:
                errors.append(rules.repeat_error(index, previous[1], previous[0]))
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


def _known(ids: dict[str, int], key: Any) -> int | None:
    return ids.get(key) if isinstance(key, str) else None
