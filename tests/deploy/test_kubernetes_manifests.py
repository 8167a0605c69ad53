"""The production overlay as `kubectl kustomize` renders it (deploy/kubernetes/): what an operator relies
on holds in the YAML that would be applied, not only in the files it is made from."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from tests.system_packages import require_program

ROOT = Path(__file__).resolve().parents[2]
OVERLAY = ROOT / "deploy" / "kubernetes" / "overlays" / "production"
SECRET = "rebuild-tracker-secrets"
# What only the Secret may carry: a value for one of these anywhere else is a leaked secret.
SECRET_SETTINGS = {"DATABASE_URL", "CELERY_BROKER_URL", "CACHE_URL", "DJANGO_SECRET_KEY", "METRICS_TOKEN"}
WORKLOADS = {"Deployment", "Job"}


@pytest.fixture(scope="module")
def rendered() -> list[dict]:
    kubectl = require_program("kubectl", package="kubernetes-client")
    result = subprocess.run(
        [kubectl, "kustomize", str(OVERLAY)], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


def named(rendered: list[dict], kind: str, name: str) -> dict:
    found = [doc for doc in rendered if doc["kind"] == kind and doc["metadata"]["name"] == name]
    assert len(found) == 1, f"{kind}/{name}: {len(found)} found"
    return found[0]


def pod_specs(rendered: list[dict]) -> dict[str, dict]:
    return {
        doc["metadata"]["name"]: doc["spec"]["template"]["spec"]
        for doc in rendered
        if doc["kind"] in WORKLOADS
    }


def containers(pod: dict) -> list[dict]:
    return pod.get("initContainers", []) + pod["containers"]


def test_the_overlay_renders_every_part(rendered):
    kinds = sorted((doc["kind"], doc["metadata"]["name"]) for doc in rendered)
    assert kinds == [
        ("ConfigMap", "rebuild-tracker-config"),
        ("Deployment", "rebuild-tracker-beat"),
        ("Deployment", "rebuild-tracker-web"),
        ("Deployment", "rebuild-tracker-worker"),
        ("Deployment", "rebuild-tracker-worker-notifications"),
        ("HorizontalPodAutoscaler", "rebuild-tracker-web"),
        ("Job", "rebuild-tracker-migrate"),
        ("PodDisruptionBudget", "rebuild-tracker-web"),
        ("Service", "rebuild-tracker-web"),
        ("ServiceMonitor", "rebuild-tracker-web"),
    ]
    assert {doc["metadata"].get("namespace") for doc in rendered} == {"rebuild-tracker"}


def test_beat_runs_as_exactly_one_and_is_stopped_before_its_successor_starts(rendered):
    beat = named(rendered, "Deployment", "rebuild-tracker-beat")
    assert beat["spec"]["replicas"] == 1
    assert beat["spec"]["strategy"] == {"type": "Recreate"}
    scaled = {
        doc["spec"]["scaleTargetRef"]["name"] for doc in rendered if doc["kind"] == "HorizontalPodAutoscaler"
    }
    assert scaled == {"rebuild-tracker-web"}


def test_every_pod_runs_as_a_non_root_user_on_a_read_only_root(rendered):
    for name, pod in pod_specs(rendered).items():
        assert pod["securityContext"]["runAsNonRoot"] is True, name
        assert pod["securityContext"]["runAsUser"] == 10001, name
        assert pod["automountServiceAccountToken"] is False, name
        temporary = {volume["name"] for volume in pod["volumes"] if "emptyDir" in volume}
        for container in containers(pod):
            where = f"{name}/{container['name']}"
            context = container["securityContext"]
            assert context["readOnlyRootFilesystem"] is True, where
            assert context["allowPrivilegeEscalation"] is False, where
            assert context["capabilities"]["drop"] == ["ALL"], where
            mounts = {mount["mountPath"]: mount["name"] for mount in container["volumeMounts"]}
            # Celery beat's schedule, gunicorn's worker files, Python's tempfile: writable, not the image.
            assert mounts.get("/tmp") in temporary, where


def test_every_container_sets_its_resources(rendered):
    for name, pod in pod_specs(rendered).items():
        for container in containers(pod):
            resources = container["resources"]
            for bound in ("requests", "limits"):
                assert set(resources[bound]) == {"cpu", "memory"}, f"{name}/{container['name']} {bound}"


def test_every_container_runs_the_image_the_overlay_names(rendered):
    images = {c["image"] for pod in pod_specs(rendered).values() for c in containers(pod)}
    assert images == {"registry.example.com/rebuild-tracker:0.1.0"}


def test_secrets_come_from_the_secret_only(rendered):
    for name, pod in pod_specs(rendered).items():
        for container in containers(pod):
            where = f"{name}/{container['name']}"
            sources = container.get("envFrom", [])
            assert {"secretRef": {"name": SECRET}} in sources, where
            literal = {env["name"] for env in container.get("env", []) if "value" in env}
            assert not literal & SECRET_SETTINGS, where
    config = named(rendered, "ConfigMap", "rebuild-tracker-config")
    assert not set(config["data"]) & SECRET_SETTINGS
    assert not [doc for doc in rendered if doc["kind"] == "Secret"], "the repository holds no Secret"


def test_web_probes_liveness_without_dependencies_and_readiness_on_the_database(rendered):
    web = pod_specs(rendered)["rebuild-tracker-web"]["containers"][0]
    assert web["livenessProbe"]["httpGet"]["path"] == "/livez"
    assert web["startupProbe"]["httpGet"]["path"] == "/livez"
    assert web["readinessProbe"]["httpGet"]["path"] == "/readyz"
    # /readyz may wait 2 s for a broker that does not answer (core.health.broker_check).
    assert web["readinessProbe"]["timeoutSeconds"] > 2
    env = {item["name"]: item for item in web["env"]}
    assert env["POD_IP"]["valueFrom"]["fieldRef"]["fieldPath"] == "status.podIP"
    assert "$(POD_IP)" in env["DJANGO_ALLOWED_HOSTS"]["value"], "kubelet asks for the pod's own address"


@pytest.mark.parametrize(
    ("deployment", "kind"),
    [
        ("rebuild-tracker-worker", "worker"),
        ("rebuild-tracker-worker-notifications", "worker"),
        ("rebuild-tracker-beat", "beat"),
    ],
)
def test_worker_and_beat_are_restarted_when_their_liveness_command_fails(rendered, deployment, kind):
    (container,) = pod_specs(rendered)[deployment]["containers"]
    assert container["livenessProbe"]["exec"]["command"] == ["python", "manage.py", "liveness", kind]


def test_a_drain_keeps_a_web_pod_and_the_autoscaler_keeps_two(rendered):
    web_labels = named(rendered, "Deployment", "rebuild-tracker-web")["spec"]["template"]["metadata"][
        "labels"
    ]
    pdb = named(rendered, "PodDisruptionBudget", "rebuild-tracker-web")
    assert pdb["apiVersion"] == "policy/v1"
    assert pdb["spec"]["minAvailable"] >= 1
    assert pdb["spec"]["selector"]["matchLabels"].items() <= web_labels.items()
    hpa = named(rendered, "HorizontalPodAutoscaler", "rebuild-tracker-web")
    assert hpa["apiVersion"] == "autoscaling/v2"
    assert hpa["spec"]["minReplicas"] >= 2
    assert hpa["spec"]["scaleTargetRef"] == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": "rebuild-tracker-web",
    }


def test_prometheus_scrapes_the_web_service_with_the_metrics_token(rendered):
    service = named(rendered, "Service", "rebuild-tracker-web")
    monitor = named(rendered, "ServiceMonitor", "rebuild-tracker-web")
    assert monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    (endpoint,) = monitor["spec"]["endpoints"]
    assert endpoint["path"] == "/metrics"
    assert endpoint["port"] in {port["name"] for port in service["spec"]["ports"]}
    assert endpoint["bearerTokenSecret"] == {"name": SECRET, "key": "METRICS_TOKEN"}
