"""A real Alertmanager (Debian's prometheus-alertmanager) delivers its webhook to the live server.

The test feeds an alert through Alertmanager's own API (POST /api/v2/alerts), first firing, then
with an endsAt in the past (resolved); Alertmanager groups it and posts its version-4 webhook
payload, with the scoped token from its receiver's http_config, to /api/v1/incidents/alertmanager/.
Exactly one incident must come of it, detected at startsAt and mitigated at endsAt, and once a person
resolves it, MTTD and MTTR (the selectors, and GET /api/v1/incidents/mttr/) follow from those times.
"""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from core.models import Transition
from incidents import selectors
from incidents.models import BugClass, Incident
from incidents.services import alerts, incident_resolve
from incidents.vocabulary import bug_classes_seed
from tests.conftest import api_token, make_user
from tests.incidents.factories import incidents_setup
from tests.metrics.prometheus_server import free_port, wait_until
from tests.system_packages import require_program


def alertmanager_binary() -> str:
    return require_program(
        "prometheus-alertmanager",
        package="prometheus-alertmanager",
        path="/usr/bin/prometheus-alertmanager",
    )


def start_alertmanager(tmp_path: Path, webhook_url: str, token: str) -> tuple[subprocess.Popen, str]:
    """Alertmanager on a free port, no cluster, one receiver: the tracker, with short group timers."""
    port = free_port()
    config = tmp_path / "alertmanager.yml"
    config.write_text(
        "global:\n  resolve_timeout: 5s\n"
        "route:\n  receiver: rebuild-tracker\n  group_by: [alertname]\n"
        "  group_wait: 1s\n  group_interval: 1s\n  repeat_interval: 1h\n"
        "receivers:\n  - name: rebuild-tracker\n    webhook_configs:\n"
        f"      - url: {webhook_url}\n        send_resolved: true\n"
        "        http_config:\n          authorization:\n            type: Bearer\n"
        f"            credentials: {token}\n"
    )
    log = (tmp_path / "alertmanager.log").open("w")
    process = subprocess.Popen(
        [
            alertmanager_binary(),
            f"--config.file={config}",
            f"--storage.path={tmp_path / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
            "--cluster.listen-address=",  # alone: no gossip port, no wait for peers to settle
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    return process, f"http://127.0.0.1:{port}"


def ready(base_url: str) -> bool:
    try:
        return httpx.get(f"{base_url}/-/ready", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


def post_alert(base_url: str, starts: datetime, ends: datetime | None = None) -> None:
    alert = {
        "labels": {"alertname": "NcclAllReduceHang", "cluster": "rebuilt", "job": "trainer"},
        "annotations": {"summary": "All-reduce stuck on 64 ranks"},
        "startsAt": starts.isoformat(),
        "generatorURL": "http://prometheus.example.com:9090/graph?g0.expr=nccl_progress",
    }
    if ends is not None:
        alert["endsAt"] = ends.isoformat()
    response = httpx.post(f"{base_url}/api/v2/alerts", json=[alert], timeout=5)
    assert response.status_code == 200, response.text


def test_a_real_alertmanager_firing_then_resolving_gives_one_incident_with_its_times(live_server, tmp_path):
    bug_classes_seed(BugClass)  # live_server's flush after an earlier test empties the seeded vocabulary
    refs = incidents_setup()
    bot = make_user("alertmanager-bot", "framework-engineers")
    alerts.alert_route_create(
        actor=bot,
        matchers={"alertname": "NcclAllReduceHang"},
        system=refs["rebuilt"],
        component=refs["nccl"],
        bug_class=refs["hang"],
        severity="sev2",
    )
    token = api_token(bot, "alerts")
    now = datetime.now(UTC).replace(microsecond=0)
    starts, ends = now - timedelta(minutes=30), now - timedelta(minutes=6)
    process, base = start_alertmanager(tmp_path, f"{live_server.url}/api/v1/incidents/alertmanager/", token)
    try:
        wait_until(lambda: ready(base), 10, "Alertmanager to be ready")
        post_alert(base, starts)
        wait_until(lambda: Incident.objects.exists(), 10, "the firing alert's incident")
        post_alert(base, starts, ends)
        wait_until(
            lambda: Incident.objects.filter(mitigated_at__isnull=False).exists(), 10, "the resolved alert"
        )
    finally:
        process.terminate()
        process.wait(timeout=10)
    incident = Incident.objects.get()  # one: the resolved notification attached to it
    assert incident.opened_at == incident.detected_at == starts
    assert incident.mitigated_at == ends and incident.resolved_at is None
    assert incident.bug_class == refs["hang"] and incident.system == refs["rebuilt"]
    actions = list(Transition.objects.filter(object_id=incident.pk).values_list("action", flat=True))
    assert actions.count("alert-opened") == 1 and actions.count("alert-resolved") == 1

    # Resolution stays a person's act; then the speeds follow from the alert's times.
    resolved = now - timedelta(minutes=3)
    incident_resolve(actor=bot, incident=incident, resolved_at=resolved)
    (speed,) = selectors.incident_speed()
    assert float(speed.mttd_hours) == pytest.approx(0.0)  # opened and detected when the alert fired
    assert float(speed.mttr_hours) == pytest.approx((resolved - starts).total_seconds() / 3600)
    reader = make_user("reader")
    response = httpx.get(
        f"{live_server.url}/api/v1/incidents/mttr/",
        params={"system": "rebuilt"},
        headers={"Authorization": f"Token {api_token(reader, 'read')}"},
        timeout=10,
    )
    assert response.status_code == 200
    (row,) = response.json()
    assert row["mttd_hours"] == pytest.approx(0.0)
    assert row["mttr_hours"] == pytest.approx(0.45)  # 27 minutes from startsAt to the resolution
