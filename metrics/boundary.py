"""The timing boundary of a definition, in plain words, and what changed between two versions."""

from __future__ import annotations

from metrics.models import MetricDefinition, Phase
from metrics.units import unit_dimension

LABELS = dict(Phase.choices)


def _words(items: list[str]) -> str:
    names = [LABELS.get(item, item).lower() for item in items]
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def boundary_sentence(definition: MetricDefinition) -> str:
    sentence = f"The clock starts when {definition.start_event} and stops when {definition.end_event}."
    if definition.includes:
        sentence += f" Includes {_words(definition.includes)}."
    if definition.excludes:
        sentence += f" Excludes {_words(definition.excludes)}."
    return sentence


def boundary_key(
    definition: MetricDefinition,
) -> tuple[str, str, str, str, str, tuple[str, ...], tuple[str, ...]]:
    """Two definitions with equal keys measure the same thing the same way."""
    return (
        unit_dimension(definition.unit),
        definition.direction,
        definition.sampling,
        definition.start_event.strip().lower(),
        definition.end_event.strip().lower(),
        tuple(sorted(definition.includes)),
        tuple(sorted(definition.excludes)),
    )


def _shown(value: object) -> str:
    return "—" if value in (None, "") else str(value)  # a bound of 0 is shown, not a dash


def definition_changes(older: MetricDefinition, newer: MetricDefinition) -> list[str]:
    """Human-readable list of what differs between two versions (meaning fields first)."""
    changes = []
    for field in (
        *MetricDefinition.MEANING_FIELDS,
        "statistic",
        "name",
        "description",
        "owner_team",
        "expected_interval",
        "otel_name",
    ):
        before, after = getattr(older, field), getattr(newer, field)
        if isinstance(before, list) and isinstance(after, list) and sorted(before) == sorted(after):
            continue  # includes and excludes are sets (boundary_key sorts them): order changes nothing
        if before != after:
            if isinstance(before, list):
                before, after = _words(before) or "nothing", _words(after) or "nothing"
            changes.append(f"{field.replace('_', ' ')}: {_shown(before)} → {_shown(after)}")
    return changes
