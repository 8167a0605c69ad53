"""What other apps show on a gate page (program imports none of them).

freeze knows which approved exceptions name a gate's metrics; program must not import freeze, so
freeze registers a panel here from its AppConfig.ready and the gate page asks every provider. Like
metrics.dependents: a registry of typed functions, each answering in a constant number of queries.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class GateNotice:
    """One thing touching the gate, shown as a link with a short note."""

    label: str
    url: str
    note: str = ""


@dataclass(frozen=True)
class GatePanel:
    """A provider's section of the gate page: its heading, its notices, what to say when there are none."""

    heading: str
    notices: list[GateNotice]
    empty: str


# A provider gets the metric keys the gate's criteria use and answers what touches them.
GateNoticeProvider = Callable[[list[str]], list[GateNotice]]
_providers: dict[str, tuple[str, str, GateNoticeProvider]] = {}


def gate_panel_register(name: str, *, heading: str, empty: str, provider: GateNoticeProvider) -> None:
    """Register (or replace, by name: ready() may run twice in tests) a panel."""
    _providers[name] = (heading, empty, provider)


def gate_panels(metric_keys: list[str]) -> list[GatePanel]:
    """Every registered panel, by name; a provider is not asked when the gate uses no metric."""
    keys = sorted(set(metric_keys))
    return [
        GatePanel(heading, provider(keys) if keys else [], empty)
        for heading, empty, provider in (_providers[name] for name in sorted(_providers))
    ]
