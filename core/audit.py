"""Writing and reading the append-only transition history (core.Transition)."""

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
