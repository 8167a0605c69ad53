"""Every version has its own page (/metrics/key@N/) with its own data, and a switcher to the others."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from metrics.models import Observation
from metrics.rollups.maintain import rollups_rebuild
from tests.metrics.factories import definition


def observe(ref, metric, workload, n: int = 3) -> None:
    start = timezone.now() - timedelta(days=1)
    Observation.objects.bulk_create(
        Observation(
            definition=metric,
            system=ref["rebuilt"],
            workload=workload,
            value=1.0 + i,
            unit="s",
            observed_at=start + timedelta(minutes=i),
            run_id=f"{metric.ref}-{i}",
        )
        for i in range(n)
    )
    rollups_rebuild(definition_ids=[metric.pk])  # written directly: the charts read the rollups


@pytest.fixture
def versions(ref):
    """latency@1 deprecated (data on pretrain), @2 active (data on finetune), @3 draft (no data)."""
    v1 = ref["latency"]
    v1.status = "deprecated"
    v1.save()
    v2 = definition(key="latency", version=2, excludes=["queueing"])
    v3 = definition(key="latency", version=3, status="draft", excludes=["queueing", "warmup"])
    observe(ref, v1, ref["large"])
    observe(ref, v2, ref["medium"])
    return {1: v1, 2: v2, 3: v3}


@pytest.mark.parametrize(
    ("path", "ref_shown", "own_workload", "other_workload"),
    [
        ("/metrics/latency@1/", "latency@1 · deprecated", "pretrain", "finetune"),
        ("/metrics/latency@2/", "latency@2 · active", "finetune", "pretrain"),
        ("/metrics/latency/", "latency@2 · active", "finetune", "pretrain"),
    ],
)
def test_each_version_page_shows_its_own_data(
    client, viewer, versions, path, ref_shown, own_workload, other_workload
):
    client.force_login(viewer)
    response = client.get(path)
    assert response.status_code == 200
    page = response.content.decode()
    assert ref_shown in page
    charts = page.split("Old vs new, per workload")[1]
    assert f">{own_workload}</a></h3>" in charts
    assert f">{other_workload}</a></h3>" not in charts


def test_a_draft_page_says_it_collects_shadow_data(client, viewer, versions):
    client.force_login(viewer)
    page = client.get("/metrics/latency@3/").content.decode()
    assert "latency@3 · draft" in page
    assert "No observations for latency@3 yet." in page
    assert "keeps meaning the active version until this one is activated" in page


def test_switcher_links_every_version_with_its_status_and_marks_the_current(client, viewer, versions):
    client.force_login(viewer)
    page = client.get("/metrics/latency@1/").content.decode()
    switcher = page.split('<nav class="versions"')[1].split("</nav>")[0]
    for number, status in ((3, "draft"), (2, "active"), (1, "deprecated")):
        assert f'href="/metrics/latency@{number}/"' in switcher
        assert f'latency@{number} <span class="badge {status}">{status}</span>' in switcher
    assert switcher.count('aria-current="page"') == 1
    assert 'class="version current" aria-current="page">latency@1' in switcher


def test_compare_button_names_the_version_unless_it_is_the_active_one(client, viewer, versions):
    client.force_login(viewer)
    assert "?metric=latency@1&" in client.get("/metrics/latency@1/").content.decode()
    assert "?metric=latency&" in client.get("/metrics/latency@2/").content.decode()


def test_viewers_see_no_version_actions_and_owners_see_the_right_ones(client, viewer, metric_owner, versions):
    client.force_login(viewer)
    page = client.get("/metrics/latency@3/").content.decode()
    assert "New version…" not in page and "Activate" not in page
    assert "Register a metric" not in client.get("/metrics/").content.decode()
    client.force_login(metric_owner)
    draft_page = client.get("/metrics/latency@3/").content.decode()
    assert 'href="/metrics/latency/versions/new/"' in draft_page
    assert 'href="/metrics/latency@3/activate/"' in draft_page
    assert "/deprecate/" not in draft_page
    active_page = client.get("/metrics/latency@2/").content.decode()
    assert 'href="/metrics/latency@2/deprecate/"' in active_page
    assert "/activate/" not in active_page
    assert 'href="/metrics/new/"' in client.get("/metrics/").content.decode()
