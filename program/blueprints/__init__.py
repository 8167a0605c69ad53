"""Program templates are YAML files in this folder: adding a template is adding a file.

A template is checked strictly when it is loaded (program.blueprints.schema): a criterion naming a
slot the template does not declare, an unknown field or a month outside the plan is an error there,
not a surprise when a program is created."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from program.blueprints.schema import BlueprintError, blueprint_check

FOLDER = Path(__file__).resolve().parent

__all__ = [
    "BlueprintError",
    "Slot",
    "blueprint_keys",
    "blueprint_load",
    "blueprint_rounds_slot",
    "blueprint_slots",
]


@dataclass(frozen=True)
class Slot:
    """A place in a template's criteria that a program fills with one of its own metrics or workloads."""

    name: str
    kind: str  # "metric" | "workload"
    suggested: str
    description: str


@lru_cache(maxsize=16)
def blueprint_load(key: str) -> dict[str, Any]:
    """The template `key`, checked. KeyError if there is none; BlueprintError if it is malformed."""
    path = FOLDER / f"{key}.yaml"
    if not key.replace("-", "").isalnum() or not path.exists():
        raise KeyError(key)
    return blueprint_check(yaml.safe_load(path.read_text()), key=key)


def blueprint_keys() -> list[str]:
    return sorted(path.stem for path in FOLDER.glob("*.yaml"))


def blueprint_slots(blueprint: dict[str, Any]) -> list[Slot]:
    """Metric slots first, then workload slots, each in the template's order."""
    slots = blueprint.get("slots") or {}
    return [
        Slot(name=name, kind=kind, suggested=spec["suggested"], description=spec["description"])
        for kind, group in (("metric", "metrics"), ("workload", "workloads"))
        for name, spec in (slots.get(group) or {}).items()
    ]


def blueprint_rounds_slot(key: str) -> str | None:
    """The metric slot whose runs are a program's experiment rounds, if template `key` names one (and
    exists: a program whose template file is gone derives no rounds)."""
    try:
        return blueprint_load(key).get("rounds_slot")
    except KeyError:
        return None
