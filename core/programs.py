"""The programs core can name without importing the program app (apps import core, not the reverse).

The program app registers two lookups from its AppConfig.ready; core asks them for the (key, name) of
every program, e.g. to offer and check the program a webhook endpoint is scoped to, and for the keys of
the programs a user leads (program.policies decides that; core only asks)."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib.auth.models import AnonymousUser, User

ProgramLookup = Callable[[], list[tuple[str, str]]]
LedProgramsLookup = Callable[[User | AnonymousUser], frozenset[str]]

_lookups: list[ProgramLookup] = []
_led_lookups: list[LedProgramsLookup] = []


def program_directory_register(lookup: ProgramLookup, led: LedProgramsLookup) -> None:
    _lookups.append(lookup)
    _led_lookups.append(led)


def programs_led(user: User | AnonymousUser) -> frozenset[str]:
    """The keys of the programs `user` leads."""
    return frozenset().union(*(lookup(user) for lookup in _led_lookups))


def program_choices() -> list[tuple[str, str]]:
    """(key, name) of every program, ordered by key; one query per registered lookup."""
    return sorted(choice for lookup in _lookups for choice in lookup())
