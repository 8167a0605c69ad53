"""The names an observation row shows — `key@version`, system key, workload key, and the definition's
unit its value is in — by id, cached.

Definitions, systems and workloads are few and their names rarely change, while every observations
page needs them for its rows. Each process keeps them all under the metrics-references generation
(core.read_cache), read once a page, and replaced on any saved or deleted
definition, system or workload (`connect`), so a page normally runs no query for names. An id the
cached names lack (or no usable cache) is looked up for that page alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, TypeVar

from django.db.models import Manager, Model, QuerySet
from django.db.models.signals import post_delete, post_save

from core import read_cache
from metrics.models import MetricDefinition, System, Workload

if TYPE_CHECKING:
    pass

GENERATION_KEY = "metrics:references"
_M = TypeVar("_M", bound=Model)


@dataclass(frozen=True)
class Names:
    definitions: dict[int, str]
    systems: dict[int, str]
    workloads: dict[int, str]
    # Each definition's unit, which its observations' values are stored in (read with the names).
    units: dict[int, str]

    def cover(self, definitions: set[int], systems: set[int], workloads: set[int]) -> bool:
        return (
            definitions <= self.definitions.keys()
            and systems <= self.systems.keys()
            and workloads <= self.workloads.keys()
        )


def load(
    definitions: set[int] | None = None, systems: set[int] | None = None, workloads: set[int] | None = None
) -> Names:
    """The names of these ids (None: of every row): three queries."""

    def only(queryset: Manager[_M], ids: set[int] | None) -> Manager[_M] | QuerySet[_M]:
        return queryset if ids is None else queryset.filter(pk__in=ids)

    versions = list(only(MetricDefinition.objects, definitions).values_list("pk", "key", "version", "unit"))
    return Names(
        {pk: f"{key}@{version}" for pk, key, version, _ in versions},
        dict(only(System.objects, systems).values_list("pk", "key")),
        dict(only(Workload.objects, workloads).values_list("pk", "key")),
        {pk: unit for pk, _, _, unit in versions},
    )


@lru_cache(maxsize=4)
def _cached(generation: str) -> Names:
    return load()


def names_for(
    definitions: set[int],
    systems: set[int],
    workloads: set[int],
) -> Names:
    generation = read_cache.generation(GENERATION_KEY)
    if generation is not None:
        names = _cached(generation)
        if names.cover(definitions, systems, workloads):
            return names
    return load(definitions, systems, workloads)


def names_all() -> Names:
    """Every definition's, system's and workload's names: the cached ones, else three queries. An
    export reads them once for all its rows (names_for covers any id that appears meanwhile)."""
    generation = read_cache.generation(GENERATION_KEY)
    return _cached(generation) if generation is not None else load()


def references_changed(**kwargs: Any) -> None:
    read_cache.bump(GENERATION_KEY)


def connect() -> None:
    for model in (MetricDefinition, System, Workload):
        name = model.__name__
        post_save.connect(references_changed, sender=model, dispatch_uid=f"reference_names.save.{name}")
        post_delete.connect(references_changed, sender=model, dispatch_uid=f"reference_names.delete.{name}")
