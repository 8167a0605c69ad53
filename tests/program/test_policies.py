"""program.policies and freeze.policies: roles per program (issue 25). A lead of program A may not
act on program B; a platform admin acts on both; a private program is read by its members only."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import Group
from django.core.exceptions import PermissionDenied

from core.models import Transition
from core.roles import PLATFORM_ADMINS
from freeze import policies as freeze_policies
from program import policies
from program.models import Gate, ProgramMembership
from program.services.memberships import membership_grant, membership_remove
from tests.conftest import make_user
from tests.program.factories import make_program, metrics_for_template


@pytest.fixture
def two(db, lead, lead2):
    metrics_for_template()
    return make_program(lead, slug="alpha"), make_program(lead2, slug="beta")


@pytest.fixture
def admin(db):
    return make_user("platform", PLATFORM_ADMINS)


def test_the_creator_leads_the_program_and_no_other(two, lead, lead2):
    alpha, beta = two
    assert policies.is_lead(lead, alpha.pk) and not policies.is_lead(lead, beta.pk)
    assert policies.is_lead(lead2, beta.pk) and not policies.is_lead(lead2, alpha.pk)
    with pytest.raises(
        PermissionDenied,
        match=re.escape("Only a lead of program 'beta' or a platform admin may decide gates."),
    ):
        policies.require_lead(lead, beta, "decide gates")


def test_a_platform_admin_and_a_superuser_lead_everywhere(two, admin):
    root = make_user("root")
    root.is_superuser = True
    for user in (admin, root):
        assert all(policies.is_lead(user, p.pk) for p in two)
        assert policies.may_create_programs(user)


def test_a_group_membership_gives_its_members_the_role_and_the_strongest_role_wins(two, lead, viewer):
    alpha, _ = two
    team = Group.objects.create(name="serving-team")
    viewer.groups.add(team)
    membership_grant(actor=lead, program=alpha, user=viewer, role="viewer")
    membership_grant(actor=lead, program=alpha, group=team, role="lead")
    fresh = type(viewer).objects.get(pk=viewer.pk)
    assert policies.program_role(fresh, alpha.pk) == "lead"


def test_the_member_roles_are_read_once_per_user_object(two, lead, django_assert_num_queries):
    alpha, beta = two
    fresh = type(lead).objects.get(pk=lead.pk)
    with django_assert_num_queries(2):  # its groups (platform admin?) and its memberships, once each
        for _ in range(5):
            policies.is_lead(fresh, alpha.pk)
            policies.is_lead(fresh, beta.pk)


def test_grant_change_and_remove_are_audited_and_the_last_lead_stays(two, lead, lead2, engineer):
    alpha, _ = two
    membership = membership_grant(actor=lead, program=alpha, user=engineer, role="engineer")
    membership_grant(actor=lead, program=alpha, user=engineer, role="viewer")
    membership_remove(actor=lead, membership=ProgramMembership.objects.get(pk=membership.pk))
    actions = list(
        Transition.objects.filter(object_id=alpha.pk, action__startswith="member_").values_list(
            "action", flat=True
        )
    )
    assert sorted(actions) == ["member_granted", "member_removed", "member_role_changed"]
    own = ProgramMembership.objects.get(program=alpha, user=lead)
    with pytest.raises(Exception, match="last lead of program 'alpha'"):
        membership_remove(actor=lead, membership=own)
    with pytest.raises(PermissionDenied):
        membership_grant(actor=lead2, program=alpha, user=lead2, role="lead")


def test_the_named_lead_is_always_a_user_who_leads_the_program(two, lead, lead2, engineer, client):
    """Program.lead (the pages' "lead …", the API's `lead`) follows the memberships: demoting or removing
    the named lead names the user who has led longest after them; with only a team left, it is refused."""
    from program.models import Program
    from program.services.memberships import MSG_NAMED_LEAD

    alpha, _ = two
    membership_grant(actor=lead, program=alpha, user=lead2, role="lead")
    membership_grant(actor=lead, program=alpha, user=engineer, role="lead")
    membership_grant(actor=lead, program=alpha, user=lead, role="viewer")
    assert Program.objects.get(pk=alpha.pk).lead == lead2
    changed = Transition.objects.filter(object_id=alpha.pk, action="member_role_changed").latest("pk")
    assert changed.data == {
        "member": "user:lead",
        "role": "viewer",
        "previous_role": "lead",
        "named_lead": "lead2",
    }
    membership_remove(actor=engineer, membership=ProgramMembership.objects.get(program=alpha, user=lead2))
    assert Program.objects.get(pk=alpha.pk).lead == engineer
    client.force_login(engineer)
    assert "lead engineer" in client.get(f"/programs/{alpha.slug}/").content.decode()

    team = Group.objects.create(name="serving-team")
    membership_grant(actor=engineer, program=alpha, group=team, role="lead")
    own = ProgramMembership.objects.get(program=alpha, user=engineer)
    with pytest.raises(
        Exception, match=re.escape(MSG_NAMED_LEAD.format(member="user:engineer", program="alpha"))
    ):
        membership_remove(actor=engineer, membership=own)
    assert ProgramMembership.objects.filter(pk=own.pk, role="lead").exists()
    assert Program.objects.get(pk=alpha.pk).lead == engineer


def test_the_migration_names_a_user_lead_where_the_named_lead_had_left(two, lead, lead2):
    import importlib

    from django.apps import apps

    from program.models import Program

    named_lead_leads = importlib.import_module("program.migrations.0011_named_lead_leads")
    alpha, beta = two
    membership_grant(actor=lead, program=alpha, user=lead2, role="lead")
    ProgramMembership.objects.filter(program=alpha, user=lead).delete()  # as removals did before
    named_lead_leads.forwards(apps, None)
    assert Program.objects.get(pk=alpha.pk).lead == lead2
    assert Program.objects.get(pk=beta.pk).lead == lead2  # its creator still leads it: unchanged


def test_private_programs_are_read_by_members_and_platform_admins_only(two, lead, lead2, viewer, admin):
    alpha, _ = two
    alpha.is_private = True
    alpha.save(update_fields=["is_private"])
    assert policies.may_read(lead, alpha) and policies.may_read(admin, alpha)
    assert not policies.may_read(lead2, alpha) and not policies.may_read(viewer, alpha)
    assert list(policies.programs_readable(viewer).values_list("slug", flat=True)) == ["beta"]


def test_the_lead_approval_of_an_exception_is_a_lead_of_the_windows_program(two, lead, lead2, admin):
    from freeze.models import FreezeException, FreezeWindow

    alpha, _ = two
    exception = FreezeException(window=FreezeWindow(program=alpha))
    assert freeze_policies.approves_as_lead(lead, exception)
    assert freeze_policies.approves_as_lead(admin, exception)
    assert not freeze_policies.approves_as_lead(lead2, exception)


# --- through the API: every program write, lead of A against B, and the platform admin on both -------


def test_a_lead_of_one_program_gets_403_on_the_others_writes_and_an_admin_acts_on_both(
    two, lead, lead2, admin, as_user
):
    _, beta = two
    gate_b = Gate.objects.filter(phase__program=beta).order_by("pk").first()
    for path in (
        f"/api/v1/gates/{gate_b.pk}/decision/",
        f"/api/v1/gates/{gate_b.pk}/reopen/",
        f"/api/v1/programs/{beta.slug}/advance/",
        f"/api/v1/programs/{beta.slug}/bindings/",
        f"/api/v1/programs/{beta.slug}/members/",
    ):
        refused = as_user(lead).post(path, {}, format="json")
        assert refused.status_code == 403, path
        assert refused.json()["detail"].startswith("Only a lead of program 'beta' or a platform admin may")
        assert as_user(admin).post(path, {}, format="json").status_code != 403, path
        assert as_user(lead2).post(path, {}, format="json").status_code != 403, path
    approval_bar = f"/api/v1/programs/{beta.slug}/approval-bar/"
    assert as_user(lead).put(approval_bar, {"approval_bar_weeks": 2}, format="json").status_code == 403
    assert as_user(admin).put(approval_bar, {"approval_bar_weeks": 2}, format="json").status_code == 200


def test_a_gate_added_to_another_programs_phase_is_refused_by_the_service(two, lead, as_user):
    _, beta = two
    phase = beta.phases.order_by("order").first()
    response = as_user(lead).post(
        "/api/v1/gates/",
        {"phase": phase.pk, "name": "x", "kind": "milestone", "due_date": "2026-03-01"},
        format="json",
    )
    assert response.status_code == 403
    assert "program 'beta'" in response.json()["detail"]


def test_members_through_the_api(two, lead, engineer, viewer, as_user):
    alpha, _ = two
    url = f"/api/v1/programs/{alpha.slug}/members/"
    created = as_user(lead).post(url, {"user": "engineer", "role": "engineer"}, format="json")
    assert created.status_code == 201, created.json()
    assert created.json()["member"] == "user:engineer"
    unknown = as_user(lead).post(url, {"user": "nobody", "role": "lead"}, format="json")
    assert unknown.status_code == 400 and unknown.json()["errors"][0]["field"] == "user"
    neither = as_user(lead).post(url, {"role": "lead"}, format="json")
    assert neither.status_code == 400 and neither.json()["errors"][0]["field"] == "member"
    listed = as_user(viewer).get(url).json()
    assert [m["member"] for m in listed] == ["user:lead", "user:engineer"]
    gone = as_user(lead).delete(f"{url}{created.json()['id']}/")
    assert gone.status_code == 204


def test_a_private_program_is_a_404_to_others_and_missing_from_their_list(two, lead, lead2, as_user):
    alpha, _ = two
    alpha.is_private = True
    alpha.save(update_fields=["is_private"])
    assert as_user(lead2).get(f"/api/v1/programs/{alpha.slug}/").status_code == 404
    assert as_user(lead).get(f"/api/v1/programs/{alpha.slug}/").status_code == 200
    gate = Gate.objects.filter(phase__program=alpha).first()
    assert as_user(lead2).get(f"/api/v1/gates/{gate.pk}/").status_code == 404
    slugs = [p["slug"] for p in as_user(lead2).get("/api/v1/programs/").json()["results"]]
    assert slugs == ["beta"]
    assert as_user(lead2).post(f"/api/v1/gates/{gate.pk}/decision/", {}, format="json").status_code == 404
