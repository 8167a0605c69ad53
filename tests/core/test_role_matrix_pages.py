"""Every page URL from the resolver × every role × program: the status of a GET and of a forced POST.

The table below is the expectation, written out. A new page URL without a row fails
`test_every_page_url_has_a_row`, so nobody adds a page without deciding who may use it.
POSTs carry no data: a role that may act gets past the guard and answers 400 (the empty form is
refused) or 302 (a button action, done or refused with a message on the page it returns to); a role
that may not act gets the 403 page before any input is read. Read-only pages answer POST with 405;
anonymous requests are sent to the login page (302) before anything else.

The world (tests/core/matrix_world.py) has three programs: A led by `lead`, B led only by `lead_b`,
and P, private, led by `lead_b`. A page of one program's object (an `each(…)` row) is walked on A's,
B's and P's object. Its rows are written for A; on B the columns of `lead` and `lead_b` trade places
(a lead of one program is refused on another's, the other program's lead acts); on P, every role that
may not read it (PRIVATE_READERS) gets the 404 page instead, but for a 405 (the method is refused
before the object is looked up). A platform admin acts on all three.

Every cell holds: the holes this matrix found when it gained its second and private program are closed."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.db import transaction
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from core.notifications import notification_send
from core.roles import PLATFORM_ADMINS
from core.services.api_tokens import api_token_create
from core.services.webhooks import webhook_endpoint_create
from freeze import services as freeze_services
from incidents import services as incident_services
from incidents.models import BugClass
from incidents.services import alerts as alert_services
from program.models import Criterion, Gate, Phase
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
from tests.freeze.factories import draft_exception, submitted_exception

ROLES = (
    "anonymous",
    "viewer",  # a member of no program
    "engineer",  # a framework engineer; an engineer of P
    "metric_owner",
    "component_owner",
    "ingest",
    "lead",  # leads A
    # | the columns after the bar:
    "member",  # a viewer by membership, of A and of P
    "lead_b",  # leads B and P
    "platform_admin",
)
# otlp/ is an API (token auth, JSON/protobuf answers), covered by its own receiver tests.
SKIPPED_PREFIXES = ("admin/", "api/", "static/", "otlp/")


def row(statuses: str) -> tuple[int, ...]:
    """'302 200 … | 200 200 200' in ROLES order (the bar is only for the eye)."""
    codes = tuple(int(code) for code in statuses.replace("|", " ").split())
    assert len(codes) == len(ROLES)
    return codes


Rows = tuple[tuple[int, ...], tuple[int, ...]]


@dataclass(frozen=True)
class Each:
    """Walked on an object of each program; the rows are A's (see the module's docstring)."""

    get: tuple[int, ...]
    post: tuple[int, ...]


def each(rows: Rows) -> Each:
    return Each(*rows)


READ = (row("302 200 200 200 200 200 200 | 200 200 200"), row("302 405 405 405 405 405 405 | 405 405 405"))
# A lead of the page's program, or a platform admin.
LEAD_FORM = (
    row("302 403 403 403 403 403 200 | 403 403 200"),
    row("302 403 403 403 403 403 400 | 403 403 400"),
)
# A lead of any program (or of the program the form will name), or a platform admin.
ANY_LEAD_FORM = (
    row("302 403 403 403 403 403 200 | 403 200 200"),
    row("302 403 403 403 403 403 400 | 403 400 400"),
)
ENGINEER_FORM = (
    row("302 403 200 403 403 403 403 | 403 403 403"),
    row("302 403 400 403 403 403 403 | 403 403 403"),
)
POST_ONLY = row("302 405 405 405 405 405 405 | 405 405 405")
OWNER_FORM = (
    row("302 403 403 200 403 403 403 | 403 403 403"),
    row("302 403 403 400 403 403 403 | 403 403 403"),
)
# A confirmation page; the POST is the button (done, or refused with a message on the version page).
OWNER_CONFIRM = (
    row("302 403 403 200 403 403 403 | 403 403 403"),
    row("302 403 403 302 403 403 403 | 403 403 403"),
)
# Framework engineers and members of program-leads (still a global group here) file and update
# incidents; the form is on the list page.
INCIDENT_FORM = row("302 403 405 403 403 403 405 | 403 405 403")

#                       GET                                    forced POST
EXPECTED: dict[str, Rows | Each] = {
    "home": READ,
    "search": READ,
    "notifications": READ,
    # Every signed-in person has an inbox; the notification below reached the lead only, so anyone
    # else finds no such notification in theirs (the 404 page) before anything is read or written.
    "notification-open": (POST_ONLY, row("302 404 404 404 404 404 302 | 404 404 404")),
    "notification-read": (POST_ONLY, row("302 404 404 404 404 404 302 | 404 404 404")),
    "notifications-read-all": (POST_ONLY, row("302 302 302 302 302 302 302 | 302 302 302")),
    # Everyone has preferences of their own; the empty form lacks every kind's choice (400).
    "notification-preferences": (
        row("302 200 200 200 200 200 200 | 200 200 200"),
        row("302 400 400 400 400 400 400 | 400 400 400"),
    ),
    # Program leads manage their program's endpoints (core.policies.may_manage_webhooks), platform
    # admins all; each program has an endpoint. Reactivating an active one is refused with a message.
    "webhooks": ANY_LEAD_FORM,
    "webhook-edit": each(LEAD_FORM),
    "webhook-deactivate": each((POST_ONLY, row("302 403 403 403 403 403 302 | 403 403 302"))),
    "webhook-reactivate": each((POST_ONLY, row("302 403 403 403 403 403 302 | 403 403 302"))),
    "webhook-delete": each((POST_ONLY, row("302 403 403 403 403 403 302 | 403 403 302"))),
    "healthz": (
        row("200 200 200 200 200 200 200 | 200 200 200"),
        row("405 405 405 405 405 405 405 | 405 405 405"),
    ),
    "livez": (
        row("200 200 200 200 200 200 200 | 200 200 200"),
        row("405 405 405 405 405 405 405 | 405 405 405"),
    ),
    "readyz": (
        row("200 200 200 200 200 200 200 | 200 200 200"),
        row("405 405 405 405 405 405 405 | 405 405 405"),
    ),
    "version": (
        row("200 200 200 200 200 200 200 | 200 200 200"),
        row("405 405 405 405 405 405 405 | 405 405 405"),
    ),
    # Prometheus scrapes from this host here (the test client's address); see test_prometheus_metrics.
    "prometheus-metrics": (
        row("200 200 200 200 200 200 200 | 200 200 200"),
        row("405 405 405 405 405 405 405 | 405 405 405"),
    ),
    "login": (
        row("200 302 302 302 302 302 302 | 302 302 302"),
        row("200 302 302 302 302 302 302 | 302 302 302"),
    ),
    "logout": (
        row("302 405 405 405 405 405 405 | 405 405 405"),
        row("302 302 302 302 302 302 302 | 302 302 302"),
    ),
    # Single sign-on is off in the tests' settings (tests/core/sso/ turns it on): both pages say so.
    "oidc_authentication_init": (
        row("404 404 404 404 404 404 404 | 404 404 404"),
        row("405 405 405 405 405 405 405 | 405 405 405"),
    ),
    "oidc_authentication_callback": (
        row("404 404 404 404 404 404 404 | 404 404 404"),
        row("405 405 405 405 405 405 405 | 405 405 405"),
    ),
    # Everyone manages their own tokens; an empty form is a 400. The fixture token is the lead's.
    "account-tokens": (
        row("302 200 200 200 200 200 200 | 200 200 200"),
        row("302 400 400 400 400 400 400 | 400 400 400"),
    ),
    "account-token-revoke": (POST_ONLY, row("302 404 404 404 404 404 302 | 404 404 404")),
    # Password reset is open to all (a signed-in person may ask too); the link below is not valid.
    "password_reset": (
        row("200 200 200 200 200 200 200 | 200 200 200"),
        row("200 200 200 200 200 200 200 | 200 200 200"),
    ),
    "password_reset_done": (
        row("200 200 200 200 200 200 200 | 200 200 200"),
        row("405 405 405 405 405 405 405 | 405 405 405"),
    ),
    "password_reset_confirm": (
        row("200 200 200 200 200 200 200 | 200 200 200"),
        row("200 200 200 200 200 200 200 | 200 200 200"),
    ),
    "password_reset_complete": (
        row("200 200 200 200 200 200 200 | 200 200 200"),
        row("405 405 405 405 405 405 405 | 405 405 405"),
    ),
    "metrics:registry": READ,
    "metrics:compare": READ,
    "metrics:feeds": READ,
    "metrics:detail": READ,
    # The batch API's write rule (metrics.add_observation): the ingest client only; the empty form is a 400.
    "metrics:ingest": (
        row("302 403 403 403 403 200 403 | 403 403 403"),
        row("302 403 403 403 403 400 403 | 403 403 403"),
    ),
    "metrics:register": OWNER_FORM,
    "metrics:version-new": OWNER_FORM,
    "metrics:version-activate": OWNER_CONFIRM,
    "metrics:version-deprecate": OWNER_CONFIRM,
    "program:list": READ,
    # Program creators (program-leads) and platform admins.
    "program:new": ANY_LEAD_FORM,
    "program:detail": each(READ),
    # The confirmation step; each fixture program's exit gate is open, so its lead's POST is refused (409).
    "program:advance": each(
        (row("302 403 403 403 403 403 200 | 403 403 200"), row("302 403 403 403 403 403 409 | 403 403 409"))
    ),
    "program:history": each(READ),
    "program:phase-dates": each(
        (row("302 403 403 403 403 403 200 | 403 403 200"), row("302 403 403 403 403 403 405 | 403 403 405"))
    ),
    "program:phase-replan": each((POST_ONLY, row("302 403 403 403 403 403 400 | 403 403 400"))),
    "program:phase-actual-dates": each((POST_ONLY, row("302 403 403 403 403 403 400 | 403 403 400"))),
    # As the API's migration_record rule: the program's leads and engineers, framework engineers.
    "program:migrations": each(
        (row("302 403 200 403 403 403 200 | 403 403 200"), row("302 403 405 403 403 403 405 | 403 403 405"))
    ),
    "program:migration-state": each((POST_ONLY, row("302 403 400 403 403 403 400 | 403 403 400"))),
    "program:bind": each((POST_ONLY, row("302 403 403 403 403 403 302 | 403 403 302"))),
    # An empty form turns the bar off: the lead's POST succeeds and redirects.
    "program:approval-bar": each((POST_ONLY, row("302 403 403 403 403 403 302 | 403 403 302"))),
    "program:gate": each(READ),
    "program:gate-decide": each((POST_ONLY, row("302 403 403 403 403 403 400 | 403 403 400"))),
    "program:gate-evaluate": each((POST_ONLY, row("302 403 403 302 403 403 302 | 403 403 302"))),
    "program:gate-reopen": each((POST_ONLY, row("302 403 403 403 403 403 400 | 403 403 400"))),
    "program:criterion-attest": each((POST_ONLY, row("302 403 403 403 403 403 302 | 403 403 302"))),
    "program:criterion-add": each((POST_ONLY, row("302 403 403 403 403 403 400 | 403 403 400"))),
    "program:criterion-edit": each((POST_ONLY, row("302 403 403 403 403 403 400 | 403 403 400"))),
    "program:criterion-delete": each((POST_ONLY, row("302 403 403 403 403 403 302 | 403 403 302"))),
    "program:criterion-calibration": each(READ),
    "program:gate-repin": each((POST_ONLY, row("302 403 403 403 403 403 302 | 403 403 302"))),
    "freeze:list": READ,
    "freeze:component": READ,
    "freeze:window": each(READ),
    "freeze:levels": each(LEAD_FORM),
    "freeze:window-history": each(READ),
    # No file: the levels page again, the refusal next to the file input (400).
    "freeze:levels-import": each((POST_ONLY, row("302 403 403 403 403 403 400 | 403 403 400"))),
    "freeze:queues": READ,
    "freeze:exceptions": READ,
    "freeze:exception-level": READ,
    "freeze:exception-new": ENGINEER_FORM,
    "freeze:exception": each(READ),
    "freeze:exception-edit": each(ENGINEER_FORM),
    # The engineer requested these exceptions, so may submit and withdraw but never decide them; the
    # component's owner team and the program's leads decide them.
    "freeze:exception-act[submit]": each((POST_ONLY, row("302 403 302 403 403 403 403 | 403 403 403"))),
    "freeze:exception-act[approve]": each((POST_ONLY, row("302 403 403 403 302 403 302 | 403 403 302"))),
    "freeze:exception-act[reject]": each((POST_ONLY, row("302 403 403 403 400 403 400 | 403 403 400"))),
    "freeze:exception-act[withdraw]": each((POST_ONLY, row("302 403 302 403 403 403 403 | 403 403 403"))),
    "freeze:exception-act[revoke]": each((POST_ONLY, row("302 403 403 403 403 403 400 | 403 403 400"))),
    "incidents:list": READ,
    "incidents:detail": READ,
    "incidents:new": (INCIDENT_FORM, row("302 403 400 403 403 403 400 | 403 400 403")),
    "incidents:edit": (INCIDENT_FORM, row("302 403 400 403 403 403 400 | 403 400 403")),
    # Resolving asks for the times (issue 29): an empty form is a 400, like filing and editing.
    "incidents:resolve": (INCIDENT_FORM, row("302 403 400 403 403 403 400 | 403 400 403")),
    "incidents:checklist": (INCIDENT_FORM, row("302 403 302 403 403 403 302 | 403 302 403")),
    # Alert routes: whoever files incidents manages them; everyone signed in sees them.
    "incidents:alert-routes": READ,
    "incidents:alert-route-new": (INCIDENT_FORM, row("302 403 400 403 403 403 400 | 403 400 403")),
    "incidents:alert-route-edit": (INCIDENT_FORM, row("302 403 400 403 403 403 400 | 403 400 403")),
    "incidents:alert-route-delete": (INCIDENT_FORM, row("302 403 302 403 403 403 302 | 403 302 403")),
    "freeze:override-new": ANY_LEAD_FORM,
    # The fixture override was opened by another platform admin, so every lead may review it.
    "freeze:override-review": ANY_LEAD_FORM,
    # Members: everyone who reads the program sees them; its leads add (an empty form is a 400) and
    # change or remove one (the lead's own row; no role sent is a 400).
    "program:members": each(
        (row("302 200 200 200 200 200 200 | 200 200 200"), row("302 403 403 403 403 403 400 | 403 403 400"))
    ),
    "program:member": each((POST_ONLY, row("302 403 403 403 403 403 400 | 403 403 400"))),
}

ACTIONS = ("submit", "approve", "reject", "withdraw", "revoke")


# Path parameters from the objects `world` builds; URLs that take several values get one row each.
ACTION_SUBJECT = {
    "submit": "draft",
    "approve": "submitted",
    "reject": "submitted",
    "withdraw": "submitted",
    "revoke": "approved",
}


def expected_rows(key: str, program: str) -> dict[str, tuple[int, int]]:
    """{role: (GET, forced POST)} for this page on this program's object ("" for a page of none)."""
    rule = EXPECTED[key]
    if not isinstance(rule, Each):
        get, post = rule
        return {role: (get[i], post[i]) for i, role in enumerate(ROLES)}
    on_a = {role: (rule.get[i], rule.post[i]) for i, role in enumerate(ROLES)}
    if program == "A":
        return on_a
    cells = {**on_a, "lead": on_a["lead_b"], "lead_b": on_a["lead"]}
    if program == "P":
        cells = {
            role: cell
            if role == "anonymous" or role in PRIVATE_READERS
            else tuple(405 if code == 405 else 404 for code in cell)
            for role, cell in cells.items()
        }
    return cells  # type: ignore[return-value]


def page_url_names(patterns=None, prefix: str = "", namespace: str = "") -> set[str]:
    """Qualified names of every page URL pattern (admin, API and static left out)."""
    names: set[str] = set()
    for pattern in get_resolver().url_patterns if patterns is None else patterns:
        route = prefix + str(pattern.pattern)
        if route.lstrip("^").startswith(SKIPPED_PREFIXES):
            continue
        if isinstance(pattern, URLResolver):
            inner = f"{namespace}{pattern.namespace}:" if pattern.namespace else namespace
            names |= page_url_names(pattern.url_patterns, route, inner)
        elif isinstance(pattern, URLPattern):
            assert pattern.name, f"page URL {route!r} has no name"
            names.add(namespace + pattern.name)
    return names


def walked_keys() -> set[str]:
    keys = set()
    for name in page_url_names():
        if name == "freeze:exception-act":
            keys |= {f"{name}[{action}]" for action in ACTIONS}
        else:
            keys.add(name)
    return keys


def test_every_page_url_has_a_row():
    assert walked_keys() == set(EXPECTED)


def program_kwargs(mine: dict, users: dict[str, User]) -> dict:
    program = mine["program"]
    gate = Gate.objects.filter(phase__program=program).order_by("pk").first()
    phase = Phase.objects.get(program=program, status="active")
    criterion = gate.criteria.order_by("pk").first()
    hook = webhook_endpoint_create(
        actor=users[mine["lead"]],
        name=f"chat {program.slug}",
        url="https://chat.example.com/",
        program_key=program.slug,
    ).endpoint
    return {
        **{
            f"program:{name}": {"slug": program.slug}
            for name in ("detail", "advance", "bind", "approval-bar", "history", "migrations")
        },
        "program:migration-state": {"pk": mine["migration"].pk},
        "program:members": {"slug": program.slug},
        "program:member": {"slug": program.slug, "pk": program.memberships.get(user=users[mine["lead"]]).pk},
        **{
            f"program:{name}": {"pk": phase.pk}
            for name in ("phase-dates", "phase-replan", "phase-actual-dates")
        },
        **{
            f"program:{name}": {"pk": gate.pk}
            for name in ("gate", "gate-decide", "gate-evaluate", "gate-reopen", "criterion-add", "gate-repin")
        },
        **{
            f"program:{name}": {"pk": criterion.pk}
            for name in ("criterion-edit", "criterion-delete", "criterion-calibration")
        },
        "program:criterion-attest": {
            "pk": Criterion.objects.filter(gate__phase__program=program, kind="manual").first().pk
        },
        **{
            f"freeze:{name}": {"window_id": mine["window"].pk}
            for name in ("window", "window-history", "levels", "levels-import")
        },
        "freeze:exception": {"pk": mine["submitted"].pk},
        "freeze:exception-edit": {"pk": mine["submitted"].pk},
        **{
            name: {"pk": hook.pk}
            for name in ("webhook-edit", "webhook-deactivate", "webhook-reactivate", "webhook-delete")
        },
    }


@pytest.fixture(scope="module")
def world(django_db_setup, django_db_blocker):
    """Built through the services once for the module (every request below is rolled back)."""
    with built_once(django_db_blocker):
        users = matrix_users()
        programs = three_programs(users)
        ref = programs["ref"]
        engineer, now = users["engineer"], ref["now"]
        exceptions = {}
        for key in PROGRAMS:
            mine = programs[key]
            mine["lead"] = LEAD_OF[key]
            tag = "classified " if key == "P" else ""
            approved = submitted_exception(
                engineer, ref["trainer"], now, window=mine["window"], title=f"{tag}approved"
            )
            # A's by the owner team, as before; B's and P's by their lead (the lead approval).
            approver = users["component_owner"] if key == "A" else users["lead_b"]
            freeze_services.exception_approve(actor=approver, exception=approved)
            exceptions[key] = {
                "draft": draft_exception(
                    engineer, ref["trainer"], now, window=mine["window"], title=f"{tag}draft"
                ),
                "submitted": mine["submitted"],
                "approved": approved,
            }
        override = freeze_services.override_open(
            actor=make_user("opener", PLATFORM_ADMINS),
            component=ref["kernels"],
            reason="hotfix",
            ends_at=now + timedelta(hours=2),
        )
        program = programs["A"]["program"]
        incident = incident_services.incident_file(
            actor=engineer,
            title="Hang",
            system=program.candidate_system,
            component=ref["trainer"],
            bug_class=BugClass.objects.get(key="communication-hang"),
            severity="sev2",
            opened_at=now - timedelta(hours=3),
            detected_at=now - timedelta(hours=2),
        )
        leads_only = notification_send(
            event="gate.ready", subject="s", body="b", link="/programs/", users=[users["lead"]]
        )
        route = alert_services.alert_route_create(
            actor=users["engineer"],
            matchers={"alertname": "Hang"},
            system=program.candidate_system,
            component=ref["trainer"],
            bug_class=BugClass.objects.get(key="communication-hang"),
        )
        shared = {
            "metrics:detail": {"key": "training-throughput"},
            "metrics:version-new": {"key": "training-throughput"},
            "metrics:ingest": {"key": "training-throughput"},
            "metrics:version-activate": {"key": "training-throughput", "version": 1},
            "metrics:version-deprecate": {"key": "training-throughput", "version": 1},
            "notification-open": {"pk": leads_only.pk},
            "notification-read": {"pk": leads_only.pk},
            "account-token-revoke": {
                "pk": api_token_create(actor=users["lead"], name="pages", scopes=["read"]).token.pk
            },
            "password_reset_confirm": {"uidb64": "MQ", "token": "not-a-token"},
            "freeze:override-review": {"pk": override.pk},
            "freeze:component": {"key": override.component.key},
            **{
                f"incidents:{name}": {"pk": incident.pk}
                for name in ("detail", "edit", "resolve", "checklist")
            },
            **{f"incidents:alert-route-{name}": {"pk": route.pk} for name in ("edit", "delete")},
        }
        kwargs = {key: {**shared, **program_kwargs(programs[key], users)} for key in PROGRAMS}
        kwargs[""] = kwargs["A"]
        exceptions[""] = exceptions["A"]
        yield {
            "users": {role: user.pk for role, user in users.items()},
            "exceptions": {key: {k: e.pk for k, e in them.items()} for key, them in exceptions.items()},
            "kwargs": kwargs,
        }


@pytest.fixture
def users(world, db) -> dict[str, User | None]:
    """The role's users, loaded afresh for each test (no roles cached on them by an earlier one)."""
    by_pk = User.objects.in_bulk(world["users"].values())
    return {"anonymous": None, **{role: by_pk[pk] for role, pk in world["users"].items()}}


def url_for(world: dict, key: str, program: str) -> str:
    if key.startswith("freeze:exception-act["):
        action = key[len("freeze:exception-act[") : -1]
        subject = world["exceptions"][program][ACTION_SUBJECT[action]]
        return reverse("freeze:exception-act", kwargs={"pk": subject, "action": action})
    return reverse(key, kwargs=world["kwargs"][program].get(key))


def statuses_of(user, url: str) -> tuple[int, int]:
    """A GET and a forced POST, each rolled back afterwards, so every cell starts from the same objects
    (the session, made before them, is the test's)."""
    client = Client()
    if user is not None:
        client.force_login(user)
    codes = []
    for method in ("get", "post"):
        with transaction.atomic():
            codes.append(getattr(client, method)(url).status_code)
            transaction.set_rollback(True)
    return codes[0], codes[1]


def cells() -> list[tuple[str, str]]:
    """(key, program): "" for a page of no one program."""
    return sorted(
        (key, program)
        for key, rule in EXPECTED.items()
        for program in (PROGRAMS if isinstance(rule, Each) else ("",))
    )


@pytest.mark.parametrize(("key", "program"), cells())
def test_page_statuses_per_role(world, users, key, program):
    url = url_for(world, key, program)
    expected = expected_rows(key, program)
    mismatches = []
    for role in ROLES:
        got = statuses_of(users[role], url)
        if got != expected[role]:
            mismatches.append(f"{role}: {got}, expected {expected[role]}")
    assert not mismatches, f"{url} (program {program or '-'}), (GET, forced POST)\n" + "\n".join(mismatches)


# Page → the roles that find the private program's rows on it (PRIVATE_MARK in the page).
PRIVATE_LISTED: dict[str, frozenset[str]] = {
    "program:list": PRIVATE_READERS,
    "freeze:list": PRIVATE_READERS,
    "freeze:exceptions": PRIVATE_READERS,
    "webhooks": frozenset({"lead_b", "platform_admin"}),
    # The approval queues: P's exceptions await its lead (and a platform admin); its requester's own.
    "freeze:queues": frozenset({"lead_b", "platform_admin", "engineer"}),
    # My work: as the queues, and the requester's own exceptions. The component's owner team hears of
    # a private program's exceptions only once it is a member of that program.
    "home": frozenset({"lead_b", "platform_admin", "engineer"}),
}


def finds_private(user: User, key: str) -> bool:
    client = Client()
    client.force_login(user)
    response = client.get(reverse(key))
    if response.status_code == 403:  # a page this role may not open lists nothing to them
        return False
    assert response.status_code == 200, f"{user}: GET {key} → {response.status_code}"
    return PRIVATE_MARK in response.content.decode().lower()


SIGNED_IN = ROLES[1:]


@pytest.mark.parametrize("key", sorted(PRIVATE_LISTED))
def test_a_private_program_is_listed_to_its_readers_only(world, users, key):
    found = {role for role in SIGNED_IN if finds_private(users[role], key)}
    assert found == set(PRIVATE_LISTED[key]), key
