"""Recurrence links ("the same pitfall again"): what `recurrence_of` may name, each refusal a 400
naming the field and nothing written; the rate per bug class and month, on the page beside MTTR,
in the API, and as the derived `recurrence-rate` metric a gate criterion compares like `mttr`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from core.errors import ApplicationError
from incidents import services
from incidents.models import Incident
from incidents.services.derived import incident_rates_derive
from incidents.vocabulary import incident_metrics_ensure
from metrics.models import MetricDefinition, Observation
from program import services as program_services
from program.models import Criterion, CriterionResult, Gate
from tests.incidents.factories import file_incident, incidents_setup
from tests.program.factories import make_program, metrics_for_template

URL = "/api/v1/incidents/"
MARCH = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


@pytest.fixture
def refs(db):
    return incidents_setup()


def test_an_incident_links_an_earlier_one_of_the_same_class(refs, engineer, as_user):
    first = file_incident(engineer, refs, opened=MARCH)
    again = file_incident(
        engineer, refs, system="legacy", opened=MARCH + timedelta(days=3), recurrence_of=first
    )
    assert again.recurrence_of == first
    body = as_user(engineer).get(f"{URL}{again.pk}/").json()
    assert body["recurrence_of"] == first.pk


@pytest.mark.parametrize(
    ("opened", "bug_class", "message"),
    [
        (MARCH - timedelta(hours=1), "hang", "opened before this one"),
        (MARCH, "hang", "opened before this one"),  # the same moment is not earlier
        (MARCH + timedelta(days=1), "divergence", "same bug class"),
    ],
)
def test_a_link_to_a_later_or_other_class_incident_is_a_400_naming_the_field(
    refs, engineer, as_user, opened, bug_class, message
):
    first = file_incident(engineer, refs, opened=MARCH)
    body = {
        "title": "Hang again",
        "system": "rebuilt",
        "component": "nccl",
        "bug_class": refs[bug_class].key,
        "severity": "sev2",
        "opened_at": opened.isoformat(),
        "detected_at": (opened + timedelta(minutes=5)).isoformat(),
        "recurrence_of": first.pk,
    }
    response = as_user(engineer).post(URL, body, format="json")
    assert response.status_code == 400, response.json()
    assert response.json()["errors"][0]["field"] == "recurrence_of"
    assert message in response.json()["detail"]
    assert Incident.objects.count() == 1


def test_unknown_and_self_links_are_refused(refs, engineer, as_user):
    first = file_incident(engineer, refs, opened=MARCH)
    client = as_user(engineer)
    unknown = client.patch(f"{URL}{first.pk}/", {"recurrence_of": 999999}, format="json")
    assert unknown.status_code == 400 and unknown.json()["errors"][0]["field"] == "recurrence_of"
    itself = client.patch(f"{URL}{first.pk}/", {"recurrence_of": first.pk}, format="json")
    assert itself.status_code == 400 and itself.json()["errors"][0]["field"] == "recurrence_of"
    first.refresh_from_db()
    assert first.recurrence_of is None


def test_no_cycle_and_no_edit_that_breaks_the_order_of_a_link(refs, engineer):
    first = file_incident(engineer, refs, opened=MARCH)
    again = file_incident(engineer, refs, opened=MARCH + timedelta(days=2), recurrence_of=first)
    # Linking the earlier one back to its recurrence would be a cycle: it is not earlier.
    with pytest.raises(ApplicationError) as cycle:
        services.incident_update(actor=engineer, incident=first, changes={"recurrence_of": again})
    assert cycle.value.errors[0]["field"] == "recurrence_of"
    # Moving the earlier one after its recurrence, or changing its class, breaks the link: refused.
    with pytest.raises(ApplicationError) as moved:
        services.incident_update(
            actor=engineer,
            incident=first,
            changes={"opened_at": MARCH + timedelta(days=3), "detected_at": MARCH + timedelta(days=3)},
        )
    assert moved.value.errors[0]["field"] == "opened_at" and f"#{again.pk}" in moved.value.message
    with pytest.raises(ApplicationError) as reclassed:
        services.incident_update(actor=engineer, incident=first, changes={"bug_class": refs["divergence"]})
    assert reclassed.value.errors[0]["field"] == "bug_class"
    # And the recurrence cannot move before what it recurs.
    with pytest.raises(ApplicationError) as early:
        services.incident_update(
            actor=engineer,
            incident=again,
            changes={"opened_at": MARCH - timedelta(days=1)},
        )
    assert early.value.errors[0]["field"] == "opened_at"
    first.refresh_from_db()
    again.refresh_from_db()
    assert (first.opened_at, first.bug_class, first.recurrence_of) == (MARCH, refs["hang"], None)
    assert again.opened_at == MARCH + timedelta(days=2)


def file_month(engineer, refs, system: str, month: datetime, total: int, recurring: int, bug_class="hang"):
    """`total` incidents of one class in the month, the last `recurring` of them linking the first."""
    first = file_incident(engineer, refs, system=system, opened=month, bug_class=refs[bug_class])
    for i in range(1, total):
        file_incident(
            engineer,
            refs,
            system=system,
            opened=month + timedelta(days=i),
            bug_class=refs[bug_class],
            recurrence_of=first if i >= total - recurring else None,
        )


def test_the_rate_per_class_and_month_is_in_the_api_and_beside_mttr_on_the_page(
    refs, engineer, as_user, client
):
    file_month(engineer, refs, "rebuilt", MARCH, total=4, recurring=1)
    file_month(engineer, refs, "rebuilt", MARCH, total=2, recurring=0, bug_class="divergence")
    file_month(engineer, refs, "legacy", datetime(2026, 4, 1, tzinfo=UTC), total=2, recurring=1)
    rows = as_user(engineer).get(f"{URL}recurrence/?system=rebuilt").json()
    assert [(r["bug_class"], r["count"], r["recurrences"], r["rate"]) for r in rows] == [
        ("communication-hang", 4, 1, 0.25),
        ("numerical-divergence", 2, 0, 0.0),
    ]
    assert rows[0]["month"].startswith("2026-03-01T00:00:00")
    bad = as_user(engineer).get(f"{URL}recurrence/?bug_class=nope")
    assert bad.status_code == 400 and bad.json()["errors"][0]["field"] == "bug_class"
    client.force_login(engineer)
    page = client.get("/incidents/").content.decode()
    assert 'data-testid="mttr-chart"' in page and 'data-testid="recurrence-table"' in page
    assert page.count('data-testid="recurrence-row"') == 3
    assert ">25 %<" in page and ">50 %<" in page


def test_recurrence_rate_is_derived_per_system_class_and_completed_month(refs, engineer):
    file_month(engineer, refs, "rebuilt", MARCH, total=4, recurring=1)
    file_month(engineer, refs, "rebuilt", datetime(2026, 6, 1, tzinfo=UTC), total=2, recurring=1)  # June
    incident_rates_derive(days=7, now=datetime(2026, 6, 17, tzinfo=UTC))
    rows = Observation.objects.filter(definition__key="recurrence-rate")
    assert dict(rows.values_list("run_id", "value")) == {"rebuilt-communication-hang-month-2026-03": 0.25}
    assert rows.get().tags == {"bug_class": "communication-hang"}
    assert rows.get().observed_at == datetime(2026, 3, 1, tzinfo=UTC)
    # A link made later corrects its month on the next run.
    march = Incident.objects.filter(opened_at__lt=datetime(2026, 4, 1, tzinfo=UTC)).order_by("opened_at")
    services.incident_update(actor=engineer, incident=march[1], changes={"recurrence_of": march[0]})
    assert incident_rates_derive(days=7, now=datetime(2026, 6, 17, tzinfo=UTC)) == 1
    assert dict(rows.values_list("run_id", "value")) == {"rebuilt-communication-hang-month-2026-03": 0.5}


@pytest.fixture
def gate(db, lead):
    metrics_for_template()
    incident_metrics_ensure()
    program = make_program(lead)
    gate = Gate.objects.get(phase__program=program, phase__kind="canary", kind="exit")
    criterion = program_services.criterion_add(
        actor=lead,
        gate=gate,
        name="The new system repeats its pitfalls no more often than the old one",
        kind=Criterion.Kind.RELATIVE,
        metric=MetricDefinition.objects.get(key="recurrence-rate", status="active"),
        statistic="mean",
        operator=Criterion.Operator.GTE,
        threshold=1.0,
        min_samples=3,
    )
    return gate, criterion


def outcome(gate, criterion, lead) -> str:
    evaluation = program_services.gate_evaluate(gate=gate, actor=lead)
    return CriterionResult.objects.get(evaluation=evaluation, criterion=criterion).outcome


@pytest.mark.parametrize(("rebuilt", "legacy", "expected"), [(1, 3, "pass"), (3, 1, "fail")])
def test_recurrence_rate_decides_a_gate_criterion_like_mttr(gate, lead, engineer, rebuilt, legacy, expected):
    """Three months × one class a side, derived from incidents alone; fewer recurrences pass."""
    refs = incidents_setup()
    for month in (2, 3, 4):  # the three completed months before May the derivation covers
        start = datetime(2026, month, 2, tzinfo=UTC)
        file_month(engineer, refs, "rebuilt", start, total=4, recurring=rebuilt - (month == 2))
        file_month(engineer, refs, "legacy", start, total=4, recurring=legacy - (month == 3))
    incident_rates_derive(days=7, now=datetime(2026, 5, 17, tzinfo=UTC))
    assert Observation.objects.filter(definition__key="recurrence-rate").count() == 6
    assert outcome(*gate, lead) == expected
