"""Demo users: one per role (docs/architecture.md, "Roles and permissions"), all with the same printed
password."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import Group, Permission, User

from core.models import ApiToken
from core.roles import FRAMEWORK_ENGINEERS, METRIC_OWNERS, PLATFORM_ADMINS, PROGRAM_LEADS
from core.services.api_tokens import api_token_create

DEMO_PASSWORD = "rebuild-demo-2026"
DEMO_TOKEN_NAME = "demo ingest client"
# Teams are groups too; component and workload owners are their members.
TEAMS = ("training-platform", "inference-platform", "data-platform", "infra-hardware")


@dataclass(frozen=True)
class DemoUser:
    username: str
    full_name: str
    role: str
    groups: tuple[str, ...]


DEMO_USERS = (
    DemoUser("lead", "Lena Lead", "program lead", (PROGRAM_LEADS,)),
    DemoUser("lead2", "Liam Second-Lead", "program lead", (PROGRAM_LEADS,)),
    DemoUser("lead3", "Priya Serving-Lead", "lead of the private serving program only", (PROGRAM_LEADS,)),
    DemoUser("platform", "Pat Platform", "platform admin", (PLATFORM_ADMINS,)),
    DemoUser("engineer", "Erin Engineer", "framework engineer", (FRAMEWORK_ENGINEERS,)),
    DemoUser(
        "metrics", "Mo Metrics", "metric owner, may push observations", (METRIC_OWNERS, "data-platform")
    ),
    DemoUser("owner", "Omar Owner", "component owner (training-platform)", ("training-platform",)),
    DemoUser("ingest", "CI Ingest Bot", "ingest client (API token, scope ingest)", ()),
    DemoUser("viewer", "Vera Viewer", "viewer", ()),
)


def demo_users_load() -> dict[str, User]:
    for team in TEAMS:
        Group.objects.get_or_create(name=team)
    users = {}
    for spec in DEMO_USERS:
        first, _, last = spec.full_name.partition(" ")
        user, created = User.objects.get_or_create(
            username=spec.username,
            defaults={"first_name": first, "last_name": last, "email": f"{spec.username}@example.com"},
        )
        if created:
            user.set_password(DEMO_PASSWORD)
            user.save(update_fields=["password"])
        user.groups.add(*(Group.objects.get_or_create(name=name)[0] for name in spec.groups))
        users[spec.username] = user
    # The ingest client pushes from CI; the demo's metric owner uploads on the ingest page.
    push = Permission.objects.filter(content_type__app_label="metrics", codename="add_observation")
    for username in ("ingest", "metrics"):
        users[username].user_permissions.add(*push)
    admin, created = User.objects.get_or_create(
        username="admin", defaults={"is_staff": True, "is_superuser": True, "email": "admin@example.com"}
    )
    if created:
        admin.set_password(DEMO_PASSWORD)
        admin.save(update_fields=["password"])
    users["admin"] = admin
    return users


def demo_ingest_token_replace(ingest: User) -> str:
    """A fresh `ingest`-scoped token for the demo's ingest client, whose secret load_demo prints once.

    Its secret is not stored, so a second load cannot show the first one again: it replaces the token
    instead, so the demo keeps one token of that name however often it is loaded."""
    ApiToken.objects.filter(user=ingest, name=DEMO_TOKEN_NAME).delete()
    made = api_token_create(actor=ingest, name=DEMO_TOKEN_NAME, scopes=[ApiToken.Scope.INGEST])
    return made.secret
