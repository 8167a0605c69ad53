"""The one check every state-changing service runs first: may this action start from the current state?

Each state machine keeps its allowed-from table in one place — `TRANSITIONS = {action: states}` on the
program models, in `metrics.services.definitions`, and the `source=` lists of the django-fsm transitions
on `FreezeException` — and its services ask `require_state` before they lock and change anything."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, Protocol

from core.errors import ApplicationError

MSG_NOT_FROM = "{subject} is {state}; {action} is allowed only when it is {allowed}."
MSG_NEVER = "{subject} is {state}; {action} is never allowed."


def _listing(states: Collection[str]) -> str:
    ordered = sorted(states)
    return ordered[0] if len(ordered) == 1 else f"{', '.join(ordered[:-1])} or {ordered[-1]}"


def require_state(
    *, subject: str, state: str, action: str, allowed: Collection[str], message: str = ""
) -> None:
    """Refuse (409) an action its table does not allow from `state`, with a message naming that state
    (`message` when the caller has a more helpful one)."""
    if state in allowed:
        return
    if not message:
        template = MSG_NOT_FROM if allowed else MSG_NEVER
        message = template.format(
            subject=subject, state=state, action=action, allowed=_listing(allowed) if allowed else ""
        )
    raise ApplicationError(message)


class FsmTransition(Protocol):
    """A method decorated with django-fsm's `transition`, which hangs its metadata on the function."""

    _django_fsm: Any  # django_fsm.FSMMeta (django-fsm ships no type information)


def fsm_sources(method: FsmTransition) -> frozenset[str]:
    """The states a django-fsm transition method may start from: its `source=` list."""
    return frozenset(method._django_fsm.transitions)
