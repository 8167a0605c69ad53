"""The derived incident metrics, written daily by beat through the ingest service:

- `incidents-per-week`: incidents opened per system in each completed ISO week (zeros included, for
  every system with incidents), observed at the week's Monday 00:00 UTC, run_id `<system>-week-<YYYY-Www>`.
- `effective-rounds-per-day`: per system and completed UTC day, the runs that reached their end event
  without an incident. A run is the observations of one run_id of RUNS_METRIC (step time by default);
  it starts at its first observation and ends (its end event) at its last; it counts on the day it
  ended when no incident on its system was open at any moment of that span. run_id `<system>-day-<date>`.
- `program-rounds-per-day`: the same count per program, from the program's own runs: the metric its
  template's `rounds_slot` is bound to (the program's criteria on that slot carry the binding), on the
  program's two systems. Tagged `program: <slug>`, run_id `<slug>-<system>-day-<date>`; a criterion or
  comparison names its program with `tag_filters: {"program": [slug]}`. A program whose template names
  no rounds slot, or whose slot is unbound, derives none.
- `recurrence-rate`: per system, bug class (tag `bug_class`) and completed UTC month of the last
  RECURRENCE_MONTHS, the share of the month's incidents of that class that recur an earlier incident
  (`recurrence_of`), observed at the month's first day, run_id `<system>-<class>-month-<YYYY-MM>`.
  Only months with an incident of the class count (no share of nothing). A criterion on it works like
  one on `mttr`: "relative, recurrence-rate mean ≥ 1 × legacy" (lower is better).

Idempotent: a value already stored is left alone (ingest's natural key makes it a no-op); a value that
changed (an incident filed late) is withdrawn and written again, in one transaction.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from incidents import evidence
from incidents.selectors import IncidentFilter, recurrence_by_month
from incidents.vocabulary import incident_metrics_ensure
from metrics.models import Observation
from metrics.public import observations_ingest_rows, observations_withdraw
from program.blueprints import blueprint_rounds_slot
from program.models import Criterion, Program

# The site-wide runs: every version of one metric key, on every system.
SITE_RUNS = "d.key = %(metric)s"
# A program's runs: its bound definition (one version), on its own two systems.
PROGRAM_RUNS = "o.definition_id = %(definition)s AND o.system_id = ANY(%(systems)s)"
DERIVED = (
    evidence.INCIDENTS_PER_WEEK,
    evidence.EFFECTIVE_ROUNDS,
    evidence.PROGRAM_ROUNDS,
    evidence.RECURRENCE_RATE,
)
# Completed months rewritten each day: a recurrence linked weeks later still corrects its month.
RECURRENCE_MONTHS = 3

WEEKLY_SQL = """
WITH weeks AS (
    SELECT generate_series(%(first)s::date, %(last)s::date, interval '7 days')::date AS monday
), systems AS (
    SELECT DISTINCT system_id FROM incidents_incident
)
SELECT s.key, w.monday, count(i.id)
FROM weeks w CROSS JOIN systems x
JOIN metrics_system s ON s.id = x.system_id
LEFT JOIN incidents_incident i ON i.system_id = x.system_id
    AND i.opened_at >= w.monday::timestamp AT TIME ZONE 'UTC'
    AND i.opened_at < (w.monday + 7)::timestamp AT TIME ZONE 'UTC'
GROUP BY s.key, w.monday
"""

ROUNDS_SQL = """
WITH runs AS (
    SELECT o.system_id, o.run_id, min(o.observed_at) AS started, max(o.observed_at) AS ended
    FROM metrics_observation o
    JOIN metrics_metricdefinition d ON d.id = o.definition_id
    WHERE {which} AND o.run_id <> ''
      AND o.observed_at >= %(since)s - interval '7 days' AND o.observed_at < %(until)s
    GROUP BY o.system_id, o.run_id
)
SELECT s.key, (r.ended AT TIME ZONE 'UTC')::date,
       count(*) FILTER (WHERE NOT EXISTS (
           SELECT 1 FROM incidents_incident i
           WHERE i.system_id = r.system_id AND i.opened_at <= r.ended
             AND coalesce(i.resolved_at, %(until)s) >= r.started))
FROM runs r JOIN metrics_system s ON s.id = r.system_id
WHERE r.ended >= %(since)s AND r.ended < %(until)s
GROUP BY s.key, 2
"""


def _midnight(day: date) -> datetime:
    return datetime.combine(day, time.min, tzinfo=UTC)


def _weekly_rows(first_monday: date, last_monday: date) -> list[dict[str, Any]]:
    with connection.cursor() as cursor:
        cursor.execute(WEEKLY_SQL, {"first": first_monday, "last": last_monday})
        found = cursor.fetchall()
    return [
        _row(evidence.INCIDENTS_PER_WEEK, system, f"{system}-week-{monday:%G-W%V}", _midnight(monday), count)
        for system, monday, count in found
    ]


def _rounds(which: str, first_day: date, today: date, **params: Any) -> list[tuple[str, date, int]]:
    with connection.cursor() as cursor:
        cursor.execute(
            ROUNDS_SQL.format(which=which),
            {**params, "since": _midnight(first_day), "until": _midnight(today)},
        )
        return list(cursor.fetchall())


def _rounds_rows(first_day: date, today: date) -> list[dict[str, Any]]:
    found = _rounds(SITE_RUNS, first_day, today, metric=settings.INCIDENTS_RUNS_METRIC)
    return [
        _row(evidence.EFFECTIVE_ROUNDS, system, f"{system}-day-{day:%Y-%m-%d}", _midnight(day), count)
        for system, day, count in found
    ]


def program_runs_bindings() -> list[tuple[Program, int]]:
    """Each program with the definition its template's rounds slot is bound to (two queries)."""
    programs = list(Program.objects.order_by("slug"))
    slots = {p.pk: slot for p in programs if (slot := blueprint_rounds_slot(p.template))}
    bound = dict(
        Criterion.objects.filter(
            gate__phase__program__in=list(slots), slot__in=set(slots.values()), metric__isnull=False
        )
        .order_by("gate__phase__program", "-metric_id")
        .values_list("gate__phase__program", "metric_id")
    )
    # A slot is bound once per program (program_bind fills every criterion alike); should criteria of
    # decided gates still hold an older version, order_by gives the newest definition id the last word.
    return [(p, bound[p.pk]) for p in programs if p.pk in slots and p.pk in bound]


def _program_rounds_rows(first_day: date, today: date) -> list[dict[str, Any]]:
    rows = []
    for program, definition_id in program_runs_bindings():
        systems = [program.baseline_system_id, program.candidate_system_id]
        found = _rounds(PROGRAM_RUNS, first_day, today, definition=definition_id, systems=systems)
        rows += [
            _row(
                evidence.PROGRAM_ROUNDS,
                system,
                f"{program.slug}-{system}-day-{day:%Y-%m-%d}",
                _midnight(day),
                count,
                tags={"program": program.slug},
            )
            for system, day, count in found
        ]
    return rows


def _month_start(day: date, months_back: int = 0) -> date:
    index = day.year * 12 + day.month - 1 - months_back
    return date(index // 12, index % 12 + 1, 1)


def _recurrence_rows(today: date) -> list[dict[str, Any]]:
    window = IncidentFilter(
        since=_midnight(_month_start(today, RECURRENCE_MONTHS)), until=_midnight(_month_start(today))
    )
    return [
        _row(
            evidence.RECURRENCE_RATE,
            month.system,
            f"{month.system}-{month.bug_class}-month-{month.month:%Y-%m}",
            month.month,
            month.rate,
            tags={"bug_class": month.bug_class},
            unit="dimensionless",
        )
        for month in recurrence_by_month(window)
    ]


def _row(
    metric: str,
    system: str,
    run_id: str,
    observed_at: datetime,
    value: float,
    tags: dict[str, str] | None = None,
    unit: str = "count",
) -> dict[str, Any]:
    return {
        **({"tags": tags} if tags else {}),
        "metric": metric,
        "system": system,
        "workload": evidence.FLEET_WORKLOAD,
        "value": float(value),
        "unit": unit,
        "observed_at": observed_at.isoformat(),
        "run_id": run_id,
        "source": evidence.SOURCE,
    }


def incident_rates_derive(*, days: int = 28, now: datetime | None = None) -> int:
    """Write the completed weeks and days of the last `days` (and months of the last RECURRENCE_MONTHS);
    how many values were new or changed."""
    incident_metrics_ensure()
    today = (now or timezone.now()).astimezone(UTC).date()
    first_day = today - timedelta(days=days)
    this_monday = today - timedelta(days=today.weekday())
    first_monday = first_day - timedelta(days=first_day.weekday())
    rows = []
    if first_monday < this_monday:
        rows += _weekly_rows(first_monday, this_monday - timedelta(days=7))
    rows += _rounds_rows(first_day, today)
    rows += _program_rounds_rows(first_day, today)
    rows += _recurrence_rows(today)
    stored = dict(
        Observation.objects.filter(
            definition__key__in=DERIVED,
            run_id__in=[row["run_id"] for row in rows],
            source=evidence.SOURCE,
        ).values_list("run_id", "value")
    )
    changed = [row for row in rows if stored.get(row["run_id"]) != row["value"]]
    if not changed:
        return 0
    definition_ids = evidence.active_definition_ids(DERIVED)
    with transaction.atomic():
        for row in changed:
            if row["run_id"] in stored:
                observations_withdraw(definition_ids=definition_ids, run_id=row["run_id"])
        observations_ingest_rows(rows=changed, actor=None, source=evidence.SOURCE)
    return len(changed)
