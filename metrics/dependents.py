"""What other apps pin to a metric version, for the pages that change versions (metrics imports none).

program pins metric versions in gate criteria and imports metrics, never the reverse. The new-version
and activate pages must still say which gates go stale when the active version is replaced, so program
registers a provider here from its AppConfig.ready (program/receivers.py).

A registry of functions rather than a Signal: the page needs each provider's answer, and a Signal is
a broadcast whose replies come back as (receiver, response) pairs, with a failing receiver either
breaking the page or (send_robust) silently dropped. A provider is typed, answers in one query, and a
test can see exactly which providers are registered.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from metrics.models import MetricDefinition


@dataclass(frozen=True)
class Dependent:
    """One thing pinned to a version: shown as a link with a short note (e.g. the gate's status)."""

    label: str
    url: str
    note: str = ""


SupersedeProvider = Callable[[MetricDefinition], list[Dependent]]
_supersede_providers: dict[str, SupersedeProvider] = {}


def supersede_provider_register(name: str, provider: SupersedeProvider) -> None:
    """Register (or replace, by name: ready() may run twice in tests) what goes stale on a supersede."""
    _supersede_providers[name] = provider


def stale_on_supersede(definition: MetricDefinition | None) -> list[Dependent]:
    """What is marked stale when `definition`, the active version, is replaced by a newer one."""
    if definition is None:
        return []
    found: list[Dependent] = []
    for name in sorted(_supersede_providers):
        found.extend(_supersede_providers[name](definition))
    return found
