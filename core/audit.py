"""Writing and reading the append-only transition history (core.Transition), and saying a row in
words: `actor_name` (people by their full names) and `transition_sentence`, which every history page
uses for the actions it has no sentence of its own for (program.history and freeze.history keep
their richer ones; the exception and incident pages use it as it is, through `|history_words`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from django.contrib.contenttypes.models import ContentType
from django.db import models

from core.models import Transition

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser, User


def transition_record(
    *,
    subject: models.Model,
    action: str,
    actor: User | AnonymousUser | None = None,
    from_state: str = "",
    to_state: str = "",
    reason: str = "",
    data: dict[str, Any] | None = None,
) -> Transition:
    """Record one state change. Call it inside the same transaction as the change itself."""
    return Transition.objects.create(
        content_type=ContentType.objects.get_for_model(subject),
        object_id=subject.pk,
        action=action,
        actor=actor if actor is not None and actor.is_authenticated else None,
        from_state=from_state,
        to_state=to_state,
        reason=reason,
        data=data or {},
    )


def transitions_for(subject: models.Model) -> models.QuerySet[Transition]:
    return Transition.objects.filter(
        content_type=ContentType.objects.get_for_model(subject), object_id=subject.pk
    ).select_related("actor")


def transitions_for_many(model: type[models.Model], ids: Iterable[int]) -> models.QuerySet[Transition]:
    return Transition.objects.filter(
        content_type=ContentType.objects.get_for_model(model), object_id__in=list(ids)
    ).select_related("actor")


Entry = TypeVar("Entry")


@dataclass(frozen=True)
class HistoryPage(Generic[Entry]):
    """One page of a history in words (1 is the newest); each app says what an entry holds."""

    entries: list[Entry]
    number: int
    has_older: bool

    @property
    def older(self) -> int:
        return self.number + 1


def transitions_page(
    transitions: models.QuerySet[Transition], page: int, size: int
) -> tuple[int, list[Transition], bool]:
    """Page `page` of ordered transitions (below 1 reads as 1), whether an older page exists, in one query:
    it reads one row past the page instead of counting."""
    page = max(1, page)
    offset = (page - 1) * size
    records = list(transitions[offset : offset + size + 1])
    return page, records[:size], len(records) > size


# The past tense of the actions the services record (a state-machine method or a plain verb); an
# action not listed reads with its underscores as spaces.
ACTION_WORDS = {
    "submit": "submitted",
    "resubmit": "sent back for approval",
    "approve": "approved",
    "approval": "gave an approval to",
    "reject": "rejected",
    "withdraw": "withdrew",
    "revoke": "revoked",
    "expire": "expired",
    "edited": "edited",
    "updated": "updated",
    # Incidents from Alertmanager (incidents/services/alerts.py).
    "alert-opened": "got the firing alert for",
    "alert-refired": "got the alert firing again for",
    "alert-resolved": "got the resolved alert for",
}
# Whose change this was: the system acts when no person did (a periodic task, an expiry).
SYSTEM = "The system"


def actor_name(user: User | None) -> str:
    """A person by the name people know them by: the full name, else the username."""
    if user is None:
        return SYSTEM
    return user.get_full_name() or user.get_username()


def field_words(names: Iterable[str]) -> str:
    """'mitigated_at', 'resolved_at' → 'mitigated at and resolved at'."""
    words = [name.replace("_", " ") for name in names]
    if len(words) < 2:
        return "".join(words)
    return f"{', '.join(words[:-1])} and {words[-1]}"


def state_words(record: Transition) -> str:
    """ " (open → resolved)" for a move, " as draft" for a start, nothing when the state stayed."""
    if record.from_state and record.to_state and record.from_state != record.to_state:
        return f" ({record.from_state} → {record.to_state})"
    if record.to_state and not record.from_state:
        return f" as {record.to_state}"
    return ""


def transition_sentence(record: Transition, subject: str = "it") -> str:
    """One row in words: "Lena Park created it as draft", "Lena Park resolved it (open → resolved),
    changing mitigated at and resolved at", "The system expired it (approved → expired)". Never an
    empty state ("created: · → draft") and never a state moved to itself."""
    verb = ACTION_WORDS.get(record.action, record.action.replace("_", " "))
    text = f"{actor_name(record.actor)} {verb} {subject}{state_words(record)}"
    data = record.data or {}
    changed = data.get("changed") or data.get("fields")
    if isinstance(changed, list) and changed:
        text += f", changing {field_words(changed)}"
    if record.action == "approval" and data.get("required"):
        text += f" ({data.get('approvals')} of {data['required']} approvals)"
    return text
