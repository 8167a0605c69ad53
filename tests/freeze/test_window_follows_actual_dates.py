"""The frontier sprint's freeze window: planned dates until the sprint starts, its actual start after."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from core.models import Transition
from freeze.models import FreezeWindow
from freeze.services import windows_follow_phase
from program import services
from program.models import Gate, Phase
from tests.program.factories import make_program, metrics_for_template


@pytest.fixture
def frontier_ready(db, lead, django_capture_on_commit_callbacks):
    """A program in cutover whose frontier sprint is planned to start seven weeks from today."""
    metrics_for_template()
    today = timezone.localdate()
    with django_capture_on_commit_callbacks(execute=True):
        program = make_program(lead, start=today - timedelta(days=300))
    phases = {p.kind: p for p in Phase.objects.filter(program=program)}
    frontier = phases["frontier"]
    Phase.objects.filter(pk=frontier.pk).update(
        planned_start=today + timedelta(weeks=7), planned_end=today + timedelta(weeks=15)
    )
    Phase.objects.filter(pk__in=[phases["poc"].pk, phases["canary"].pk]).update(
        status="completed", actual_end=today - timedelta(days=100)
    )
    Phase.objects.filter(pk=phases["cutover"].pk).update(
        status="active",
        actual_start=today - timedelta(days=100),
        planned_end=today + timedelta(weeks=7) - timedelta(days=1),
    )
    Gate.objects.filter(kind="exit").update(status="passed")
    windows_follow_phase(phase_id=frontier.pk)  # as a re-plan would have
    return program


def _window(program) -> FreezeWindow:
    return FreezeWindow.objects.get(program=program, phase__kind="frontier")


def test_before_the_sprint_starts_the_window_keeps_the_planned_dates(lead, frontier_ready):
    frontier = Phase.objects.get(kind="frontier")
    assert windows_follow_phase(phase_id=frontier.pk) == 0  # already there: no move, no audit row
    assert _window(frontier_ready).starts_at.date() == frontier.planned_start


def test_starting_the_sprint_early_moves_the_window_to_that_day(
    lead, frontier_ready, django_capture_on_commit_callbacks
):
    today = timezone.localdate()
    with django_capture_on_commit_callbacks(execute=True):
        services.program_advance(actor=lead, program=frontier_ready, reason="Hardware arrived early")
    window = _window(frontier_ready)
    frontier = Phase.objects.get(kind="frontier")
    assert frontier.actual_start == today
    assert window.starts_at.date() == today
    # The sprint keeps its planned length from the day it really started: seven weeks early at both ends.
    assert window.ends_at.date() == frontier.planned_end - timedelta(weeks=7) + timedelta(days=1)
    moved = Transition.objects.filter(action="moved", object_id=window.pk).latest("id")
    assert moved.data["cause"] == "started"
    assert moved.data["before"]["starts_at"].startswith(frontier.planned_start.isoformat())


def test_backfilling_the_actual_start_moves_the_window_again(
    lead, frontier_ready, django_capture_on_commit_callbacks
):
    today = timezone.localdate()
    with django_capture_on_commit_callbacks(execute=True):
        services.program_advance(actor=lead, program=frontier_ready, reason="early")
    frontier = Phase.objects.get(kind="frontier")
    cutover = Phase.objects.get(kind="cutover")
    Phase.objects.filter(pk=cutover.pk).update(actual_end=today - timedelta(days=3))
    with django_capture_on_commit_callbacks(execute=True):
        services.phase_backfill_dates(
            actor=lead, phase=frontier, actual_start=today - timedelta(days=3), reason="Started on Friday"
        )
    assert _window(frontier_ready).starts_at.date() == today - timedelta(days=3)
    causes = list(
        Transition.objects.filter(action="moved", object_id=_window(frontier_ready).pk)
        .order_by("id")
        .values_list("data__cause", flat=True)
    )
    assert causes == ["re-planned", "started", "dates backfilled"]


def test_completing_the_sprint_ends_its_window_that_day(
    lead, frontier_ready, django_capture_on_commit_callbacks
):
    today = timezone.localdate()
    with django_capture_on_commit_callbacks(execute=True):
        services.program_advance(actor=lead, program=frontier_ready, reason="early")
    with django_capture_on_commit_callbacks(execute=True):
        services.program_advance(actor=lead, program=frontier_ready, reason="Sprint done in a day (test)")
    window = _window(frontier_ready)
    assert (window.starts_at.date(), window.ends_at.date()) == (today, today + timedelta(days=1))


def test_a_sprint_started_late_is_frozen_for_its_planned_length_from_that_day(
    lead, frontier_ready, django_capture_on_commit_callbacks
):
    """Started ten days after its planned start, the freeze ends ten days after the planned end."""
    today = timezone.localdate()
    frontier = Phase.objects.get(kind="frontier")
    Phase.objects.filter(pk=frontier.pk).update(
        planned_start=today - timedelta(days=10), planned_end=today + timedelta(days=40)
    )
    with django_capture_on_commit_callbacks(execute=True):
        services.program_advance(actor=lead, program=frontier_ready, reason="The cluster came late")
    window = _window(frontier_ready)
    assert (window.starts_at.date(), window.ends_at.date()) == (today, today + timedelta(days=51))
