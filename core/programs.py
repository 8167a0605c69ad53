"""The programs core can name without importing the program app (apps import core, not the reverse).

The program app registers one lookup from its AppConfig.ready; core asks it for the (key, name) of every
program, e.g. to offer and check the program a webhook endpoint is scoped to."""

from __future__ import annotations

from collections.abc import Callable

ProgramLookup = Callable[[], list[tuple[str, str]]]

_lookups: list[ProgramLookup] = []


def program_directory_register(lookup: ProgramLookup) -> None:
    _lookups.append(lookup)


def program_choices() -> list[tuple[str, str]]:
    """(key, name) of every program, ordered by key; one query per registered lookup."""
    return sorted(choice for lookup in _lookups for choice in lookup())
