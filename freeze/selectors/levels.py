"""Reads of the freeze app: levels at a moment, the freeze check and the freeze list."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Prefetch, Q
from django.utils import timezone

from core.errors import ApplicationError
from freeze.models import (
    LEVEL_RANK,
    Component,
    FreezeEntry,
    FreezeException,
    FreezeOverride,
    FreezeWindow,
    Level,
)
from program.models import Program


@dataclass(frozen=True)
class InForce:
    """A window in force at a moment, with the span in force (its occurrence, when it recurs)."""

    window: FreezeWindow
    starts_at: datetime
    ends_at: datetime


def program_for_check(slug: str | None) -> Program | None:
    """The program a check is limited to (None: every program); an unknown slug is a 400."""
    if not slug:
        return None
    program = Program.objects.filter(slug=slug).first()
    if program is None:
        raise ApplicationError(f"Unknown program '{slug}'.", status=400, field="program")
    return program


def in_force_at(moment: datetime, program: Program | None = None) -> list[InForce]:
    """Every window in force at `moment` (of one program, or all), earliest first: one query, the
    season filtered in the database and recurring windows' occurrences found around the moment."""
    queryset = FreezeWindow.objects.filter(starts_at__lte=moment, ends_at__gt=moment)
    if program is not None:
        queryset = queryset.filter(program=program)
    found = []
    for window in queryset.select_related("program").order_by("starts_at", "pk"):
        span = window.occurrence_at(moment)
        if span is not None:
            found.append(InForce(window, *span))
    return found


def windows_at(moment: datetime, program: Program | None = None) -> list[FreezeWindow]:
    return [found.window for found in in_force_at(moment, program)]


@dataclass(frozen=True)
class WindowLevel:
    """A component's level in one window in force; `explicit` is False where the default applies."""

    window: FreezeWindow
    level: str
    explicit: bool
    starts_at: datetime
    ends_at: datetime


def levels_at(component: Component, moment: datetime, program: Program | None = None) -> list[WindowLevel]:
    """The component's level in every window in force at `moment`: two queries."""
    spans = in_force_at(moment, program)
    entries = dict(
        FreezeEntry.objects.filter(component=component, window__in=[s.window for s in spans]).values_list(
            "window_id", "level"
        )
    )
    return [
        WindowLevel(
            s.window,
            entries.get(s.window.pk, s.window.default_level),
            s.window.pk in entries,
            s.starts_at,
            s.ends_at,
        )
        for s in spans
    ]


def strictest(levels: list[WindowLevel]) -> WindowLevel | None:
    """The window that decides: the strictest level, the earliest window among equals."""
    best = None
    for found in levels:
        if best is None or LEVEL_RANK[found.level] > LEVEL_RANK[best.level]:
            best = found
    return best


@dataclass(frozen=True)
class LevelAt:
    level: str
    window: FreezeWindow | None


def level_at(
    component: Component,
    moment: datetime,
    windows: list[FreezeWindow] | None = None,
    entries: dict[tuple[int, int], str] | None = None,
    program: Program | None = None,
) -> LevelAt:
    """The strictest level any window open at `moment` gives the component; open outside every window.
    `windows` limits it to those windows, taken as in force (whatever their occurrences)."""
    windows = windows_at(moment, program) if windows is None else windows
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
    level: str  # the strictest level in force (open outside every window)
    window: FreezeWindow | None  # the window whose level decided
    exception: FreezeException | None  # the approved exception that lifts `approval`
    reason: str
    windows: tuple[WindowLevel, ...] = ()  # every window in force, with the component's level
    override: FreezeOverride | None = None  # a break-glass override in force allows anything
    program: Program | None = None  # the check counted only this program's windows

    @property
    def deciding(self) -> WindowLevel | None:
        return next((w for w in self.windows if w.window == self.window), None)


def override_in_force(component: Component, moment: datetime) -> FreezeOverride | None:
    return (
        FreezeOverride.objects.filter(component=component, starts_at__lte=moment, ends_at__gt=moment)
        .select_related("opened_by")
        .order_by("-ends_at", "-pk")
        .first()
    )


def exception_lifting(component: Component, moment: datetime) -> FreezeException | None:
    """An approved exception of the component whose change window covers `moment`, whichever window
    (and program) it was filed under: exceptions belong to a component and a time."""
    return (
        FreezeException.objects.filter(
            component=component,
            status=FreezeException.Status.APPROVED,
            change_starts_at__lte=moment,
            change_ends_at__gt=moment,
        )
        .order_by("-change_ends_at", "-pk")
        .first()
    )


def _names(levels: list[WindowLevel], level: str) -> str:
    return " and ".join(f"'{w.window.name}'" for w in levels if w.level == level)


def freeze_check(
    component: Component, moment: datetime | None = None, program: Program | None = None
) -> FreezeCheck:
    """May this component change at `moment`? Over every window in force then (or one program's):
    a break-glass override allows anything; else the strictest level decides; an approved exception
    lifts `approval` in every window; nothing lifts `frozen`. At most four queries."""
    moment = moment or timezone.now()
    return decide(
        component,
        moment,
        program,
        levels_at(component, moment, program),
        override_in_force(component, moment),
        lambda: exception_lifting(component, moment),
    )


def decide(
    component: Component,
    moment: datetime,
    program: Program | None,
    levels: list[WindowLevel],
    override: FreezeOverride | None,
    exception_lifting: Callable[[], FreezeException | None],
) -> FreezeCheck:
    """The check's rule over the facts at `moment`: the levels in force, the override in force, and —
    asked only when the strictest level is `approval` — the approved exception covering the moment."""
    decider = strictest(levels)
    level = decider.level if decider else Level.OPEN
    window = decider.window if decider else None
    in_force = tuple(levels)
    if override is not None:
        return FreezeCheck(
            component,
            moment,
            "allowed",
            level,
            window,
            None,
            f"Break-glass override #{override.pk} by {override.opened_by.username} allows it until "
            f"{override.ends_at:%Y-%m-%d %H:%M} UTC (level {level} otherwise).",
            override=override,
            windows=in_force,
            program=program,
        )
    if decider is None:
        where = f" for {program.slug}" if program else ""
        return FreezeCheck(
            component,
            moment,
            "allowed",
            level,
            None,
            None,
            f"No freeze window is in force{where}.",
            windows=in_force,
            program=program,
        )
    if level == Level.OPEN:
        return FreezeCheck(
            component,
            moment,
            "allowed",
            level,
            window,
            None,
            f"{component.key} is open in {_names(levels, Level.OPEN)}.",
            windows=in_force,
            program=program,
        )
    if level == Level.FROZEN:
        return FreezeCheck(
            component,
            moment,
            "forbidden",
            level,
            window,
            None,
            f"{component.key} is frozen in '{decider.window.name}' until {decider.ends_at:%Y-%m-%d %H:%M} UTC; "
            "no exception lifts a freeze.",
            windows=in_force,
            program=program,
        )
    exception = exception_lifting()
    if exception is not None:
        return FreezeCheck(
            component,
            moment,
            "allowed",
            level,
            window,
            exception,
            f"Approved exception #{exception.pk} allows it until {exception.change_ends_at:%Y-%m-%d %H:%M} "
            f"UTC in {_names(levels, Level.APPROVAL)}.",
            windows=in_force,
            program=program,
        )
    return FreezeCheck(
        component,
        moment,
        "needs_approval",
        level,
        window,
        None,
        f"{component.key} needs an approved exception in {_names(levels, Level.APPROVAL)}.",
        windows=in_force,
        program=program,
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


def window_levels(window: FreezeWindow | None) -> list[dict[str, Any]]:
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

    @property
    def exception_window(self) -> FreezeWindow | None:
        """The window an exception would be filed under: the first column at `approval`, when that is
        the strictest level (exceptions exist for `approval` only: frozen takes none, open needs none)."""
        if self.strictest != Level.APPROVAL:
            return None
        return next((cell.window for cell in self.cells if cell.level == Level.APPROVAL), None)


def freeze_list(
    windows: list[FreezeWindow], moment: datetime | None = None, readable: Q | None = None
) -> list[tuple[str, list[FreezeRow]]]:
    """The freeze list as one table: components grouped by layer (rows) × `windows` (columns), each
    cell the component's level in that window, plus the strictest level and the open exceptions
    (not yet expired at `moment`; only those `readable` keeps, the reader's filter from
    freeze.policies.exceptions_readable). Three queries whatever the number of components and windows."""
    moment = moment or timezone.now()
    entries = dict(
        ((window_id, component_id), level)
        for window_id, component_id, level in FreezeEntry.objects.filter(window__in=windows).values_list(
            "window_id", "component_id", "level"
        )
    )
    open_exceptions = FreezeException.objects.filter(
        readable or Q(), status__in=FreezeException.OPEN_STATUSES, change_ends_at__gt=moment
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
