"""Every page URL from the resolver × every role: the status of a GET and of a forced POST.

The table below is the expectation, written out. A new page URL without a row fails
`test_every_page_url_has_a_row`, so nobody adds a page without deciding who may use it.
POSTs carry no data: a role that may act gets past the guard and answers 400 (the empty form is
refused) or 302 (a button action, done or refused with a message on the page it returns to); a role
that may not act gets the 403 page before any input is read. Read-only pages answer POST with 405;
anonymous requests are sent to the login page (302) before anything else."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import transaction
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from core.notifications import notification_send
from core.services.api_tokens import api_token_create
from core.services.webhooks import webhook_endpoint_create
from freeze import services as freeze_services
from incidents import services as incident_services
from incidents.models import BugClass
from metrics.models import Workload
from program import services as program_services
from program.models import Criterion, Gate, Phase
from tests.freeze.factories import draft_exception, freeze_setup, submitted_exception
from tests.program.factories import make_program

ROLES = ("anonymous", "viewer", "engineer", "metric_owner", "component_owner", "ingest", "lead")
# otlp/ is an API (token auth, JSON/protobuf answers), covered by its own receiver tests.
SKIPPED_PREFIXES = ("admin/", "api/", "static/", "otlp/")


def row(statuses: str) -> tuple[int, ...]:
    """'302 200 …' in ROLES order."""
    codes = tuple(int(code) for code in statuses.split())
    assert len(codes) == len(ROLES)
    return codes


READ = (row("302 200 200 200 200 200 200"), row("302 405 405 405 405 405 405"))
LEAD_FORM = (row("302 403 403 403 403 403 200"), row("302 403 403 403 403 403 400"))
ENGINEER_FORM = (row("302 403 200 403 403 403 403"), row("302 403 400 403 403 403 403"))
POST_ONLY = row("302 405 405 405 405 405 405")
OWNER_FORM = (row("302 403 403 200 403 403 403"), row("302 403 403 400 403 403 403"))
# A confirmation page; the POST is the button (done, or refused with a message on the version page).
OWNER_CONFIRM = (row("302 403 403 200 403 403 403"), row("302 403 403 302 403 403 403"))

#                       GET                                    forced POST
EXPECTED: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {
    "home": READ,
    "notifications": READ,
    # Every signed-in person has an inbox; the notification below reached the lead only, so anyone
    # else finds no such notification in theirs (the 404 page) before anything is read or written.
    "notification-open": (POST_ONLY, row("302 404 404 404 404 404 302")),
    "notification-read": (POST_ONLY, row("302 404 404 404 404 404 302")),
    "notifications-read-all": (POST_ONLY, row("302 302 302 302 302 302 302")),
    # Everyone has preferences of their own; the empty form lacks every kind's choice (400).
    "notification-preferences": (row("302 200 200 200 200 200 200"), row("302 400 400 400 400 400 400")),
    # Program leads manage their program's endpoints (core.policies.may_manage_webhooks); the fixture's
    # endpoint is the fixture program's. Reactivating an active one is refused with a message (302).
    "webhooks": LEAD_FORM,
    "webhook-edit": LEAD_FORM,
    "webhook-deactivate": (POST_ONLY, row("302 403 403 403 403 403 302")),
    "webhook-reactivate": (POST_ONLY, row("302 403 403 403 403 403 302")),
    "webhook-delete": (POST_ONLY, row("302 403 403 403 403 403 302")),
    "healthz": (row("200 200 200 200 200 200 200"), row("405 405 405 405 405 405 405")),
    # Prometheus scrapes from this host here (the test client's address); see test_prometheus_metrics.
    "prometheus-metrics": (row("200 200 200 200 200 200 200"), row("405 405 405 405 405 405 405")),
    "login": (row("200 302 302 302 302 302 302"), row("200 302 302 302 302 302 302")),
    "logout": (row("302 405 405 405 405 405 405"), row("302 302 302 302 302 302 302")),
    # Single sign-on is off in the tests' settings (tests/core/sso/ turns it on): both pages say so.
    "oidc_authentication_init": (row("404 404 404 404 404 404 404"), row("405 405 405 405 405 405 405")),
    "oidc_authentication_callback": (row("404 404 404 404 404 404 404"), row("405 405 405 405 405 405 405")),
    # Everyone manages their own tokens; an empty form is a 400. The fixture token is the lead's.
    "account-tokens": (row("302 200 200 200 200 200 200"), row("302 400 400 400 400 400 400")),
    "account-token-revoke": (POST_ONLY, row("302 404 404 404 404 404 302")),
    # Password reset is open to all (a signed-in person may ask too); the link below is not valid.
    "password_reset": (row("200 200 200 200 200 200 200"), row("200 200 200 200 200 200 200")),
    "password_reset_done": (row("200 200 200 200 200 200 200"), row("405 405 405 405 405 405 405")),
    "password_reset_confirm": (row("200 200 200 200 200 200 200"), row("200 200 200 200 200 200 200")),
    "password_reset_complete": (row("200 200 200 200 200 200 200"), row("405 405 405 405 405 405 405")),
    "metrics:registry": READ,
    "metrics:compare": READ,
    "metrics:feeds": READ,
    "metrics:detail": READ,
    "metrics:register": OWNER_FORM,
    "metrics:version-new": OWNER_FORM,
    "metrics:version-activate": OWNER_CONFIRM,
    "metrics:version-deprecate": OWNER_CONFIRM,
    "program:list": READ,
    "program:new": LEAD_FORM,
    "program:detail": READ,
    # The confirmation step; the fixture's exit gate is open, so the lead's POST is refused (409).
    "program:advance": (row("302 403 403 403 403 403 200"), row("302 403 403 403 403 403 409")),
    "program:history": READ,
    "program:phase-dates": (row("302 403 403 403 403 403 200"), row("302 403 403 403 403 403 405")),
    "program:phase-replan": (POST_ONLY, row("302 403 403 403 403 403 400")),
    "program:phase-actual-dates": (POST_ONLY, row("302 403 403 403 403 403 400")),
    # As the API's migration_record rule: program leads and framework engineers.
    "program:migrations": (row("302 403 200 403 403 403 200"), row("302 403 405 403 403 403 405")),
    "program:migration-state": (POST_ONLY, row("302 403 400 403 403 403 400")),
    "program:bind": (POST_ONLY, row("302 403 403 403 403 403 302")),
    # An empty form turns the bar off: the lead's POST succeeds and redirects.
    "program:approval-bar": (POST_ONLY, row("302 403 403 403 403 403 302")),
    "program:gate": READ,
    "program:gate-decide": (POST_ONLY, row("302 403 403 403 403 403 400")),
    "program:gate-evaluate": (POST_ONLY, row("302 403 403 302 403 403 302")),
    "program:gate-reopen": (POST_ONLY, row("302 403 403 403 403 403 400")),
    "program:criterion-attest": (POST_ONLY, row("302 403 403 403 403 403 302")),
    "program:criterion-add": (POST_ONLY, row("302 403 403 403 403 403 400")),
    "program:criterion-edit": (POST_ONLY, row("302 403 403 403 403 403 400")),
    "program:criterion-delete": (POST_ONLY, row("302 403 403 403 403 403 302")),
    "program:criterion-calibration": READ,
    "program:gate-repin": (POST_ONLY, row("302 403 403 403 403 403 302")),
    "freeze:list": READ,
    "freeze:window": READ,
    "freeze:levels": LEAD_FORM,
    "freeze:window-history": READ,
    # No file: the levels page again, the refusal next to the file input (400).
    "freeze:levels-import": (POST_ONLY, row("302 403 403 403 403 403 400")),
    "freeze:queues": READ,
    "freeze:exceptions": READ,
    "freeze:exception-level": READ,
    "freeze:exception-new": ENGINEER_FORM,
    "freeze:exception": READ,
    "freeze:exception-edit": ENGINEER_FORM,
    # The engineer requested these exceptions, so may submit and withdraw but never decide them.
    "freeze:exception-act[submit]": (POST_ONLY, row("302 403 302 403 403 403 403")),
    "freeze:exception-act[approve]": (POST_ONLY, row("302 403 403 403 302 403 302")),
    "freeze:exception-act[reject]": (POST_ONLY, row("302 403 403 403 400 403 400")),
    "freeze:exception-act[withdraw]": (POST_ONLY, row("302 403 302 403 403 403 403")),
    "freeze:exception-act[revoke]": (POST_ONLY, row("302 403 403 403 403 403 400")),
    "incidents:list": READ,
    "incidents:detail": READ,
    # Framework engineers and program leads file and update incidents; the form is on the list page.
    "incidents:new": (row("302 403 405 403 403 403 405"), row("302 403 400 403 403 403 400")),
    "incidents:edit": (row("302 403 405 403 403 403 405"), row("302 403 400 403 403 403 400")),
    "incidents:resolve": (row("302 403 405 403 403 403 405"), row("302 403 302 403 403 403 302")),
    "incidents:checklist": (row("302 403 405 403 403 403 405"), row("302 403 302 403 403 403 302")),
    "freeze:override-new": LEAD_FORM,
    # The fixture override was opened by lead2, so `lead` may review it.
    "freeze:override-review": LEAD_FORM,
    # Members: everyone who reads the program sees them; its leads add (an empty form is a 400) and
    # change or remove one (the lead's own row; no role sent is a 400).
    "program:members": (row("302 200 200 200 200 200 200"), row("302 403 403 403 403 403 400")),
    "program:member": (POST_ONLY, row("302 403 403 403 403 403 400")),
}

# Path parameters from the objects `world` builds; URLs that take several values get one row each.
ACTIONS = ("submit", "approve", "reject", "withdraw", "revoke")
ACTION_SUBJECT = {
    "submit": "draft",
    "approve": "submitted",
    "reject": "submitted",
    "withdraw": "submitted",
    "revoke": "approved",
}


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


@pytest.fixture
def world(lead, lead2, engineer, metric_owner, component_owner, ingest_user, viewer):
    ref = freeze_setup(lead)
    program = ref["program"]
    draft = draft_exception(engineer, ref["trainer"], ref["now"], title="draft")
    submitted = submitted_exception(engineer, ref["trainer"], ref["now"])
    approved = submitted_exception(engineer, ref["trainer"], ref["now"], title="approved")
    freeze_services.exception_approve(actor=component_owner, exception=approved)
    gate = Gate.objects.filter(phase__program=program).order_by("pk").first()
    phase = Phase.objects.get(program=program, status="active")
    migration = program_services.migration_upsert(
        actor=lead, program=program, workload=Workload.objects.get(key="llm-finetune-8b"), wave=0
    )
    make_program(lead2, slug="other")  # lead2 leads a program of their own (roles are per program)
    override = freeze_services.override_open(
        actor=lead2, component=ref["kernels"], reason="hotfix", ends_at=ref["now"] + timedelta(hours=2)
    )
    incident = incident_services.incident_file(
        actor=engineer,
        title="Hang",
        system=program.candidate_system,
        component=ref["trainer"],
        bug_class=BugClass.objects.get(key="communication-hang"),
        severity="sev2",
        opened_at=ref["now"] - timedelta(hours=3),
        detected_at=ref["now"] - timedelta(hours=2),
    )
    leads_only = notification_send(event="gate.ready", subject="s", body="b", link="/programs/", users=[lead])
    hook = webhook_endpoint_create(
        actor=lead, name="chat", url="https://chat.example.com/", program_key=program.slug
    ).endpoint
    users = {
        "anonymous": None,
        "viewer": viewer,
        "engineer": engineer,
        "metric_owner": metric_owner,
        "component_owner": component_owner,
        "ingest": ingest_user,
        "lead": lead,
    }
    return {
        "users": users,
        "exceptions": {"draft": draft, "submitted": submitted, "approved": approved},
        "kwargs": {
            "metrics:detail": {"key": "training-throughput"},
            "metrics:version-new": {"key": "training-throughput"},
            "metrics:version-activate": {"key": "training-throughput", "version": 1},
            "metrics:version-deprecate": {"key": "training-throughput", "version": 1},
            "program:detail": {"slug": program.slug},
            "program:advance": {"slug": program.slug},
            "program:bind": {"slug": program.slug},
            "program:approval-bar": {"slug": program.slug},
            "program:history": {"slug": program.slug},
            "program:migrations": {"slug": program.slug},
            "program:migration-state": {"pk": migration.pk},
            "program:phase-dates": {"pk": phase.pk},
            "program:phase-replan": {"pk": phase.pk},
            "program:phase-actual-dates": {"pk": phase.pk},
            "program:gate": {"pk": gate.pk},
            "program:gate-decide": {"pk": gate.pk},
            "program:gate-evaluate": {"pk": gate.pk},
            "program:gate-reopen": {"pk": gate.pk},
            "program:criterion-add": {"pk": gate.pk},
            "program:criterion-edit": {"pk": gate.criteria.order_by("pk").first().pk},
            "program:criterion-delete": {"pk": gate.criteria.order_by("pk").first().pk},
            "program:criterion-calibration": {"pk": gate.criteria.order_by("pk").first().pk},
            "program:gate-repin": {"pk": gate.pk},
            "program:criterion-attest": {
                "pk": Criterion.objects.filter(gate__phase__program=program, kind="manual").first().pk
            },
            "freeze:window": {"window_id": ref["window"].pk},
            "freeze:window-history": {"window_id": ref["window"].pk},
            "notification-open": {"pk": leads_only.pk},
            "account-token-revoke": {
                "pk": api_token_create(actor=lead, name="pages", scopes=["read"]).token.pk
            },
            "password_reset_confirm": {"uidb64": "MQ", "token": "not-a-token"},
            "notification-read": {"pk": leads_only.pk},
            **{
                name: {"pk": hook.pk}
                for name in ("webhook-edit", "webhook-deactivate", "webhook-reactivate", "webhook-delete")
            },
            "freeze:levels": {"window_id": ref["window"].pk},
            "freeze:levels-import": {"window_id": ref["window"].pk},
            "freeze:exception": {"pk": submitted.pk},
            "freeze:exception-edit": {"pk": submitted.pk},
            "freeze:override-review": {"pk": override.pk},
            **{
                f"incidents:{name}": {"pk": incident.pk}
                for name in ("detail", "edit", "resolve", "checklist")
            },
            "program:members": {"slug": program.slug},
            "program:member": {"slug": program.slug, "pk": program.memberships.get(user=lead).pk},
        },
    }


def url_for(world: dict, key: str) -> str:
    if key.startswith("freeze:exception-act["):
        action = key[len("freeze:exception-act[") : -1]
        subject = world["exceptions"][ACTION_SUBJECT[action]]
        return reverse("freeze:exception-act", kwargs={"pk": subject.pk, "action": action})
    return reverse(key, kwargs=world["kwargs"].get(key))


def status_of(user, method: str, url: str) -> int:
    """One request, rolled back afterwards, so every cell starts from the same objects."""
    client = Client()
    if user is not None:
        client.force_login(user)
    with transaction.atomic():
        response = getattr(client, method)(url)
        transaction.set_rollback(True)
    return response.status_code


@pytest.mark.parametrize("key", sorted(EXPECTED))
def test_page_statuses_per_role(world, key):
    url = url_for(world, key)
    users = world["users"]
    got = {role: (status_of(users[role], "get", url), status_of(users[role], "post", url)) for role in ROLES}
    get, post = EXPECTED[key]
    expected = {role: (get[i], post[i]) for i, role in enumerate(ROLES)}
    assert got == expected, f"{url}: (GET, forced POST) per role"
