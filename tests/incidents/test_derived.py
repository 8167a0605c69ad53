"""incident_rates_derive: incidents per ISO week and effective rounds per day, written through ingest,
idempotent, and corrected when an incident is filed late."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from incidents.services.derived import incident_rates_derive
from metrics import ingest
from metrics.models import Observation
from tests.incidents.factories import file_incident, incidents_setup
from tests.metrics.factories import definition

NOW = datetime(2026, 6, 17, 9, 0, tzinfo=UTC)  # a Wednesday
MONDAY = datetime(2026, 6, 8, tzinfo=UTC)  # the last completed ISO week, 2026-W24


@pytest.fixture
def refs(db):
    definition(key="step-time", unit="ms", sampling="per_step")
    return incidents_setup()


def values(metric: str) -> dict[str, float]:
    rows = Observation.objects.filter(definition__key=metric)
    return dict(rows.values_list("run_id", "value"))


def step_runs(system: str, runs: dict[str, tuple[datetime, datetime]], user) -> None:
    rows = [
        {
            "metric": "step-time",
            "system": system,
            "workload": "llm-70b",
            "value": 500.0,
            "observed_at": moment.isoformat(),
            "run_id": run,
        }
        for run, (start, end) in runs.items()
        for moment in (start, end)
    ]
    ingest.observations_ingest_rows(rows=rows, actor=user)


def test_weekly_counts_include_zero_weeks_and_repeat_as_a_no_op(refs, engineer):
    for day in (0, 2, 4):
        file_incident(engineer, refs, opened=MONDAY + timedelta(days=day, hours=3))
    file_incident(engineer, refs, system="legacy", opened=MONDAY - timedelta(days=5))
    incident_rates_derive(days=14, now=NOW)
    weekly = values("incidents-per-week")
    assert weekly["rebuilt-week-2026-W24"] == 3
    assert weekly["legacy-week-2026-W24"] == 0
    assert weekly["legacy-week-2026-W23"] == 1
    assert "rebuilt-week-2026-W25" not in weekly  # the current week is not over
    assert incident_rates_derive(days=14, now=NOW) == 0


def test_a_late_filed_incident_corrects_its_week(refs, engineer):
    file_incident(engineer, refs, opened=MONDAY + timedelta(hours=5))
    incident_rates_derive(days=14, now=NOW)
    file_incident(engineer, refs, opened=MONDAY + timedelta(days=1))
    assert incident_rates_derive(days=14, now=NOW) >= 1
    assert values("incidents-per-week")["rebuilt-week-2026-W24"] == 2
    assert Observation.objects.filter(run_id="rebuilt-week-2026-W24").count() == 1


def test_runs_overlapping_an_incident_are_not_effective(refs, engineer, ingest_user):
    day = datetime(2026, 6, 15, tzinfo=UTC)
    file_incident(
        engineer,
        refs,
        opened=day + timedelta(hours=10),
        detected_at=day + timedelta(hours=10, minutes=5),
        resolved_at=day + timedelta(hours=12),
    )
    step_runs(
        "rebuilt",
        {
            "before": (day + timedelta(hours=1), day + timedelta(hours=9)),
            "through": (day + timedelta(hours=9), day + timedelta(hours=11)),  # interrupted
            "after": (day + timedelta(hours=13), day + timedelta(hours=20)),
        },
        ingest_user,
    )
    step_runs("legacy", {"l1": (day + timedelta(hours=2), day + timedelta(hours=11))}, ingest_user)
    incident_rates_derive(days=7, now=NOW)
    rounds = values("effective-rounds-per-day")
    assert rounds["rebuilt-day-2026-06-15"] == 2
    assert rounds["legacy-day-2026-06-15"] == 1  # the incident was on the other system


def test_each_program_counts_the_runs_of_its_own_bound_rounds_metric(refs, engineer, ingest_user, lead):
    """rebuild-14m names `step_time` as its rounds slot; a program binding it to a metric of its own
    gets rounds from that metric's runs, tagged with the program, while the site-wide series (from
    step-time) does not see them."""
    from metrics.models import MetricDefinition
    from program.services import program_create

    definition(key="trainer-step-time", unit="ms", sampling="per_step")
    for key, unit in (("training-throughput", "token/s"), ("scaling-efficiency", "dimensionless")):
        definition(key=key, unit=unit)
    program_create(
        actor=lead,
        slug="trainer",
        name="Trainer",
        start_date=date(2026, 1, 1),
        baseline=refs["legacy"],
        candidate=refs["rebuilt"],
        bindings={"step_time": "trainer-step-time"},
    )
    program_create(  # binds the suggested step-time: its rounds are the site-wide runs
        actor=lead,
        slug="default",
        name="Default",
        start_date=date(2026, 1, 1),
        baseline=refs["legacy"],
        candidate=refs["rebuilt"],
    )
    day = datetime(2026, 6, 15, tzinfo=UTC)
    file_incident(
        engineer,
        refs,
        opened=day + timedelta(hours=10),
        detected_at=day + timedelta(hours=10, minutes=5),
        resolved_at=day + timedelta(hours=12),
    )
    own = {
        "t1": (day + timedelta(hours=1), day + timedelta(hours=3)),
        "t2": (day + timedelta(hours=4), day + timedelta(hours=6)),
        "t3": (day + timedelta(hours=9), day + timedelta(hours=11)),  # interrupted by the incident
    }
    rows = [
        {
            "metric": "trainer-step-time",
            "system": "rebuilt",
            "workload": "llm-70b",
            "value": 480.0,
            "observed_at": moment.isoformat(),
            "run_id": run,
        }
        for run, (start, end) in own.items()
        for moment in (start, end)
    ]
    ingest.observations_ingest_rows(rows=rows, actor=ingest_user)
    step_runs("rebuilt", {"s1": (day + timedelta(hours=13), day + timedelta(hours=14))}, ingest_user)
    incident_rates_derive(days=7, now=NOW)
    per_program = Observation.objects.filter(definition__key="program-rounds-per-day")
    assert dict(per_program.values_list("run_id", "value")) == {
        "trainer-rebuilt-day-2026-06-15": 2,
        "default-rebuilt-day-2026-06-15": 1,
    }
    assert per_program.get(run_id="trainer-rebuilt-day-2026-06-15").tags == {"program": "trainer"}
    assert values("effective-rounds-per-day") == {"rebuilt-day-2026-06-15": 1}
    assert MetricDefinition.objects.get(key="program-rounds-per-day").direction == "higher_is_better"
    assert incident_rates_derive(days=7, now=NOW) == 0
