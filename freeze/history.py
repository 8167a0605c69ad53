"""A freeze window's history in words: created, moved with its phase, levels set — from the
core.Transition rows the services write in the same transaction as each change.

(pghistory also keeps every FreezeEntry row version, but without who or why; the transitions carry
the actor, the reason and the component, so they are what people read.) One query per page."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import QuerySet

from core.audit import HistoryPage, state_words, transitions_for, transitions_page
from core.audit import actor_name as person_name
from core.models import Transition
from freeze.models import FreezeWindow

PAGE_SIZE = 25
CAPPED = 10  # entries on the freeze page; the rest on the window's history page


def window_transitions(window: FreezeWindow) -> QuerySet[Transition]:
    """Newest first, with the actor (one query per slice)."""
    return transitions_for(window).order_by("-at", "-id")


def actor_name(record: Transition) -> str:
    return person_name(record.actor)


def _when(value: str | None) -> str:
    if not value:
        return "—"
    return datetime.fromisoformat(value).strftime("%-d %b %Y %H:%M")


def describe(record: Transition, window: FreezeWindow) -> str:
    """One sentence: "Lena set nccl to frozen (was approval) in 'Frontier sprint freeze'"."""
    who, data, name = actor_name(record), record.data or {}, f"'{window.name}'"
    if record.action == "level":
        component = data.get("component", "a component")
        if data.get("explicit") is False:
            return f"{who} set {component} back to the window default, {record.to_state} (was {record.from_state}), in {name}"
        return f"{who} set {component} to {record.to_state} (was {record.from_state}) in {name}"
    if record.action == "created":
        return f"{who} created {name} with default level {record.to_state}"
    if record.action == "moved":
        before, after = data.get("before", {}), data.get("after", {})
        return (
            f"Window {name} moved to {_when(after.get('starts_at'))} – {_when(after.get('ends_at'))} UTC "
            f"(was {_when(before.get('starts_at'))} – {_when(before.get('ends_at'))})"
        )
    return f"{who} {record.action.replace('_', ' ')} {name}{state_words(record)}"  # actions added later still read


@dataclass(frozen=True)
class HistoryEntry:
    at: datetime
    actor: str | None  # username; None for the system
    actor_name: str
    action: str
    component: str | None
    from_state: str
    to_state: str
    reason: str
    text: str


def entry(record: Transition, window: FreezeWindow) -> HistoryEntry:
    return HistoryEntry(
        at=record.at,
        actor=record.actor.get_username() if record.actor else None,
        actor_name=actor_name(record),
        action=record.action,
        component=(record.data or {}).get("component"),
        from_state=record.from_state,
        to_state=record.to_state,
        reason=record.reason,
        text=describe(record, window),
    )


def window_history(window: FreezeWindow, page: int = 1, size: int = PAGE_SIZE) -> HistoryPage[HistoryEntry]:
    """Page `page` (1 is the newest) of the window's history, in words: one query."""
    page, records, has_older = transitions_page(window_transitions(window), page, size)
    return HistoryPage([entry(r, window) for r in records], page, has_older)
