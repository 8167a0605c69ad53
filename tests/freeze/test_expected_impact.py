"""The expected impact of an exception: per gate metric it names, the requester states direction and
size (each refusal a 400 naming the entry's field, nothing written; submission needs one per metric);
after the change window the exception page, its API and the gate page set the metric before against
after the window (with its interval, checked against numpy) beside what was expected."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest
from django.utils import timezone

from freeze import services
from freeze.models import ExpectedImpact, FreezeException
from metrics import ingest
from program.models import Gate
from tests.freeze.factories import draft_exception, exception_payload, freeze_setup, submitted_exception

URL = "/api/v1/freeze-exceptions/"
CANARY_EXIT = "New reaches 80% of old on the canary workloads"  # its criteria use step-time
WORSE_5 = [{"metric": "step-time", "direction": "worse", "size_pct": 5}]


@pytest.fixture
def ref(db, lead):
    return freeze_setup(lead)


def test_api_takes_and_shows_the_expected_direction_and_size(as_user, engineer, ref):
    client = as_user(engineer)
    made = client.post(
        URL, exception_payload(affected_metrics=["step-time"], expected_impacts=WORSE_5), format="json"
    )
    assert made.status_code == 201, made.json()
    assert made.json()["expected_impacts"] == [{"metric": "step-time", "direction": "worse", "size_pct": 5.0}]
    pk = made.json()["id"]
    edited = client.patch(
        f"{URL}{pk}/",
        {"expected_impacts": [{"metric": "step-time", "direction": "unchanged", "size_pct": 2}]},
        format="json",
    )
    assert edited.status_code == 200, edited.json()
    assert edited.json()["expected_impacts"][0]["direction"] == "unchanged"
    # Dropping the metric drops its expectation.
    dropped = client.patch(f"{URL}{pk}/", {"affected_metrics": []}, format="json")
    assert dropped.json()["expected_impacts"] == []


@pytest.mark.parametrize(
    ("entry", "field"),
    [
        (
            {"metric": "training-throughput", "direction": "worse", "size_pct": 5},
            "expected_impacts[0].metric",
        ),
        ({"metric": "step-time", "direction": "sideways", "size_pct": 5}, "expected_impacts[0].direction"),
        ({"metric": "step-time", "direction": "worse", "size_pct": -1}, "expected_impacts[0].size_pct"),
        ({"metric": "step-time", "direction": "worse", "size_pct": "a lot"}, "expected_impacts[0].size_pct"),
        ({"metric": "step-time", "direction": "worse"}, "expected_impacts[0].size_pct"),
    ],
)
def test_a_bad_expectation_is_a_400_naming_its_field_and_nothing_is_written(
    as_user, engineer, ref, entry, field
):
    response = as_user(engineer).post(
        URL, exception_payload(affected_metrics=["step-time"], expected_impacts=[entry]), format="json"
    )
    assert response.status_code == 400, response.json()
    assert response.json()["errors"][0]["field"] == field
    assert not FreezeException.objects.exists() and not ExpectedImpact.objects.exists()


def test_submission_needs_an_expectation_for_every_named_metric(as_user, engineer, ref):
    exception = draft_exception(engineer, ref["trainer"], ref["now"], affected_metrics=["step-time"])
    client = as_user(engineer)
    refused = client.post(f"{URL}{exception.pk}/submit/", {}, format="json")
    assert refused.status_code == 400
    assert (
        refused.json()["errors"][0]["field"] == "expected_impacts" and "step-time" in refused.json()["detail"]
    )
    exception.refresh_from_db()
    assert exception.status == "draft"
    services.exception_edit(actor=engineer, exception=exception, changes={"expected_impacts": WORSE_5})
    assert client.post(f"{URL}{exception.pk}/submit/", {}, format="json").status_code == 200
    # Once submitted, naming another metric needs its expectation in the same edit.
    more = client.patch(
        f"{URL}{exception.pk}/", {"affected_metrics": ["step-time", "training-throughput"]}, format="json"
    )
    assert more.status_code == 400 and more.json()["errors"][0]["field"] == "expected_impacts"
    assert sorted(exception.affected_metrics.values_list("key", flat=True)) == ["step-time"]


def observe(user, values: list[float], start, step: timedelta) -> None:
    rows = [
        {
            "metric": "step-time",
            "system": "rebuilt",
            "workload": "llm-finetune-8b",
            "value": value,
            "observed_at": (start + i * step).isoformat(),
            "run_id": f"r-{start:%d%H}-{i}",
        }
        for i, value in enumerate(values)
    ]
    ingest.observations_ingest_rows(rows=rows, actor=user)


def ran_last_week(engineer, component_owner, ref, *, expected=WORSE_5, approve=True) -> FreezeException:
    """An exception on step-time whose one-day change window ended two days ago."""
    exception = submitted_exception(
        engineer,
        ref["trainer"],
        ref["now"],
        title="NCCL upgrade",
        affected_metrics=["step-time"],
        expected_impacts=expected,
    )
    if approve:
        services.exception_approve(actor=component_owner, exception=exception)
    else:
        services.exception_reject(actor=component_owner, exception=exception, reason="no")
    now = timezone.now()
    # Tests only: the services refuse a window that has already ended.
    FreezeException.objects.filter(pk=exception.pk).update(
        change_starts_at=now - timedelta(days=3), change_ends_at=now - timedelta(days=2)
    )
    return FreezeException.objects.get(pk=exception.pk)


@pytest.fixture
def before_after(ingest_user):
    """41 step times a side: the day before the change and the day after it, 5 % slower after."""
    rng = np.random.default_rng(7)
    before = list(500 + rng.normal(0, 4, 41))
    after = list(525 + rng.normal(0, 4, 41))
    now = timezone.now()
    observe(ingest_user, before, now - timedelta(days=3, hours=23), timedelta(minutes=30))
    observe(ingest_user, after, now - timedelta(days=1, hours=23), timedelta(minutes=30))
    # Inside the change window itself: not compared.
    observe(ingest_user, [900.0] * 5, now - timedelta(days=2, hours=12), timedelta(minutes=30))
    return before, after


def test_after_the_window_the_api_compares_before_and_after_beside_the_expectation(
    as_user, engineer, component_owner, ref, before_after
):
    before, after = before_after
    exception = ran_last_week(engineer, component_owner, ref)
    rows = as_user(engineer).get(f"{URL}{exception.pk}/impact/").json()
    assert len(rows) == 1
    row = rows[0]
    assert (row["metric"], row["system"], row["state"]) == ("step-time", "rebuilt", "compared")
    assert row["expected"] == {"direction": "worse", "size_pct": 5.0}
    assert row["after_filling"] is False
    comparison = row["comparison"]
    assert (comparison["baseline"]["n"], comparison["candidate"]["n"]) == (41, 41)
    # Lower is better: relative performance is before / after (p50), below 1 when it got slower.
    expected_ratio = np.median(before) / np.median(after)
    assert comparison["relative_performance"] == pytest.approx(expected_ratio, rel=1e-9)
    low, high = comparison["relative_performance_ci"]
    assert low < expected_ratio < high < 1
    assert comparison["verdict"] == "worse"
    assert row["agreement"] == "as expected: worse"


def test_the_exception_page_and_the_gate_page_show_expected_against_observed(
    client, engineer, component_owner, lead, ref, before_after
):
    exception = ran_last_week(engineer, component_owner, ref)
    client.force_login(lead)
    page = client.get(f"/freeze/exceptions/{exception.pk}/").content.decode()
    assert 'data-testid="exception-impact"' in page
    assert "worse by 5 %" in page and "as expected: worse" in page and "interval" in page
    gate = Gate.objects.get(name=CANARY_EXIT)
    gate_page = client.get(f"/programs/gates/{gate.pk}/").content.decode()
    assert "expected vs observed impact" in gate_page
    assert f"#{exception.pk} NCCL upgrade · step-time" in gate_page
    assert "expected worse by 5 %; observed on rebuilt:" in gate_page and "as expected: worse" in gate_page


def test_an_expectation_that_did_not_hold_says_so(as_user, engineer, component_owner, ref, before_after):
    exception = ran_last_week(
        engineer,
        component_owner,
        ref,
        expected=[{"metric": "step-time", "direction": "unchanged", "size_pct": 1}],
    )
    (row,) = as_user(engineer).get(f"{URL}{exception.pk}/impact/").json()
    assert row["agreement"] == "not as expected: worse"


def test_nothing_is_compared_before_the_window_ends_or_for_a_change_not_carried_out(
    as_user, engineer, component_owner, ref, before_after
):
    upcoming = submitted_exception(
        engineer,
        ref["trainer"],
        ref["now"],
        title="Later",
        affected_metrics=["step-time"],
        expected_impacts=WORSE_5,
    )
    (row,) = as_user(engineer).get(f"{URL}{upcoming.pk}/impact/").json()
    assert row["state"] == "pending" and row["comparison"] is None
    rejected = ran_last_week(engineer, component_owner, ref, approve=False)
    (row,) = as_user(engineer).get(f"{URL}{rejected.pk}/impact/").json()
    assert row["state"] == "not_carried_out" and row["comparison"] is None


def test_the_form_takes_one_line_per_metric_and_names_a_bad_line(client, engineer, ref):
    client.force_login(engineer)
    start = ref["now"] + timedelta(hours=1)
    form = {
        "component": "trainer",
        "title": "NCCL",
        "change": "c",
        "justification": "j",
        "risk": "low",
        "rollback_plan": "r",
        "change_starts_at_0": f"{start:%Y-%m-%d}",
        "change_starts_at_1": f"{start:%H:%M}",
        "change_ends_at_0": f"{start + timedelta(hours=3):%Y-%m-%d}",
        "change_ends_at_1": f"{start + timedelta(hours=3):%H:%M}",
        "affected_metrics": ["step-time"],
    }
    bad = client.post("/freeze/exceptions/new/", {**form, "expected_impacts": "step-time slower"})
    assert bad.status_code == 400 and "Line 1" in bad.content.decode()
    assert not FreezeException.objects.exists()
    made = client.post("/freeze/exceptions/new/", {**form, "expected_impacts": "step-time worse 5 %"})
    assert made.status_code == 302
    impact = ExpectedImpact.objects.get()
    assert (impact.metric.key, impact.direction, impact.size_pct) == ("step-time", "worse", 5.0)
    edit = client.get(f"/freeze/exceptions/{impact.exception_id}/edit/").content.decode()
    assert "step-time worse 5" in edit
