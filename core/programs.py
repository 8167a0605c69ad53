"""The programs core can name without importing the program app (apps import core, not the reverse).

The program app registers two lookups from its AppConfig.ready; core asks them for the (key, name) of
every program, e.g. to offer and check the program a webhook endpoint is scoped to, and for the keys of
the programs a user leads (program.policies decides that; core only asks)."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib.auth.models import AnonymousUser, User

ProgramLookup = Callable[[], list[tuple[str, str]]]
KeysLookup = Callable[[User | AnonymousUser], frozenset[str]]

_lookups: list[ProgramLookup] = []
_led_lookups: list[KeysLookup] = []
_hidden_lookups: list[KeysLookup] = []


def program_directory_register(lookup: ProgramLookup, *, led: KeysLookup, hidden: KeysLookup) -> None:
    """`led`: the keys of the programs a user leads; `hidden`: of the private ones they may not read."""
    _lookups.append(lookup)
    _led_lookups.append(led)
    _hidden_lookups.append(hidden)


def programs_hidden(user: User | AnonymousUser) -> frozenset[str]:
    """The keys of the programs `user` may not read (private, and not theirs): to them those programs,
    and what is scoped to them, do not exist."""
    return frozenset().union(*(lookup(user) for lookup in _hidden_lookups))


def programs_led(user: User | AnonymousUser) -> frozenset[str]:
    """The keys of the programs `user` leads."""
    return frozenset().union(*(lookup(user) for lookup in _led_lookups))


def program_choices() -> list[tuple[str, str]]:
    """(key, name) of every program, ordered by key; one query per registered lookup."""
    return sorted(choice for lookup in _lookups for choice in lookup())
