"""Prometheus pull against real components: a `prometheus` server scraping a prometheus_client exporter."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone
from prometheus_client import CollectorRegistry, Gauge, start_http_server

from metrics.models import Observation, PullSource
from metrics.services.pull import pull_source_run
from tests.metrics.factories import definition
from tests.metrics.prometheus_server import free_port, has_samples, start_prometheus, wait_until

pytestmark = pytest.mark.django_db
QUERY = 'rt_train_step_seconds{{workload="{workload}", system="{system}"}}'


@pytest.fixture
def exporter():
    """A prometheus_client exporter serving one gauge per workload, in seconds."""
    registry = CollectorRegistry()
    gauge = Gauge("rt_train_step_seconds", "Step time", ["workload", "system"], registry=registry)
    gauge.labels(workload="finetune", system="rebuilt").set(0.25)
    gauge.labels(workload="pretrain", system="rebuilt").set(1.5)
    gauge.labels(workload="finetune", system="legacy").set(9.0)  # another system: never pulled here
    port = free_port()
    server, thread = start_http_server(port, addr="127.0.0.1", registry=registry)
    yield port
    server.shutdown()
    thread.join(timeout=5)


@pytest.fixture
def prometheus(tmp_path, exporter):
    process, base_url = start_prometheus(tmp_path, exporter)
    try:
        # Three scrapes of every series: then the step grid (whole seconds) has points after the first.
        ready = "min(count_over_time(rt_train_step_seconds[1m])) >= 3 and count(rt_train_step_seconds) == 3"
        wait_until(lambda: has_samples(base_url, ready), 60, "Prometheus to scrape the exporter three times")
        yield base_url
    finally:
        process.terminate()
        process.wait(timeout=15)


def _source(ref, base_url: str, **fields) -> PullSource:
    step_ms = definition(key="step-time", unit="ms")
    source = PullSource.objects.create(
        definition=step_ms,
        system=ref["rebuilt"],
        base_url=base_url,
        query=QUERY,
        unit="s",
        step_seconds=1,
        **fields,
    )
    source.workloads.set([ref["medium"], ref["large"]])
    return source


def test_a_pull_stores_the_scraped_samples_in_the_definition_unit_and_a_repeat_adds_nothing(ref, prometheus):
    source = _source(ref, prometheus)
    since = timezone.now() - timedelta(seconds=30)
    until = timezone.now()

    first = pull_source_run(source, since=since, until=until)

    assert first.ok, first.error
    assert first.inserted > 0 and first.inserted == first.received
    pulled = Observation.objects.filter(definition__key="step-time")  # re-queried: never its cache
    stored = list(pulled.select_related("workload", "system"))
    assert len(stored) == first.inserted
    values = {(o.workload.key, o.system.key, o.value, o.unit, o.source) for o in stored}
    # 0.25 s and 1.5 s arrive as 250 ms and 1500 ms; the arrival unit is kept beside.
    assert values == {
        ("finetune", "rebuilt", 250.0, "s", "prometheus"),
        ("pretrain", "rebuilt", 1500.0, "s", "prometheus"),
    }
    assert all(o.observed_at.timestamp() % 1 == 0 for o in stored)  # on the step grid
    assert all(o.run_id.startswith(f"prom-{source.pk}-") for o in stored)
    assert {o.tags["workload"] for o in stored} == {"finetune", "pretrain"}
    source.refresh_from_db()
    assert source.last_pulled_at == until
    assert source.consecutive_failures == 0 and source.last_error == ""

    again = pull_source_run(source, since=since, until=until)
    assert again.ok and again.inserted == 0 and again.received == first.received
    assert pulled.count() == first.inserted

    # The next scheduled pull starts at last_pulled_at: only samples after it are new.
    later = pull_source_run(source)
    assert later.ok
    assert pulled.count() == first.inserted + later.inserted
    # Whatever it added lies after `until`: the step it re-read at last_pulled_at was a no-op.
    assert pulled.filter(observed_at__lte=until).count() == first.inserted


def test_the_command_backfills_one_metric(ref, prometheus, capsys):
    source = _source(ref, prometheus)
    since = (timezone.now() - timedelta(seconds=20)).isoformat()

    call_command("pull_prometheus", "--since", since, "--metric", "step-time")

    assert Observation.objects.filter(definition=source.definition).count() > 0
    assert f"source {source.pk}:" in capsys.readouterr().out


def test_a_closed_port_is_recorded_on_the_source_and_shown_by_the_api(ref, as_user, viewer):
    source = _source(ref, f"http://127.0.0.1:{free_port()}")

    result = pull_source_run(source)
    pull_source_run(source)

    assert not result.ok and "did not answer" in result.error
    source.refresh_from_db()
    assert source.consecutive_failures == 2 and source.last_pulled_at is None and source.last_error_at
    assert not Observation.objects.exists()
    response = as_user(viewer).get(f"/api/v1/pull-sources/{source.pk}/")
    assert response.status_code == 200
    assert "did not answer" in response.json()["last_error"]
    assert response.json()["consecutive_failures"] == 2


def test_the_beat_task_pulls_every_enabled_source_and_survives_failures(ref):
    from metrics.tasks import pull_sources_scrape

    source = _source(ref, f"http://127.0.0.1:{free_port()}")

    outcome = pull_sources_scrape()

    assert [(r["source"], r["ok"]) for r in outcome] == [(source.pk, False)]
    PullSource.objects.filter(pk=source.pk).update(enabled=False)
    assert pull_sources_scrape() == []


def test_the_metric_page_shows_each_source_and_its_failures(ref, client, viewer):
    source = _source(ref, f"http://127.0.0.1:{free_port()}")
    pull_source_run(source)
    client.force_login(viewer)

    page = client.get("/metrics/step-time/").content.decode()

    assert "Prometheus pull" in page and source.base_url in page
    assert "1 failed pull in a row" in page and "did not answer" in page


def test_the_metric_page_says_each_sources_point_kind_and_whether_it_fits(ref, client, viewer):
    source = _source(ref, "http://prometheus.internal:9090")  # aggregate, the default, into per_request
    client.force_login(viewer)

    page = client.get("/metrics/step-time/").content.decode()

    assert "each point an aggregate over an interval" in page
    assert "Sampling does not match" in page and "step-time@1 is sampled per_request" in page
    PullSource.objects.filter(pk=source.pk).update(point_kind="sample")
    page = client.get("/metrics/step-time/").content.decode()
    assert "each point one sample" in page and "Sampling does not match" not in page
