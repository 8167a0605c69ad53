"""Role × operation: every API operation in the schema, called by every role with an empty body.

Anonymous callers get 401. A role that may not act gets 403 — before its (invalid) body is read,
so never a field-by-field 400. A role that may act gets past authorization: a 2xx, or the 4xx its
empty body or the object's state earns, never 403 and never 5xx. A new operation without a row
below fails `test_the_table_covers_every_operation`.
"""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.db import transaction
from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient

from core.notifications import notification_send
from core.roles import PLATFORM_ADMINS
from core.services.api_tokens import api_token_create
from core.services.webhooks import webhook_endpoint_create
from freeze import services as freeze_services
from incidents import services as incident_services
from incidents.models import BugClass
from metrics.models import MetricDefinition, System, Workload
from metrics.services.pull_sources import pull_source_create
from program import services as program_services
from program.models import Gate, Phase
from tests.conftest import make_user
from tests.freeze.factories import freeze_setup, submitted_exception

ANONYMOUS = "anonymous"
SIGNED_IN = ("viewer", "engineer", "metric_owner", "component_owner", "ingest_user", "lead")
ROLES = (ANONYMOUS, *SIGNED_IN)
ACTED = {200, 201, 204, 400, 409, 422}  # past authorization; what the empty body or the state earns

EVERYONE = frozenset(SIGNED_IN)
LEAD = frozenset({"lead"})
METRIC_OWNER = frozenset({"metric_owner"})
ENGINEER = frozenset({"engineer"})
LEAD_OR_METRIC_OWNER = frozenset({"lead", "metric_owner"})
LEAD_OR_ENGINEER = frozenset({"lead", "engineer"})
# The fixture exception was filed by `engineer` on a component `component_owner`'s team owns.
APPROVERS = frozenset({"lead", "component_owner"})
REQUESTER = ENGINEER

# (method, path) → the signed-in roles that may act; every other signed-in role gets 403.
EXPECTED: dict[tuple[str, str], frozenset[str]] = {
    ("GET", "/api/v1/auth/me/"): EVERYONE,
    ("DELETE", "/api/v1/auth/me/"): EVERYONE,
    ("GET", "/api/v1/comparisons/"): EVERYONE,
    ("GET", "/api/v1/components/"): EVERYONE,
    ("POST", "/api/v1/components/"): LEAD,
    ("PATCH", "/api/v1/criteria/{id}/"): LEAD,
    ("DELETE", "/api/v1/criteria/{id}/"): LEAD,
    ("POST", "/api/v1/criteria/{id}/attest/"): LEAD,
    ("GET", "/api/v1/criteria/{id}/calibration/"): EVERYONE,
    ("GET", "/api/v1/definitions/"): EVERYONE,
    ("POST", "/api/v1/definitions/"): METRIC_OWNER,
    ("GET", "/api/v1/definitions/{key}/"): EVERYONE,
    ("GET", "/api/v1/definitions/{key}/versions/"): EVERYONE,
    ("POST", "/api/v1/definitions/{key}/versions/"): METRIC_OWNER,
    ("GET", "/api/v1/definitions/{key}/versions/{version}/"): EVERYONE,
    ("PATCH", "/api/v1/definitions/{key}/versions/{version}/"): METRIC_OWNER,
    ("POST", "/api/v1/definitions/{key}/versions/{version}/activate/"): METRIC_OWNER,
    ("POST", "/api/v1/definitions/{key}/versions/{version}/deprecate/"): METRIC_OWNER,
    ("GET", "/api/v1/freeze-exceptions/"): EVERYONE,
    ("POST", "/api/v1/freeze-exceptions/"): ENGINEER,
    ("GET", "/api/v1/freeze-exceptions/{id}/"): EVERYONE,
    ("PATCH", "/api/v1/freeze-exceptions/{id}/"): ENGINEER,
    ("POST", "/api/v1/freeze-exceptions/{id}/approve/"): APPROVERS,
    ("POST", "/api/v1/freeze-exceptions/{id}/reject/"): APPROVERS,
    ("POST", "/api/v1/freeze-exceptions/{id}/revoke/"): LEAD,
    ("POST", "/api/v1/freeze-exceptions/{id}/submit/"): REQUESTER,
    ("POST", "/api/v1/freeze-exceptions/{id}/withdraw/"): REQUESTER,
    ("GET", "/api/v1/freeze/check/"): EVERYONE,
    ("GET", "/api/v1/freeze/overrides/"): EVERYONE,
    ("POST", "/api/v1/freeze/overrides/"): LEAD,
    # The fixture override was opened by another lead, so `lead` may review it.
    ("POST", "/api/v1/freeze/overrides/{id}/review/"): LEAD,
    ("GET", "/api/v1/freeze/windows/"): EVERYONE,
    ("POST", "/api/v1/freeze/windows/"): LEAD,
    ("GET", "/api/v1/freeze/windows/{id}/levels/"): EVERYONE,
    ("POST", "/api/v1/freeze/windows/{id}/levels/"): LEAD,
    ("POST", "/api/v1/freeze/windows/{id}/levels/import/"): LEAD,
    ("GET", "/api/v1/freeze/windows/{id}/history/"): EVERYONE,
    ("POST", "/api/v1/gates/"): LEAD,
    ("GET", "/api/v1/gates/{id}/"): EVERYONE,
    ("POST", "/api/v1/gates/{id}/criteria/"): LEAD,
    ("POST", "/api/v1/gates/{id}/decision/"): LEAD,
    ("POST", "/api/v1/gates/{id}/evaluate/"): LEAD_OR_METRIC_OWNER,
    ("POST", "/api/v1/gates/{id}/reopen/"): LEAD,
    ("POST", "/api/v1/gates/{id}/repin/"): LEAD,
    ("GET", "/api/v1/incidents/"): EVERYONE,
    ("POST", "/api/v1/incidents/"): LEAD_OR_ENGINEER,
    ("GET", "/api/v1/incidents/{id}/"): EVERYONE,
    ("PATCH", "/api/v1/incidents/{id}/"): LEAD_OR_ENGINEER,
    ("GET", "/api/v1/incidents/bug-classes/"): EVERYONE,
    ("POST", "/api/v1/incidents/import/"): LEAD_OR_ENGINEER,
    ("GET", "/api/v1/incidents/mttr/"): EVERYONE,
    ("POST", "/api/v1/migrations/{id}/state/"): LEAD_OR_ENGINEER,
    ("GET", "/api/v1/me/work/"): EVERYONE,
    ("GET", "/api/v1/notifications/"): EVERYONE,
    ("POST", "/api/v1/notifications/read-all/"): EVERYONE,
    # The fixture notification reached every signed-in role, so each marks it in their own inbox.
    ("POST", "/api/v1/notifications/{id}/read/"): EVERYONE,
    ("GET", "/api/v1/observations/"): EVERYONE,
    ("POST", "/api/v1/observations/batch/"): frozenset({"ingest_user"}),
    ("POST", "/otlp/v1/metrics"): frozenset({"ingest_user"}),
    ("POST", "/api/v1/phases/{id}/replan/"): LEAD,
    ("POST", "/api/v1/phases/{id}/actual-dates/"): LEAD,
    ("GET", "/api/v1/programs/"): EVERYONE,
    ("POST", "/api/v1/programs/"): LEAD,
    ("GET", "/api/v1/programs/{slug}/"): EVERYONE,
    ("POST", "/api/v1/programs/{slug}/advance/"): LEAD,
    ("GET", "/api/v1/programs/{slug}/approval-bar/"): EVERYONE,
    ("PUT", "/api/v1/programs/{slug}/approval-bar/"): LEAD,
    ("GET", "/api/v1/programs/{slug}/members/"): EVERYONE,
    ("POST", "/api/v1/programs/{slug}/members/"): LEAD,
    ("DELETE", "/api/v1/programs/{slug}/members/{id}/"): LEAD,
    ("GET", "/api/v1/pull-sources/"): EVERYONE,
    ("POST", "/api/v1/pull-sources/"): METRIC_OWNER,
    ("GET", "/api/v1/pull-sources/{id}/"): EVERYONE,
    ("PATCH", "/api/v1/pull-sources/{id}/"): METRIC_OWNER,
    ("DELETE", "/api/v1/pull-sources/{id}/"): METRIC_OWNER,
    ("GET", "/api/v1/programs/{slug}/bindings/"): EVERYONE,
    ("POST", "/api/v1/programs/{slug}/bindings/"): LEAD,
    ("GET", "/api/v1/programs/{slug}/migrations/"): EVERYONE,
    ("POST", "/api/v1/programs/{slug}/migrations/"): LEAD_OR_ENGINEER,
    ("GET", "/api/v1/systems/"): EVERYONE,
    ("GET", "/api/v1/templates/"): EVERYONE,
    ("GET", "/api/v1/templates/{key}/"): EVERYONE,
    ("GET", "/api/v1/tokens/"): EVERYONE,
    ("POST", "/api/v1/tokens/"): EVERYONE,
    # The fixture token is the lead's: anyone else finds no such token of theirs (404, below).
    ("DELETE", "/api/v1/tokens/{id}/"): LEAD,
    ("POST", "/api/v1/systems/"): LEAD_OR_METRIC_OWNER,
    ("GET", "/api/v1/systems/{key}/"): EVERYONE,
    ("PUT", "/api/v1/systems/{key}/"): LEAD_OR_METRIC_OWNER,
    ("PATCH", "/api/v1/systems/{key}/"): LEAD_OR_METRIC_OWNER,
    ("DELETE", "/api/v1/systems/{key}/"): LEAD_OR_METRIC_OWNER,
    # Everyone lists the endpoints they may manage (none for most); the fixture's is the program's, so
    # its lead manages it (core.policies.may_manage_webhooks).
    ("GET", "/api/v1/webhooks/"): EVERYONE,
    ("POST", "/api/v1/webhooks/"): LEAD,
    ("GET", "/api/v1/webhooks/{id}/"): LEAD,
    ("PATCH", "/api/v1/webhooks/{id}/"): LEAD,
    ("DELETE", "/api/v1/webhooks/{id}/"): LEAD,
    ("POST", "/api/v1/webhooks/{id}/deactivate/"): LEAD,
    ("POST", "/api/v1/webhooks/{id}/reactivate/"): LEAD,
    ("GET", "/api/v1/workloads/"): EVERYONE,
    ("POST", "/api/v1/workloads/"): LEAD_OR_METRIC_OWNER,
    ("GET", "/api/v1/workloads/{key}/"): EVERYONE,
    ("PUT", "/api/v1/workloads/{key}/"): LEAD_OR_METRIC_OWNER,
    ("PATCH", "/api/v1/workloads/{key}/"): LEAD_OR_METRIC_OWNER,
    ("DELETE", "/api/v1/workloads/{key}/"): LEAD_OR_METRIC_OWNER,
}
# Signing in is open to all and takes no session or token: anyone's empty body is a 400 (or 429
# once the login throttle has counted enough attempts in this process).
PUBLIC = {("POST", "/api/v1/auth/token/"): {400, 429}}
# Operations on the caller's own objects: another caller is told there is no such object.
OWN_ONLY = {("DELETE", "/api/v1/tokens/{id}/")}


def schema_operations() -> set[tuple[str, str]]:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    return {(method.upper(), path) for path, operations in schema["paths"].items() for method in operations}


def test_the_table_covers_every_operation():
    assert schema_operations() == set(EXPECTED) | set(PUBLIC)


@pytest.fixture
def world(lead, engineer, metric_owner, component_owner, ingest_user, viewer) -> dict:
    """One object of each kind the paths name, built through the services."""
    setup = freeze_setup(lead)
    program = setup["program"]
    gate = Gate.objects.get(phase__program=program, phase__kind="canary", kind="exit")
    migration = program_services.migration_upsert(
        actor=lead, program=program, workload=Workload.objects.get(key="llm-finetune-8b"), wave=1
    )
    users = {
        "viewer": viewer,
        "engineer": engineer,
        "metric_owner": metric_owner,
        "component_owner": component_owner,
        "ingest_user": ingest_user,
        "lead": lead,
    }
    notification = notification_send(event="gate.ready", subject="s", body="b", users=users.values())
    override = freeze_services.override_open(
        actor=make_user("opener", PLATFORM_ADMINS),
        component=setup["kernels"],
        reason="hotfix",
        ends_at=setup["now"] + timedelta(hours=2),
    )
    pull_source = pull_source_create(
        actor=metric_owner,
        data={
            "definition": MetricDefinition.objects.get(key="training-throughput", version=1),
            "system": System.objects.get(key="legacy"),
            "base_url": "http://127.0.0.1:9",
            "query": "up",
            "workloads": ["llm-finetune-8b"],
        },
    )
    incident = incident_services.incident_file(
        actor=engineer,
        title="Hang",
        system=System.objects.get(key="rebuilt"),
        component=setup["trainer"],
        bug_class=BugClass.objects.get(key="communication-hang"),
        severity="sev2",
        opened_at=setup["now"] - timedelta(hours=3),
        detected_at=setup["now"] - timedelta(hours=2),
    )
    hook = webhook_endpoint_create(
        actor=lead, name="chat", url="https://chat.example.com/", program_key=program.slug
    ).endpoint
    return {
        "users": users,
        "args": {
            "webhooks": {"id": hook.pk},
            "incidents": {"id": incident.pk},
            "criteria": {"id": gate.criteria.first().pk},
            "definitions": {"key": "training-throughput", "version": 1},
            "freeze-exceptions": {"id": submitted_exception(engineer, setup["trainer"], setup["now"]).pk},
            "freeze": {"id": setup["window"].pk},
            "freeze/overrides": {"id": override.pk},
            "gates": {"id": gate.pk},
            "migrations": {"id": migration.pk},
            "notifications": {"id": notification.pk},
            "phases": {"id": Phase.objects.filter(program=program).first().pk},
            "programs": {"slug": program.slug, "id": program.memberships.get().pk},
            "pull-sources": {"id": pull_source.pk},
            "systems": {"key": "legacy"},
            "templates": {"key": "rebuild-14m"},
            "tokens": {"id": api_token_create(actor=lead, name="matrix", scopes=["full"]).token.pk},
            "workloads": {"key": "llm-finetune-8b"},
        },
    }


def fill(path: str, args: dict) -> str:
    parts = path.split("/")

    def value(match) -> str:
        values = args.get(f"{parts[3]}/{parts[4]}") or args[parts[3]]  # "freeze/overrides", then "freeze"
        return str(values[match.group(1)])

    return re.sub(r"\{(\w+)\}", value, path)


def call(client: APIClient, method: str, url: str):
    """One request whose writes are undone, so every cell starts from the same state."""
    with transaction.atomic():
        response = client.generic(
            method, url, b"{}" if method != "GET" else b"", content_type="application/json"
        )
        transaction.set_rollback(True)
    return response


@pytest.mark.parametrize(("method", "path"), sorted(EXPECTED | PUBLIC))
def test_each_role_gets_its_expected_status(world, method, path):
    url = fill(path, world["args"])
    mismatches = []
    for role in ROLES:
        client = APIClient(raise_request_exception=False)
        if role != ANONYMOUS:
            client.force_authenticate(world["users"][role])
        status = call(client, method, url).status_code
        if (method, path) in PUBLIC:
            expected = PUBLIC[(method, path)]
        elif role == ANONYMOUS:
            expected = {401}
        elif role in EXPECTED[(method, path)]:
            expected = ACTED
        elif (method, path) in OWN_ONLY:
            expected = {404}
        else:
            expected = {403}
        if status not in expected:
            mismatches.append(f"{role}: {status}, expected {sorted(expected)}")
    assert not mismatches, f"{method} {url}\n" + "\n".join(mismatches)


def test_a_viewer_posting_an_invalid_definition_gets_403_not_field_errors(as_user, viewer):
    response = as_user(viewer).post("/api/v1/definitions/", {"unit": 42}, format="json")
    assert response.status_code == 403
    assert response.json()["errors"] == []
    assert response.json()["detail"] == "Only a metric owner may register metric definitions."
