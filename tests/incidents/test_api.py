"""The incidents API: filing, updating, filters, the MTTR endpoint (checked against numpy), CSV import."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from incidents.models import Incident
from metrics.models import Observation
from tests.incidents.factories import file_incident, incidents_setup

URL = "/api/v1/incidents/"


@pytest.fixture
def refs(db):
    return incidents_setup()


def payload(**changes) -> dict:
    opened = timezone.now() - timedelta(days=1)
    body = {
        "title": "Loss spikes to NaN after 12k steps",
        "system": "rebuilt",
        "component": "nccl",
        "bug_class": "numerical-divergence",
        "severity": "sev1",
        "opened_at": opened.isoformat(),
        "detected_at": (opened + timedelta(minutes=30)).isoformat(),
        "link": "https://tracker.example.com/BUG-1",
    }
    body.update(changes)
    return body


def test_an_engineer_files_an_incident(refs, as_user, engineer):
    response = as_user(engineer).post(URL, payload(), format="json")
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["state"] == "open"
    assert body["bug_class"] == "numerical-divergence"
    assert body["checklist"][0] == {"step": refs["divergence"].runbook[0], "done": False}
    assert body["reporter"] == "engineer"


def test_a_viewer_gets_403_before_the_body_is_read(refs, as_user, viewer):
    response = as_user(viewer).post(URL, {"opened_at": "nonsense"}, format="json")
    assert response.status_code == 403
    assert response.json()["errors"] == []


def test_out_of_order_times_are_a_400_per_rule(refs, as_user, engineer):
    opened = timezone.now() - timedelta(days=1)
    body = payload(
        detected_at=(opened - timedelta(hours=1)).isoformat(),
        opened_at=opened.isoformat(),
        mitigated_at=(opened + timedelta(hours=2)).isoformat(),
        resolved_at=(opened + timedelta(hours=1)).isoformat(),
    )
    response = as_user(engineer).post(URL, body, format="json")
    assert response.status_code == 400
    assert [(e["field"], e["message"]) for e in response.json()["errors"]] == [
        ("detected_at", "detected_at must not be before opened_at."),
        ("resolved_at", "resolved_at must not be before mitigated_at."),
    ]
    assert not Incident.objects.exists()


def test_an_unknown_bug_class_names_the_field(refs, as_user, engineer):
    response = as_user(engineer).post(URL, payload(bug_class="gremlins"), format="json")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "bug_class"


@pytest.mark.parametrize("path", ["", "mttr/"])
@pytest.mark.parametrize("field", ["system", "bug_class"])
def test_an_unknown_key_in_the_filters_is_a_400_naming_it(refs, as_user, viewer, path, field):
    response = as_user(viewer).get(f"{URL}{path}", {field: "no-such"})
    assert response.status_code == 400
    assert [e["field"] for e in response.json()["errors"]] == [field]


def test_a_repeated_idempotency_key_files_once(refs, as_user, engineer):
    client = as_user(engineer)
    body = payload()
    first = client.post(URL, body, format="json", HTTP_IDEMPOTENCY_KEY="file-1")
    again = client.post(URL, body, format="json", HTTP_IDEMPOTENCY_KEY="file-1")
    assert first.status_code == again.status_code == 201
    assert first.json()["id"] == again.json()["id"]
    assert Incident.objects.count() == 1


def test_patch_resolves_and_writes_the_evidence(refs, as_user, engineer):
    client = as_user(engineer)
    incident = client.post(URL, payload(), format="json").json()
    resolved = datetime.fromisoformat(incident["opened_at"]) + timedelta(hours=4)
    response = client.patch(
        f"{URL}{incident['id']}/", {"resolved_at": resolved.isoformat(), "done_steps": [0, 2]}, format="json"
    )
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["state"] == "resolved"
    assert [step["done"] for step in body["checklist"]][:3] == [True, False, True]
    values = dict(
        Observation.objects.filter(run_id=f"incident-{incident['id']}").values_list(
            "definition__key", "value"
        )
    )
    assert values == {"mttr": pytest.approx(4.0), "mttd": pytest.approx(0.5)}


def test_patch_out_of_order_is_a_400_naming_the_field(refs, as_user, engineer):
    client = as_user(engineer)
    incident = client.post(URL, payload(), format="json").json()
    early = datetime.fromisoformat(incident["opened_at"]) - timedelta(hours=1)
    response = client.patch(f"{URL}{incident['id']}/", {"resolved_at": early.isoformat()}, format="json")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "resolved_at"


def test_the_list_filters_and_runs_a_constant_number_of_queries(refs, as_user, engineer, viewer):
    now = timezone.now()
    for i in range(3):
        file_incident(engineer, refs, system="legacy", opened=now - timedelta(days=10 + i))
    file_incident(engineer, refs, opened=now - timedelta(days=2), resolved_at=now - timedelta(days=1))
    client = as_user(viewer)
    assert [row["system"] for row in client.get(URL, {"system": "legacy"}).json()["results"]] == [
        "legacy"
    ] * 3
    assert len(client.get(URL, {"state": "resolved"}).json()["results"]) == 1
    assert len(client.get(URL, {"since": (now - timedelta(days=5)).isoformat()}).json()["results"]) == 1
    assert client.get(URL, {"severity": "sev9"}).status_code == 400
    with CaptureQueriesContext(connection) as few:
        client.get(URL)
    for i in range(5):
        file_incident(engineer, refs, opened=now - timedelta(days=20 + i))
    with CaptureQueriesContext(connection) as more:
        assert len(client.get(URL).json()["results"]) == 9
    assert len(more) == len(few)


def test_mttr_endpoint_matches_numpy(refs, as_user, engineer, viewer):
    now = timezone.now().replace(microsecond=0)
    hours = {"legacy": [2.0, 5.0, 11.0], "rebuilt": [30.0, 6.5, 9.0, 40.0]}
    for system, values in hours.items():
        for i, value in enumerate(values):
            opened = now - timedelta(days=5 + i)
            file_incident(
                engineer,
                refs,
                system=system,
                opened=opened,
                detected_at=opened + timedelta(hours=0.25 * (i + 1)),
                resolved_at=opened + timedelta(hours=value),
            )
    file_incident(engineer, refs, system="rebuilt", opened=now - timedelta(days=1))  # open: counted, no MTTR
    rows = {row["system"]: row for row in as_user(viewer).get(f"{URL}mttr/").json()}
    for system, values in hours.items():
        row = rows[system]
        assert row["bug_class"] == "communication-hang"
        assert row["mttr_hours"] == pytest.approx(np.mean(values))
        assert row["mttr_p50_hours"] == pytest.approx(np.median(values))
        detect = [0.25 * (i + 1) for i in range(len(values))] + ([1.0] if system == "rebuilt" else [])
        assert row["mttd_hours"] == pytest.approx(np.mean(detect))  # every incident was detected
    assert (rows["rebuilt"]["count"], rows["rebuilt"]["resolved"]) == (5, 4)
    legacy_only = as_user(viewer).get(f"{URL}mttr/", {"system": "legacy"}).json()
    assert [row["system"] for row in legacy_only] == ["legacy"]


def test_bug_classes_list_the_seeded_vocabulary(refs, as_user, viewer):
    keys = [row["key"] for row in as_user(viewer).get(f"{URL}bug-classes/").json()]
    assert set(keys) == {
        "communication-hang",
        "numerical-divergence",
        "data-pipeline",
        "hardware-fault",
        "scheduler",
        "checkpoint-restore",
        "performance-regression",
        "configuration",
    }


CSV_HEADER = "title,system,component,bug_class,severity,opened_at,detected_at,resolved_at,done_steps\n"


def csv_row(
    title: str, opened: datetime, detected: datetime, resolved: datetime | None, system="legacy"
) -> str:
    return (
        f"{title},{system},nccl,data-pipeline,sev3,{opened.isoformat()},{detected.isoformat()},"
        f"{resolved.isoformat() if resolved else ''},0;1\n"
    )


def test_csv_import_files_every_row(refs, as_user, engineer):
    opened = datetime(2026, 3, 1, 8, tzinfo=UTC)
    body = CSV_HEADER + csv_row(
        "Loader stall", opened, opened + timedelta(hours=1), opened + timedelta(hours=3)
    )
    body += csv_row("Shard 404", opened, opened + timedelta(hours=2), None, system="rebuilt")
    response = as_user(engineer).post(f"{URL}import/", body.encode(), content_type="text/csv")
    assert response.status_code == 201, response.json()
    assert [row["state"] for row in response.json()] == ["resolved", "open"]
    assert Observation.objects.filter(source="incidents").count() == 2
    assert response.json()[0]["checklist"][1]["done"] is True


def test_csv_import_is_all_or_nothing_with_row_errors(refs, as_user, engineer):
    opened = datetime(2026, 3, 1, 8, tzinfo=UTC)
    body = CSV_HEADER + csv_row("Fine", opened, opened + timedelta(hours=1), opened + timedelta(hours=3))
    body += csv_row("Backwards", opened, opened - timedelta(hours=1), None)
    body += csv_row("Bad system", opened, opened, None, system="mainframe")
    response = as_user(engineer).post(f"{URL}import/", body.encode(), content_type="text/csv")
    assert response.status_code == 422
    assert response.json()["errors"] == [
        {"index": 1, "field": "detected_at", "message": "detected_at must not be before opened_at."},
        {"index": 2, "field": "system", "message": "Object with key=mainframe does not exist."},
    ]
    assert not Incident.objects.exists()
    assert not Observation.objects.exists()


def test_csv_import_with_a_bare_cr_is_a_400_naming_the_body_and_files_nothing(refs, as_user, engineer):
    opened = timezone.now() - timedelta(days=2)
    body = CSV_HEADER + csv_row("Fine", opened, opened + timedelta(hours=1), None)
    body += csv_row("Split\rtitle", opened, opened + timedelta(hours=1), None)
    response = as_user(engineer).post(f"{URL}import/", body.encode(), content_type="text/csv")
    assert response.status_code == 400, response.content
    assert response.json()["errors"][0]["field"] == "body"
    assert "at line 3" in response.json()["detail"]
    assert not Incident.objects.exists()


def test_the_import_command_uses_the_same_rules(refs, engineer, tmp_path):
    from django.core.management import CommandError, call_command

    opened = datetime(2026, 3, 1, 8, tzinfo=UTC)
    bad = tmp_path / "bad.csv"
    bad.write_text(CSV_HEADER + csv_row("Backwards", opened, opened - timedelta(hours=1), None))
    with pytest.raises(CommandError, match=r"row 0: detected_at: detected_at must not be before opened_at\."):
        call_command("import_incidents", str(bad), user="engineer")
    good = tmp_path / "good.csv"
    good.write_text(
        CSV_HEADER + csv_row("Fine", opened, opened + timedelta(hours=1), opened + timedelta(hours=3))
    )
    call_command("import_incidents", str(good), user="engineer")
    assert Incident.objects.get().title == "Fine"
