"""Resolving an ingest row's references (metric, system, workload) once per batch.

Which version a row's `metric` names: `key` is the active version; `key@N` is that version when it
is active or a draft (a draft collects shadow data beside the active version before it is activated,
issue 11); a deprecated version refuses the row and names the version to send to instead.
"""

from __future__ import annotations

from typing import Any

from core.api.parsers import shown
from metrics.models import MetricDefinition, System, Workload


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
        key, _, version = ref.partition("@")
        versions = self._versions.get(key)
        if not versions:
            return f"unknown metric '{shown(key)}'."
        if not version:
            active = [d for d in versions if d.status == MetricDefinition.Status.ACTIVE]
            return active[0] if active else f"metric '{key}' has no active version; name one as '{key}@N'."
        chosen = next((d for d in versions if str(d.version) == version), None)
        if chosen is None:
            return f"unknown version '{shown(ref)}'."
        if chosen.status == MetricDefinition.Status.DEPRECATED:  # a draft takes shadow data
            active = next((d.ref for d in versions if d.status == MetricDefinition.Status.ACTIVE), None)
            return f"{chosen.ref} is deprecated; " + (
                f"send to '{key}' ({active})." if active else f"'{key}' has no active version."
            )
        return chosen
