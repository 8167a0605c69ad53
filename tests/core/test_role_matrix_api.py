"""Role × operation × program: every API operation in the schema, called by every role with an empty
body, on objects of three programs (tests/core/matrix_world.py): A led by `lead`, B led only by
`lead_b`, and P, private, led by `lead_b`, read only by its members and platform admins.

An operation whose path names an object of one program (an `each(…)` row) is walked on A's, B's and
P's object; in its row ITS_LEAD stands for the lead of that object's program (`lead` on A, `lead_b` on
B and P), so a lead of one program gets 403 on another's writes, and a platform admin acts on all.
Every other operation is walked once.

Anonymous callers get 401. On P, a signed-in caller who is neither its member nor a platform admin is
told there is no such object (404), whatever the operation. A role that may not act gets 403 — before
its (invalid) body is read, so never a field-by-field 400. A role that may act gets past
authorization: a 2xx, or the 4xx its empty body or the object's state earns, never 403 and never 5xx.
A new operation without a row below fails `test_the_table_covers_every_operation`.

Every cell holds: the holes this matrix found when it gained its second and private program (webhook
endpoints managed by any lead, private objects read by non-members) are closed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
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
from incidents.services import alerts as alert_services
from metrics.models import MetricDefinition, System
from metrics.services.pull_sources import pull_source_create
from program.models import Gate, Phase
from tests.conftest import make_user
from tests.core.matrix_world import (
    LEAD_OF,
    PRIVATE_MARK,
    PRIVATE_READERS,
    PROGRAMS,
    built_once,
    matrix_users,
    three_programs,
)

ANONYMOUS = "anonymous"
SIGNED_IN = (
    "viewer",  # a member of no program
    "member",  # a viewer by membership, of A and of P
    "engineer",  # a framework engineer; an engineer of P
    "metric_owner",
    "component_owner",
    "ingest_user",
    "lead",  # leads A
    "lead_b",  # leads B and P
    "platform_admin",
)
ROLES = (ANONYMOUS, *SIGNED_IN)
ACTED = {200, 201, 204, 400, 409, 422}  # past authorization; what the empty body or the state earns
ITS_LEAD = "its_lead"
ACTIONS = ("approve", "reject", "revoke", "submit", "withdraw")


@dataclass(frozen=True)
class Each:
    """Walked on an object of each program; ITS_LEAD is that program's lead."""

    roles: frozenset[str]


def each(roles: frozenset[str]) -> Each:
    return Each(roles)


EVERYONE = frozenset(SIGNED_IN)
# A lead of the object's program, or a platform admin.
LEADS = frozenset({ITS_LEAD, "platform_admin"})
# A lead of any program, or a platform admin: the program is in the body (the service then asks about
# that one), or the object belongs to no one program (a break-glass override).
ANY_LEAD = frozenset({"lead", "lead_b", "platform_admin"})
# The group program-leads ("may create programs") or a platform admin.
CREATORS = frozenset({"lead", "lead_b", "platform_admin"})
# Rules still on the global groups: program-leads and the other group named (not program roles).
LEAD_GROUP_OR_METRIC_OWNER = frozenset({"lead", "lead_b", "metric_owner"})
LEAD_GROUP_OR_ENGINEER = frozenset({"lead", "lead_b", "engineer"})
METRIC_OWNER = frozenset({"metric_owner"})
ENGINEER = frozenset({"engineer"})
LEADS_OR_METRIC_OWNER = LEADS | METRIC_OWNER
LEADS_OR_ENGINEER = LEADS | ENGINEER
# Each program's fixture exception was filed by `engineer` on a component `component_owner`'s team owns.
APPROVERS = LEADS | {"component_owner"}
REQUESTER = ENGINEER

# (method, path) → the signed-in roles that may act; every other signed-in role gets 403.
EXPECTED: dict[tuple[str, str], frozenset[str] | Each] = {
    ("GET", "/api/v1/auth/me/"): EVERYONE,
    ("DELETE", "/api/v1/auth/me/"): EVERYONE,
    ("GET", "/api/v1/comparisons/"): EVERYONE,
    ("GET", "/api/v1/comparisons/export/"): EVERYONE,
    ("GET", "/api/v1/components/"): EVERYONE,
    ("POST", "/api/v1/components/"): CREATORS,
    ("PATCH", "/api/v1/criteria/{id}/"): each(LEADS),
    ("DELETE", "/api/v1/criteria/{id}/"): each(LEADS),
    ("POST", "/api/v1/criteria/{id}/attest/"): each(LEADS),
    ("GET", "/api/v1/criteria/{id}/calibration/"): each(EVERYONE),
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
    ("GET", "/api/v1/freeze-exceptions/{id}/"): each(EVERYONE),
    ("GET", "/api/v1/freeze-exceptions/{id}/impact/"): each(EVERYONE),
    ("PATCH", "/api/v1/freeze-exceptions/{id}/"): each(ENGINEER),
    # The lead approval: a lead of the program whose window the exception is under, or the owner team.
    ("POST", "/api/v1/freeze-exceptions/{id}/approve/"): each(APPROVERS),
    ("POST", "/api/v1/freeze-exceptions/{id}/reject/"): each(APPROVERS),
    ("POST", "/api/v1/freeze-exceptions/{id}/revoke/"): each(LEADS),
    ("POST", "/api/v1/freeze-exceptions/{id}/submit/"): each(REQUESTER),
    ("POST", "/api/v1/freeze-exceptions/{id}/withdraw/"): each(REQUESTER),
    ("GET", "/api/v1/freeze/check/"): EVERYONE,
    ("GET", "/api/v1/freeze/overrides/"): EVERYONE,
    ("POST", "/api/v1/freeze/overrides/"): ANY_LEAD,
    # The fixture override was opened by another platform admin, so every lead may review it.
    ("POST", "/api/v1/freeze/overrides/{id}/review/"): ANY_LEAD,
    ("GET", "/api/v1/freeze/windows/"): EVERYONE,
    ("POST", "/api/v1/freeze/windows/"): ANY_LEAD,
    ("GET", "/api/v1/freeze/windows/{id}/levels/"): each(EVERYONE),
    ("POST", "/api/v1/freeze/windows/{id}/levels/"): each(LEADS),
    ("POST", "/api/v1/freeze/windows/{id}/levels/import/"): each(LEADS),
    ("GET", "/api/v1/freeze/windows/{id}/history/"): each(EVERYONE),
    ("POST", "/api/v1/gates/"): ANY_LEAD,
    ("GET", "/api/v1/gates/{id}/"): each(EVERYONE),
    ("POST", "/api/v1/gates/{id}/criteria/"): each(LEADS),
    ("POST", "/api/v1/gates/{id}/decision/"): each(LEADS),
    ("POST", "/api/v1/gates/{id}/evaluate/"): each(LEADS_OR_METRIC_OWNER),
    ("POST", "/api/v1/gates/{id}/reopen/"): each(LEADS),
    ("POST", "/api/v1/gates/{id}/repin/"): each(LEADS),
    ("GET", "/api/v1/incidents/"): EVERYONE,
    ("POST", "/api/v1/incidents/"): LEAD_GROUP_OR_ENGINEER,
    ("GET", "/api/v1/incidents/{id}/"): EVERYONE,
    ("PATCH", "/api/v1/incidents/{id}/"): LEAD_GROUP_OR_ENGINEER,
    ("GET", "/api/v1/incidents/bug-classes/"): EVERYONE,
    ("POST", "/api/v1/incidents/import/"): LEAD_GROUP_OR_ENGINEER,
    ("GET", "/api/v1/incidents/mttr/"): EVERYONE,
    ("GET", "/api/v1/incidents/recurrence/"): EVERYONE,
    ("POST", "/api/v1/incidents/alertmanager/"): LEAD_GROUP_OR_ENGINEER,
    ("GET", "/api/v1/incidents/alert-routes/"): EVERYONE,
    ("POST", "/api/v1/incidents/alert-routes/"): LEAD_GROUP_OR_ENGINEER,
    ("GET", "/api/v1/incidents/alert-routes/{id}/"): EVERYONE,
    ("PATCH", "/api/v1/incidents/alert-routes/{id}/"): LEAD_GROUP_OR_ENGINEER,
    ("DELETE", "/api/v1/incidents/alert-routes/{id}/"): LEAD_GROUP_OR_ENGINEER,
    # As program.policies.may_record_migrations: its leads and engineers, framework engineers.
    ("POST", "/api/v1/migrations/{id}/state/"): each(LEADS_OR_ENGINEER),
    ("GET", "/api/v1/me/work/"): EVERYONE,
    ("GET", "/api/v1/notifications/"): EVERYONE,
    ("POST", "/api/v1/notifications/read-all/"): EVERYONE,
    # The fixture notification reached every signed-in role, so each marks it in their own inbox.
    ("POST", "/api/v1/notifications/{id}/read/"): EVERYONE,
    ("GET", "/api/v1/observations/"): EVERYONE,
    ("GET", "/api/v1/observations/export/"): EVERYONE,
    ("POST", "/api/v1/observations/batch/"): frozenset({"ingest_user"}),
    ("POST", "/otlp/v1/metrics"): frozenset({"ingest_user"}),
    ("POST", "/api/v1/phases/{id}/replan/"): each(LEADS),
    ("POST", "/api/v1/phases/{id}/actual-dates/"): each(LEADS),
    ("GET", "/api/v1/programs/"): EVERYONE,
    ("POST", "/api/v1/programs/"): CREATORS,
    ("GET", "/api/v1/programs/{slug}/"): each(EVERYONE),
    ("GET", "/api/v1/programs/{slug}/advance/"): each(EVERYONE),
    ("POST", "/api/v1/programs/{slug}/advance/"): each(LEADS),
    ("GET", "/api/v1/programs/{slug}/approval-bar/"): each(EVERYONE),
    ("PUT", "/api/v1/programs/{slug}/approval-bar/"): each(LEADS),
    ("GET", "/api/v1/programs/{slug}/members/"): each(EVERYONE),
    ("POST", "/api/v1/programs/{slug}/members/"): each(LEADS),
    ("DELETE", "/api/v1/programs/{slug}/members/{id}/"): each(LEADS),
    ("GET", "/api/v1/pull-sources/"): EVERYONE,
    ("POST", "/api/v1/pull-sources/"): METRIC_OWNER,
    ("GET", "/api/v1/pull-sources/{id}/"): EVERYONE,
    ("PATCH", "/api/v1/pull-sources/{id}/"): METRIC_OWNER,
    ("DELETE", "/api/v1/pull-sources/{id}/"): METRIC_OWNER,
    ("GET", "/api/v1/programs/{slug}/bindings/"): each(EVERYONE),
    ("POST", "/api/v1/programs/{slug}/bindings/"): each(LEADS),
    ("GET", "/api/v1/programs/{slug}/migrations/"): each(EVERYONE),
    ("POST", "/api/v1/programs/{slug}/migrations/"): each(LEADS_OR_ENGINEER),
    ("GET", "/api/v1/systems/"): EVERYONE,
    ("GET", "/api/v1/templates/"): EVERYONE,
    ("GET", "/api/v1/templates/{key}/"): EVERYONE,
    ("GET", "/api/v1/tokens/"): EVERYONE,
    ("POST", "/api/v1/tokens/"): EVERYONE,
    # The fixture token is the lead's: anyone else finds no such token of theirs (404, below).
    ("DELETE", "/api/v1/tokens/{id}/"): frozenset({"lead"}),
    ("POST", "/api/v1/systems/"): LEAD_GROUP_OR_METRIC_OWNER,
    ("GET", "/api/v1/systems/{key}/"): EVERYONE,
    ("PUT", "/api/v1/systems/{key}/"): LEAD_GROUP_OR_METRIC_OWNER,
    ("PATCH", "/api/v1/systems/{key}/"): LEAD_GROUP_OR_METRIC_OWNER,
    ("DELETE", "/api/v1/systems/{key}/"): LEAD_GROUP_OR_METRIC_OWNER,
    # Everyone lists the endpoints they may manage (none for most); each program has an endpoint of its
    # own, managed by that program's leads and platform admins (core.policies.may_manage_webhooks).
    ("GET", "/api/v1/webhooks/"): EVERYONE,
    ("POST", "/api/v1/webhooks/"): ANY_LEAD,
    ("GET", "/api/v1/webhooks/{id}/"): each(LEADS),
    ("PATCH", "/api/v1/webhooks/{id}/"): each(LEADS),
    ("DELETE", "/api/v1/webhooks/{id}/"): each(LEADS),
    ("POST", "/api/v1/webhooks/{id}/deactivate/"): each(LEADS),
    ("POST", "/api/v1/webhooks/{id}/reactivate/"): each(LEADS),
    ("GET", "/api/v1/workloads/"): EVERYONE,
    ("POST", "/api/v1/workloads/"): LEAD_GROUP_OR_METRIC_OWNER,
    ("GET", "/api/v1/workloads/{key}/"): EVERYONE,
    ("PUT", "/api/v1/workloads/{key}/"): LEAD_GROUP_OR_METRIC_OWNER,
    ("PATCH", "/api/v1/workloads/{key}/"): LEAD_GROUP_OR_METRIC_OWNER,
    ("DELETE", "/api/v1/workloads/{key}/"): LEAD_GROUP_OR_METRIC_OWNER,
}
# Signing in is open to all and takes no session or token: anyone's empty body is a 400 (or 429
# once the login throttle has counted enough attempts in this process).
PUBLIC = {("POST", "/api/v1/auth/token/"): {400, 429}}
# Operations on the caller's own objects: another caller is told there is no such object.
OWN_ONLY = {("DELETE", "/api/v1/tokens/{id}/")}


def expected_statuses(method: str, path: str, program: str, role: str) -> set[int]:
    if (method, path) in PUBLIC:
        return PUBLIC[(method, path)]
    if role == ANONYMOUS:
        return {401}
    rule = EXPECTED[(method, path)]
    if isinstance(rule, Each):
        if program == "P" and role not in PRIVATE_READERS:
            return {404}
        may = {LEAD_OF[program] if r == ITS_LEAD else r for r in rule.roles}
    else:
        may = set(rule)
    if role in may:
        return ACTED
    if (method, path) in OWN_ONLY:
        return {404}
    return {403}


def schema_operations() -> set[tuple[str, str]]:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    return {(method.upper(), path) for path, operations in schema["paths"].items() for method in operations}


def test_the_table_covers_every_operation():
    assert schema_operations() == set(EXPECTED) | set(PUBLIC)


@pytest.fixture(scope="module")
def world(django_db_setup, django_db_blocker) -> dict:
    """One object of each kind the paths name, per program for the program-scoped ones, built through
    the services once for the module (every request below is rolled back)."""
    with built_once(django_db_blocker):
        users = matrix_users()
        users["ingest_user"] = users.pop("ingest")
        programs = three_programs(users)
        ref = programs["ref"]
        notification = notification_send(event="gate.ready", subject="s", body="b", users=users.values())
        override = freeze_services.override_open(
            actor=make_user("opener", PLATFORM_ADMINS),
            component=ref["kernels"],
            reason="hotfix",
            ends_at=ref["now"] + timedelta(hours=2),
        )
        pull_source = pull_source_create(
            actor=users["metric_owner"],
            data={
                "definition": MetricDefinition.objects.get(key="training-throughput", version=1),
                "system": System.objects.get(key="legacy"),
                "base_url": "http://127.0.0.1:9",
                "query": "up",
                "point_kind": "sample",  # one point a sample: training-throughput here is per_request
                "workloads": ["llm-finetune-8b"],
            },
        )
        incident = incident_services.incident_file(
            actor=users["engineer"],
            title="Hang",
            system=System.objects.get(key="rebuilt"),
            component=ref["trainer"],
            bug_class=BugClass.objects.get(key="communication-hang"),
            severity="sev2",
            opened_at=ref["now"] - timedelta(hours=3),
            detected_at=ref["now"] - timedelta(hours=2),
        )
        route = alert_services.alert_route_create(
            actor=users["engineer"],
            matchers={"alertname": "Hang"},
            system=System.objects.get(key="rebuilt"),
            component=ref["trainer"],
            bug_class=BugClass.objects.get(key="communication-hang"),
        )
        shared = {
            "incidents": {"id": incident.pk},
            "incidents/alert-routes": {"id": route.pk},
            "definitions": {"key": "training-throughput", "version": 1},
            "freeze/overrides": {"id": override.pk},
            "notifications": {"id": notification.pk},
            "pull-sources": {"id": pull_source.pk},
            "systems": {"key": "legacy"},
            "templates": {"key": "rebuild-14m"},
            "tokens": {"id": api_token_create(actor=users["lead"], name="matrix", scopes=["full"]).token.pk},
            "workloads": {"key": "llm-finetune-8b"},
        }
        args = {}
        for key in PROGRAMS:
            mine = programs[key]
            program = mine["program"]
            lead = users[LEAD_OF[key]]
            gate = Gate.objects.get(phase__program=program, phase__kind="canary", kind="exit")
            hook = webhook_endpoint_create(
                actor=lead, name=f"chat {key}", url="https://chat.example.com/", program_key=program.slug
            ).endpoint
            # A's and P's `member` is a viewer, whom a lead may remove; B has its lead only (409).
            membership = program.memberships.filter(role="viewer").first() or program.memberships.get()
            args[key] = {
                **shared,
                "webhooks": {"id": hook.pk},
                "criteria": {"id": gate.criteria.order_by("pk").first().pk},
                "freeze-exceptions": {"id": mine["submitted"].pk},
                "freeze": {"id": mine["window"].pk},
                "gates": {"id": gate.pk},
                "migrations": {"id": mine["migration"].pk},
                "phases": {"id": Phase.objects.filter(program=program).first().pk},
                "programs": {"slug": program.slug, "id": membership.pk},
            }
        args[""] = args["A"]
        yield {"users": {role: user.pk for role, user in users.items()}, "args": args}


@pytest.fixture
def users(world, db) -> dict[str, User]:
    """The role's users, loaded afresh for each test (no roles cached on them by an earlier one)."""
    by_pk = User.objects.in_bulk(world["users"].values())
    return {role: by_pk[pk] for role, pk in world["users"].items()}


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


def status_of(users: dict[str, User], role: str, method: str, url: str) -> int:
    client = APIClient(raise_request_exception=False)
    if role != ANONYMOUS:
        client.force_authenticate(users[role])
    return call(client, method, url).status_code


def cells() -> list[tuple[str, str, str]]:
    """(method, path, program): "" for an operation walked once."""
    return sorted(
        (method, path, program)
        for (method, path), rule in (EXPECTED | {op: EVERYONE for op in PUBLIC}).items()
        for program in (PROGRAMS if isinstance(rule, Each) else ("",))
    )


@pytest.mark.parametrize(("method", "path", "program"), cells())
def test_each_role_gets_its_expected_status(world, users, method, path, program):
    url = fill(path, world["args"][program])
    mismatches = []
    for role in ROLES:
        status = status_of(users, role, method, url)
        expected = expected_statuses(method, path, program, role)
        if status not in expected:
            mismatches.append(f"{role}: {status}, expected {sorted(expected)}")
    assert not mismatches, f"{method} {url} (program {program or '-'})\n" + "\n".join(mismatches)


# List → the roles that find the private program's rows in it (PRIVATE_MARK in the answer).
PRIVATE_LISTED: dict[str, frozenset[str]] = {
    "/api/v1/programs/": PRIVATE_READERS,
    "/api/v1/freeze/windows/": PRIVATE_READERS,
    "/api/v1/freeze-exceptions/": PRIVATE_READERS,
    # The endpoints one may manage: P's to its lead and platform admins.
    "/api/v1/webhooks/": frozenset({"lead_b", "platform_admin"}),
    # P's window: the check is CI's one answer and counts every program's freeze, so it names the
    # window that blocks to whoever may ask it (README, "Private programs"): privacy hides a program's
    # gates, evidence and exceptions, not that it froze a component everyone shares.
    "/api/v1/freeze/check/?component=trainer": frozenset(SIGNED_IN),
    # P's exception: awaiting its lead's (and the platform admin's) approval, and its requester's own.
    # The component's owner team is not told of it, nor may it act on it, until it is a member of P.
    "/api/v1/me/work/": frozenset({"lead_b", "platform_admin", "engineer"}),
}


def finds_private(users: dict[str, User], role: str, url: str) -> bool:
    client = APIClient()
    client.force_authenticate(users[role])
    response = client.get(url)
    assert response.status_code == 200, f"{role}: GET {url} → {response.status_code}"
    return PRIVATE_MARK in response.content.decode().lower()


@pytest.mark.parametrize("url", sorted(PRIVATE_LISTED))
def test_a_private_program_is_listed_to_its_readers_only(world, users, url):
    found = {role for role in SIGNED_IN if finds_private(users, role, url)}
    expected = set(PRIVATE_LISTED[url])
    assert found == expected, url


def test_a_viewer_posting_an_invalid_definition_gets_403_not_field_errors(as_user, users):
    response = as_user(users["viewer"]).post("/api/v1/definitions/", {"unit": 42}, format="json")
    assert response.status_code == 403
    assert response.json()["errors"] == []
    assert response.json()["detail"] == "Only a metric owner may register metric definitions."
