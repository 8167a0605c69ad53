"""Reads of the freeze app: levels at a moment, the freeze check, the freeze list, exception queues."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Prefetch
from django.utils import timezone

from freeze.models import LEVEL_RANK, Component, FreezeEntry, FreezeException, FreezeWindow, Level

# The exception lists live with the allowed-actions rule they derive from; imported here for the
# callers (core.work, the API) that ask freeze.selectors.
from freeze.selectors_exceptions import exceptions_awaiting, exceptions_list  # noqa: F401


def windows_at(moment: datetime) -> list[FreezeWindow]:
    return list(
        FreezeWindow.objects.filter(starts_at__lte=moment, ends_at__gt=moment).select_related("program")
    )


@dataclass(frozen=True)
class LevelAt:
    level: str
    window: FreezeWindow | None


def level_at(
    component: Component,
    moment: datetime,
    windows: list[FreezeWindow] | None = None,
    entries: dict[tuple[int, int], str] | None = None,
) -> LevelAt:
    """The strictest level any window open at `moment` gives the component; open outside every window."""
    windows = windows_at(moment) if windows is None else windows
    if entries is None:
        entries = dict(
            ((e.window_id, e.component_id), e.level)
            for e in FreezeEntry.objects.filter(component=component, window__in=windows)
        )
    best = LevelAt(Level.OPEN, None)
    for window in windows:
        level = entries.get((window.pk, component.pk), window.default_level)
        if best.window is None or LEVEL_RANK[level] > LEVEL_RANK[best.level]:
            best = LevelAt(level, window)
    return best


@dataclass(frozen=True)
class FreezeCheck:
    component: Component
    at: datetime
    decision: str  # allowed | needs_approval | forbidden
    level: str
    window: FreezeWindow | None
    exception: FreezeException | None
    reason: str


def freeze_check(component: Component, moment: datetime | None = None) -> FreezeCheck:
    """May this component change at `moment`? An approved exception counts only inside its change window."""
    moment = moment or timezone.now()
    found = level_at(component, moment)
    if found.window is None:
        return FreezeCheck(
            component, moment, "allowed", Level.OPEN, None, None, "No freeze window is in force."
        )
    if found.level == Level.OPEN:
        return FreezeCheck(
            component,
            moment,
            "allowed",
            found.level,
            found.window,
            None,
            f"{component.key} is open in '{found.window.name}'.",
        )
    if found.level == Level.FROZEN:
        return FreezeCheck(
            component,
            moment,
            "forbidden",
            found.level,
            found.window,
            None,
            f"{component.key} is frozen in '{found.window.name}' until {found.window.ends_at:%Y-%m-%d %H:%M} UTC.",
        )
    exception = (
        FreezeException.objects.filter(
            component=component,
            window=found.window,
            status=FreezeException.Status.APPROVED,
            change_starts_at__lte=moment,
            change_ends_at__gt=moment,
        )
        .order_by("-change_ends_at")
        .first()
    )
    if exception is not None:
        return FreezeCheck(
            component,
            moment,
            "allowed",
            found.level,
            found.window,
            exception,
            f"Approved exception #{exception.pk} allows it until {exception.change_ends_at:%Y-%m-%d %H:%M} UTC.",
        )
    return FreezeCheck(
        component,
        moment,
        "needs_approval",
        found.level,
        found.window,
        None,
        f"{component.key} needs an approved exception in '{found.window.name}'.",
    )


def current_window(moment: datetime | None = None) -> FreezeWindow | None:
    """The window in force now, else the next one coming (what the freeze list shows)."""
    moment = moment or timezone.now()
    now_windows = windows_at(moment)
    if now_windows:
        return now_windows[0]
    return (
        FreezeWindow.objects.filter(starts_at__gt=moment)
        .select_related("program")
        .order_by("starts_at")
        .first()
    )


def freeze_list(window: FreezeWindow | None) -> list[dict]:
    """Components by layer with their level in `window` and their open exceptions: three queries."""
    entries = {}
    if window is not None:
        entries = dict(FreezeEntry.objects.filter(window=window).values_list("component_id", "level"))
    open_exceptions = FreezeException.objects.filter(status__in=FreezeException.OPEN_STATUSES).select_related(
        "requester"
    )
    components = Component.objects.prefetch_related(
        Prefetch("exceptions", queryset=open_exceptions, to_attr="open_exceptions")
    )
    rows = []
    for component in components:
        level = entries.get(component.pk, window.default_level if window else Level.OPEN)
        live = [e for e in component.open_exceptions if e.effective_status in FreezeException.OPEN_STATUSES]
        rows.append(
            {"component": component, "level": level, "explicit": component.pk in entries, "exceptions": live}
        )
    return rows
