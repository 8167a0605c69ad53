"""GET /metrics: scraped over real HTTP from the live server after real actions, parsed as Prometheus
text, and its key series asserted (values as deltas: counters live for the whole test process)."""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest
from celery import shared_task
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from program.models import Gate
from tests.conftest import api_token, wait_for
from tests.freeze.factories import freeze_setup


def scrape(url: str, **headers) -> dict[tuple[str, tuple], float]:
    """{(sample name, sorted labels): value} of one scrape."""
    response = httpx.get(f"{url}/metrics", headers=headers, timeout=10)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


def value(samples, name: str, **labels) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def task_ran(url: str, before, task: str, outcome: str) -> bool:
    """Wait until a scrape counts one more run of `task` with `outcome` than `before` did."""
    baseline = value(before, "rebuild_celery_tasks_total", task=task, outcome=outcome)
    return wait_for(
        lambda: value(scrape(url), "rebuild_celery_tasks_total", task=task, outcome=outcome) > baseline
    )


def rows(count: int, **overrides) -> list[dict]:
    now = timezone.now()
    return [
        {
            "metric": "step-time",
            "system": "rebuilt",
            "workload": "llm-finetune-8b",
            "value": 700 + i,
            "unit": "ms",
            "observed_at": (now - timedelta(minutes=5, seconds=i)).isoformat(),
            "run_id": f"scrape-{i}",
            **overrides,
        }
        for i in range(count)
    ]


def test_scrape_shows_requests_ingest_gates_freeze_checks_tasks_and_feed_ages(
    live_server, celery_worker_real, lead, ingest_user, settings
):
    settings.METRICS_TOKEN = ""
    setup = freeze_setup(lead)
    base = live_server.url
    before = scrape(base)

    ingest = {"Authorization": f"Token {api_token(ingest_user, 'ingest')}"}
    as_lead = {"Authorization": f"Token {api_token(lead)}"}
    accepted = httpx.post(
        f"{base}/api/v1/observations/batch/", json={"observations": rows(3)}, headers=ingest
    )
    assert accepted.status_code == 201, accepted.text
    bad = rows(2, value="fast") + rows(1)
    rejected = httpx.post(f"{base}/api/v1/observations/batch/", json={"observations": bad}, headers=ingest)
    assert rejected.status_code == 422
    gate = Gate.objects.get(phase__kind="canary", kind="exit")
    evaluated = httpx.post(f"{base}/api/v1/gates/{gate.pk}/evaluate/", headers=as_lead)
    assert evaluated.status_code == 200, evaluated.text
    for component in ("trainer", "kernels", "kernels"):
        check = httpx.get(f"{base}/api/v1/freeze/check/", params={"component": component}, headers=as_lead)
        assert check.status_code == 200, check.text
    # The accepted batch is announced inside its own transaction, which queues (outbox) a re-evaluation
    # of the gates judging step-time; a real worker runs it after commit (program.tasks.gate_evaluate).
    assert task_ran(base, before, "program.tasks.gate_evaluate", "success")

    after = scrape(base)

    def delta(name, **labels):
        return value(after, name, **labels) - value(before, name, **labels)

    assert delta("rebuild_ingest_rows_total", outcome="accepted") == 3
    assert delta("rebuild_ingest_rows_total", outcome="rejected") == 2
    # One evaluation asked for through the API, plus those the worker ran after the batch moved the metric.
    by_worker = delta("rebuild_celery_tasks_total", task="program.tasks.gate_evaluate", outcome="success")
    assert by_worker >= 1
    assert delta("rebuild_gate_evaluation_duration_seconds_count") == 1 + by_worker
    assert delta("rebuild_gate_evaluation_duration_seconds_sum") > 0
    assert delta("rebuild_freeze_checks_total", decision="needs_approval") == 1
    assert delta("rebuild_freeze_checks_total", decision="forbidden") == 2
    # Latency by URL name, method and status class: low cardinality, whatever the path held.
    batch = {"view": "observation-batch", "method": "POST"}
    assert delta("rebuild_http_request_duration_seconds_count", status="2xx", **batch) == 1
    assert delta("rebuild_http_request_duration_seconds_count", status="4xx", **batch) == 1
    assert not any("/api/" in dict(labels).get("view", "") for _, labels in after)
    # The feed written above is seconds old; the older factory data is absent (no rows stored).
    age = value(
        after,
        "rebuild_feed_newest_observation_age_seconds",
        metric="step-time@1",
        system="rebuilt",
        source="batch",
    )
    assert 5 * 60 <= age < 5 * 60 + 120
    assert value(after, "rebuild_feed_stale", metric="step-time@1", system="rebuilt", source="batch") == 0
    assert setup["trainer"].key == "trainer"


@shared_task(bind=True, max_retries=1, default_retry_delay=0)
def flaky(self):
    """Retries once, then fails: one run of each outcome the worker signals."""
    if self.request.retries == 0:
        raise self.retry(countdown=0)
    raise RuntimeError("flaky fails on purpose")


def test_a_real_worker_counts_task_retries_and_failures(celery_worker_real, live_server):
    name = flaky.name
    before = scrape(live_server.url)
    flaky.delay()
    assert task_ran(live_server.url, before, name, "failure")
    after = scrape(live_server.url)
    for outcome in ("retry", "failure"):
        assert (
            value(after, "rebuild_celery_tasks_total", task=name, outcome=outcome)
            - value(before, "rebuild_celery_tasks_total", task=name, outcome=outcome)
            == 1
        ), outcome


@pytest.mark.django_db
def test_without_a_token_only_this_host_may_scrape(client, settings):
    settings.METRICS_TOKEN = ""
    assert client.get("/metrics", REMOTE_ADDR="127.0.0.1").status_code == 200
    assert client.get("/metrics", REMOTE_ADDR="::1").status_code == 200
    assert client.get("/metrics", REMOTE_ADDR="10.1.2.3").status_code == 404


@pytest.mark.django_db
def test_with_a_token_every_scrape_must_carry_it(client, settings):
    settings.METRICS_TOKEN = "s3cret-scrape"
    assert (
        client.get("/metrics", REMOTE_ADDR="10.1.2.3", HTTP_AUTHORIZATION="Bearer s3cret-scrape").status_code
        == 200
    )
    assert (
        client.get("/metrics", REMOTE_ADDR="10.1.2.3", HTTP_AUTHORIZATION="Token s3cret-scrape").status_code
        == 200
    )
    # With a token set, even this host needs it.
    assert client.get("/metrics", REMOTE_ADDR="127.0.0.1").status_code == 404
    assert (
        client.get("/metrics", REMOTE_ADDR="10.1.2.3", HTTP_AUTHORIZATION="Bearer wrong").status_code == 404
    )
    assert (
        client.get("/metrics", REMOTE_ADDR="10.1.2.3", HTTP_AUTHORIZATION="Basic s3cret-scrape").status_code
        == 404
    )
