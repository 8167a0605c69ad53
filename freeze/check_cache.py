"""The freeze check from cached facts: CI calls it on every pipeline, and its data changes rarely.

For one component (and program, or all) and one hour, the facts are every row that can be in force
at some moment of that hour: the windows whose season overlaps it (with their program), the
component's explicit levels in them, its overrides and its approved exceptions overlapping it. The
answer for an exact moment is then worked out in Python by the same rules the database query uses
(bounds, recurrences, order, freeze.selectors.decide), so a cached answer is the uncached one.

Facts are kept per process (an LRU) under the freeze generation (core.read_cache), which
freeze.check_invalidation replaces on any change to components, windows, levels, overrides,
exceptions, programs or users; each check reads the generation from the shared cache (one round trip),
so the very next check after a change reads the database again. A hit runs no SQL.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache

from core import read_cache
from freeze.models import Component, FreezeEntry, FreezeException, FreezeOverride, FreezeWindow
from freeze.recurrence import next_occurrence, occurrence_at
from freeze.selectors import FreezeCheck, WindowLevel, decide, program_for_check
from program.models import Program

GENERATION_KEY = read_cache.register("freeze:generation")
BUCKET = timedelta(hours=1)


@dataclass(frozen=True)
class CheckFacts:
    program: Program | None
    component: Component | None  # None: no component has this key
    windows: tuple[FreezeWindow, ...]  # by (starts_at, pk), as freeze.selectors.in_force_at
    spans: dict[int, tuple[tuple[datetime, datetime], ...]]  # window id → its spans meeting the hour
    levels: dict[int, str]  # window id → the component's explicit level
    overrides: tuple[FreezeOverride, ...]  # by (-ends_at, -pk), as selectors.override_in_force
    exceptions: tuple[FreezeException, ...]  # approved; by (-change_ends_at, -pk)


def bucket_of(moment: datetime) -> datetime:
    return moment.astimezone(UTC).replace(minute=0, second=0, microsecond=0)


def load_facts(component_key: str, program_slug: str | None, start: datetime) -> CheckFacts:
    """Every row that can be in force during [start, start + BUCKET): five or six queries. An unknown
    program is a 400 (freeze.selectors.program_for_check)."""
    end = start + BUCKET
    program = program_for_check(program_slug)
    component = Component.objects.filter(key=component_key).first()
    if component is None:
        return CheckFacts(program, None, (), {}, {}, (), ())
    overlapping = FreezeWindow.objects.filter(starts_at__lt=end, ends_at__gt=start)
    if program is not None:
        overlapping = overlapping.filter(program=program)
    windows = tuple(overlapping.select_related("program").order_by("starts_at", "pk"))
    levels = dict(
        FreezeEntry.objects.filter(component=component, window__in=[w.pk for w in windows]).values_list(
            "window_id", "level"
        )
    )
    overrides = tuple(
        FreezeOverride.objects.filter(component=component, starts_at__lt=end, ends_at__gt=start)
        .select_related("opened_by")
        .order_by("-ends_at", "-pk")
    )
    exceptions = tuple(
        FreezeException.objects.filter(
            component=component,
            status=FreezeException.Status.APPROVED,
            change_starts_at__lt=end,
            change_ends_at__gt=start,
        ).order_by("-change_ends_at", "-pk")
    )
    spans = {window.pk: spans_between(window, start, end) for window in windows}
    return CheckFacts(program, component, windows, spans, levels, overrides, exceptions)


def spans_between(
    window: FreezeWindow, start: datetime, end: datetime
) -> tuple[tuple[datetime, datetime], ...]:
    """The window's spans in force at some moment of [start, end): the one in force at `start`,
    then each starting before `end` (freeze.recurrence), so a check need not walk the rule."""
    found = []
    first = occurrence_at(window, start)
    if first is not None:
        found.append(first)
    moment = start
    while (following := next_occurrence(window, moment)) is not None and following[0] < end:
        found.append(following)
        moment = following[0]
    return tuple(found)


def span_at(
    spans: tuple[tuple[datetime, datetime], ...], moment: datetime
) -> tuple[datetime, datetime] | None:
    """freeze.recurrence.occurrence_at from the spans: the latest start at or before `moment` decides."""
    latest = None
    for span in spans:
        if span[0] <= moment and (latest is None or span[0] >= latest[0]):
            latest = span
    return latest if latest is not None and moment < latest[1] else None


@lru_cache(maxsize=2048)
def _cached_facts(
    generation: str, component_key: str, program_slug: str | None, start: datetime
) -> CheckFacts:
    return load_facts(component_key, program_slug, start)


def facts_at(component_key: str, program_slug: str | None, moment: datetime, request=None) -> CheckFacts:
    """The facts for `moment`'s hour, from this process's cache while the freeze generation holds
    (read with the request's token lookup when there is one)."""
    start = bucket_of(moment)
    generation = read_cache.generation_for(request, GENERATION_KEY)
    if generation is None:
        return load_facts(component_key, program_slug, start)
    return _cached_facts(generation, component_key, program_slug, start)


def check_from_facts(facts: CheckFacts, moment: datetime) -> FreezeCheck:
    """freeze.selectors.freeze_check's answer, from the facts of `moment`'s hour."""
    assert facts.component is not None
    levels = []
    for window in facts.windows:
        if not (window.starts_at <= moment < window.ends_at):
            continue
        span = span_at(facts.spans[window.pk], moment)
        if span is None:
            continue
        explicit = window.pk in facts.levels
        level = facts.levels[window.pk] if explicit else window.default_level
        levels.append(WindowLevel(window, level, explicit, *span))
    override = next((o for o in facts.overrides if o.starts_at <= moment < o.ends_at), None)
    return decide(
        facts.component,
        moment,
        facts.program,
        levels,
        override,
        lambda: next((e for e in facts.exceptions if e.change_starts_at <= moment < e.change_ends_at), None),
    )


def clear_local() -> None:
    """Forget this process's facts (tests; a generation change makes them unreachable anyway)."""
    _cached_facts.cache_clear()
