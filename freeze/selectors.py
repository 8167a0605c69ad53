"""Reads of the freeze app: levels at a moment, the freeze check, the freeze list, exception queues."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, Prefetch, Q, QuerySet
from django.utils import timezone

from core.roles import PROGRAM_LEADS, group_names
from freeze.models import LEVEL_RANK, Component, FreezeEntry, FreezeException, FreezeWindow, Level


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


def window_levels(window: FreezeWindow | None) -> list[dict]:
    """Every component with its level in one window (the levels editor and API): two queries."""
    entries = {}
    if window is not None:
        entries = dict(FreezeEntry.objects.filter(window=window).values_list("component_id", "level"))
    return [
        {
            "component": component,
            "level": entries.get(component.pk, window.default_level if window else Level.OPEN),
            "explicit": component.pk in entries,
        }
        for component in Component.objects.all()
    ]


@dataclass(frozen=True)
class LevelCell:
    """A component's level in one window; `explicit` is False where the window's default applies."""

    window: FreezeWindow
    level: str
    explicit: bool


@dataclass(frozen=True)
class FreezeRow:
    component: Component
    cells: list[LevelCell]  # one per window, in the table's column order
    strictest: str  # the level that decides where windows overlap (open outside every window)
    open_exceptions: list[FreezeException]


def freeze_list(
    windows: list[FreezeWindow], moment: datetime | None = None
) -> list[tuple[str, list[FreezeRow]]]:
    """The freeze list as one table: components grouped by layer (rows) × `windows` (columns), each
    cell the component's level in that window, plus the strictest level and the open exceptions
    (not yet expired at `moment`). Three queries whatever the number of components and windows."""
    moment = moment or timezone.now()
    entries = dict(
        ((window_id, component_id), level)
        for window_id, component_id, level in FreezeEntry.objects.filter(window__in=windows).values_list(
            "window_id", "component_id", "level"
        )
    )
    open_exceptions = FreezeException.objects.filter(
        status__in=FreezeException.OPEN_STATUSES, change_ends_at__gt=moment
    ).order_by("change_starts_at", "pk")
    components = Component.objects.order_by("layer", "key").prefetch_related(
        Prefetch("exceptions", queryset=open_exceptions, to_attr="open_exceptions")
    )
    layers: dict[str, list[FreezeRow]] = {}
    for component in components:
        cells = [
            LevelCell(
                window,
                entries.get((window.pk, component.pk), window.default_level),
                (window.pk, component.pk) in entries,
            )
            for window in windows
        ]
        strictest = max((cell.level for cell in cells), key=LEVEL_RANK.__getitem__, default=Level.OPEN)
        row = FreezeRow(component, cells, strictest, component.open_exceptions)
        layers.setdefault(component.get_layer_display(), []).append(row)
    return list(layers.items())


def exceptions_list() -> QuerySet[FreezeException]:
    return (
        FreezeException.objects.select_related("component", "window", "requester", "last_editor")
        .annotate(
            approval_count=Count(
                "approvals", filter=Q(approvals__verdict="approve", approvals__dismissed_at__isnull=True)
            )
        )
        .order_by("-created_at", "-id")
    )


def exceptions_awaiting(user) -> QuerySet[FreezeException]:
    """Submitted exceptions this user may approve (wrote none of it) and has not yet acted on."""
    teams = group_names(user)
    queryset = (
        exceptions_list()
        .filter(status=FreezeException.Status.SUBMITTED, change_ends_at__gt=timezone.now())
        .exclude(requester=user)
        .exclude(last_editor=user)
        .exclude(authors=user)
        .exclude(approvals__approver=user, approvals__dismissed_at__isnull=True)
    )
    if PROGRAM_LEADS not in teams:
        queryset = queryset.filter(component__owner_team__in=teams)
    return queryset
