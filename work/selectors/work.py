"""What waits for one person ("My work", the home page): five short lists, one query each.

Who may decide what is not decided here: gate decisions follow program.services.gates.gate_decide
(any program lead), exception approvals follow freeze.selectors.exceptions.exceptions_awaiting, the freeze
app's own answer to "which exceptions may this user approve and has not yet".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from django.contrib.auth.models import User
from django.db.models import Case, IntegerField, Model, QuerySet, Value, When
from django.utils import timezone

from core.models import NotificationReceipt
from core.policies import is_platform_admin
from freeze import policies as freeze_policies
from freeze.models import FreezeException
from freeze.selectors.exceptions import exceptions_awaiting, exceptions_list
from program import policies
from program.models import Gate, Program

# Each list shows this many rows; one more is fetched to know whether to link to the full list.
SHOWN = 8

_Row = TypeVar("_Row", bound=Model)


@dataclass(frozen=True)
class Section(Generic[_Row]):
    items: list[_Row]
    more: bool


def _section(queryset: QuerySet[_Row]) -> Section[_Row]:
    rows = list(queryset[: SHOWN + 1])
    return Section(rows[:SHOWN], len(rows) > SHOWN)


def _gates() -> QuerySet[Gate]:
    return Gate.objects.select_related("phase__program").filter(phase__program__status=Program.Status.ACTIVE)


def gates_ready_for(user: User) -> Section[Gate]:
    """Ready gates this user may decide (program.policies.is_lead): those of the programs they lead,
    or every active program's for a platform admin, the ones they lead first."""
    led = policies.led_program_ids(user)
    gates = _gates().filter(status=Gate.Status.READY)
    if not is_platform_admin(user):
        if not led:
            return Section([], False)
        gates = gates.filter(phase__program_id__in=led)
    mine_first = Case(
        When(phase__program_id__in=led, then=Value(0)), default=Value(1), output_field=IntegerField()
    )
    return _section(gates.annotate(not_mine=mine_first).order_by("not_mine", "due_date", "pk"))


def stale_gates_for(user: User) -> Section[Gate]:
    """Undecided gates pinning a superseded metric version, in the active programs the user leads."""
    return _section(
        _gates()
        .filter(stale=True, status__in=Gate.UNDECIDED, phase__program_id__in=policies.led_program_ids(user))
        .order_by("due_date", "pk")
    )


def exceptions_awaiting_for(user: User) -> Section[FreezeException]:
    readable = freeze_policies.exceptions_readable(user)
    return _section(exceptions_awaiting(user).filter(readable).order_by("change_starts_at", "pk"))


def exceptions_requested_by(user: User) -> Section[FreezeException]:
    """The user's own exceptions still in play (draft, submitted, approved, window not ended), newest
    first; not those under a private program's window they may no longer read (removed from it)."""
    return _section(
        exceptions_list().filter(
            freeze_policies.exceptions_readable(user),
            requester=user,
            status__in=FreezeException.OPEN_STATUSES,
            change_ends_at__gt=timezone.now(),
        )
    )


def latest_notifications(user: User) -> Section[NotificationReceipt]:
    return _section(
        NotificationReceipt.objects.filter(user=user)
        .select_related("notification")
        .order_by("-notification_id")
    )


@dataclass(frozen=True)
class MyWork:
    ready_gates: Section[Gate]
    awaiting: Section[FreezeException]
    my_exceptions: Section[FreezeException]
    stale_gates: Section[Gate]
    notifications: Section[NotificationReceipt]


def my_work(user: User) -> MyWork:
    return MyWork(
        ready_gates=gates_ready_for(user),
        awaiting=exceptions_awaiting_for(user),
        my_exceptions=exceptions_requested_by(user),
        stale_gates=stale_gates_for(user),
        notifications=latest_notifications(user),
    )
