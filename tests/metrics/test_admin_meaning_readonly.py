"""The admin shows an active version's meaning (unit, direction, sampling, events, bounds…) read-only
instead of offering it and refusing the save (issue 29); a draft without data still offers it."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User

from core.roles import METRIC_OWNERS
from metrics.models import MetricDefinition
from tests.metrics.factories import definition


@pytest.fixture
def admin_client(client, db):
    root = User.objects.create_superuser("root", "root@example.com", "x")
    root.groups.add(Group.objects.get_or_create(name=METRIC_OWNERS)[0])  # the service's rule: an owner edits
    client.force_login(root)
    return client


def change_page(client, metric: MetricDefinition) -> str:
    response = client.get(f"/admin/metrics/metricdefinition/{metric.pk}/change/")
    assert response.status_code == 200
    return response.content.decode()


def test_an_active_versions_meaning_fields_are_read_only(admin_client):
    html = change_page(admin_client, definition(key="step-time", status="active"))
    for name in MetricDefinition.MEANING_FIELDS:
        assert f'name="{name}"' not in html, name
        assert f"field-{name}" in html, name  # still shown, as text
    assert 'name="name"' in html and 'name="description"' in html  # wording stays editable


def test_a_draft_without_data_offers_its_meaning(admin_client):
    html = change_page(admin_client, definition(key="step-time", status="draft"))
    assert 'name="unit"' in html and 'name="direction"' in html


def test_saving_an_active_version_keeps_its_meaning_and_changes_its_wording(admin_client):
    metric = definition(key="step-time", status="active")
    html = change_page(admin_client, metric)
    assert 'name="unit"' not in html
    response = admin_client.post(
        f"/admin/metrics/metricdefinition/{metric.pk}/change/",
        {
            "name": "Step time (renamed)",
            "description": metric.description,
            "statistic": metric.statistic,
            "owner_team": metric.owner_team,
            "expected_interval": "",
            "otel_name": metric.otel_name,
            "unit": "ms",  # not on the form: ignored, not refused
        },
    )
    body = response.content.decode()
    assert response.status_code == 302, body[body.find("errornote") : body.find("errornote") + 1500]
    metric.refresh_from_db()
    assert metric.name == "Step time (renamed)" and metric.unit != "ms"
