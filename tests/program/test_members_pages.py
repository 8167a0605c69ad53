"""The program's Members page (/programs/<slug>/members/): everyone who may read the program sees its
members; its leads and platform admins add users and groups, change roles and remove members, through
program.services.memberships. Refusals show where they belong; the page's queries do not grow with
the number of members."""

from __future__ import annotations

import html

import pytest
from django.contrib.auth.models import Group
from django.test import Client

from core.models import Transition
from core.roles import PLATFORM_ADMINS
from program.models import ProgramMembership
from program.services.memberships import membership_grant
from tests.conftest import make_user
from tests.program.factories import make_program, metrics_for_template

HTMX = {"HX-Request": "true"}


@pytest.fixture
def program(db, lead):
    metrics_for_template()
    return make_program(lead, slug="alpha")


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def url(program, pk: int | None = None) -> str:
    return f"/programs/{program.slug}/members/" + (f"{pk}/" if pk else "")


def membership(program, user) -> ProgramMembership:
    return ProgramMembership.objects.get(program=program, user=user)


def test_the_program_page_links_to_its_members(program, viewer):
    body = signed_in(viewer).get(f"/programs/{program.slug}/").content.decode()
    assert f'href="{url(program)}"' in body


def test_a_viewer_sees_the_members_and_no_form(program, lead, viewer):
    team = Group.objects.create(name="serving-team")
    membership_grant(actor=lead, program=program, group=team, role="viewer")
    response = signed_in(viewer).get(url(program))
    assert response.status_code == 200
    body = response.content.decode()
    assert 'data-testid="member-user:lead"' in body and 'data-testid="member-group:serving-team"' in body
    assert "<form" not in body.split('id="members-panel"')[1].split("</main>")[0]
    assert "Add a member" not in body and "Change role" not in body and "Remove" not in body
    # A forced POST is refused before any input is read.
    assert signed_in(viewer).post(url(program), {"user": "viewer", "role": "lead"}).status_code == 403
    pk = membership(program, lead).pk
    assert signed_in(viewer).post(url(program, pk), {"remove": "1"}).status_code == 403
    assert ProgramMembership.objects.filter(program=program).count() == 2


def test_a_lead_sees_the_forms(program, lead):
    body = signed_in(lead).get(url(program)).content.decode()
    assert 'data-testid="add-member"' in body and "Change role" in body and "Remove" in body


def test_a_lead_adds_a_user_changes_the_role_and_removes_them(program, lead, engineer):
    client = signed_in(lead)
    added = client.post(url(program), {"user": "engineer", "role": "engineer"}, follow=True)
    assert added.redirect_chain[-1][0] == url(program)
    assert "Added engineer as engineer." in added.content.decode()
    pk = membership(program, engineer).pk
    changed = client.post(url(program, pk), {"role": "viewer"}, follow=True)
    assert "Changed engineer from engineer to viewer." in changed.content.decode()
    assert membership(program, engineer).role == "viewer"
    removed = client.post(url(program, pk), {"remove": "1"}, follow=True)
    assert "Removed engineer (viewer) from Rebuild." in removed.content.decode()
    assert not ProgramMembership.objects.filter(program=program, user=engineer).exists()
    actions = Transition.objects.filter(object_id=program.pk, action__startswith="member_")
    assert sorted(actions.values_list("action", flat=True)) == [
        "member_granted",
        "member_removed",
        "member_role_changed",
    ]


def test_through_htmx_the_panel_comes_back_with_the_message(program, lead, engineer):
    response = signed_in(lead).post(url(program), {"user": "engineer", "role": "engineer"}, headers=HTMX)
    assert response.status_code == 200
    body = response.content.decode()
    assert body.count('id="members-panel"') == 1 and "<html" not in body
    assert 'hx-swap-oob="true"' in body and "Added engineer as engineer." in body
    assert 'data-testid="member-user:engineer"' in body


def test_a_group_is_added_by_name(program, lead):
    Group.objects.create(name="serving-team")
    response = signed_in(lead).post(url(program), {"group": "serving-team", "role": "viewer"}, follow=True)
    assert "Added group serving-team as viewer." in response.content.decode()
    assert ProgramMembership.objects.filter(
        program=program, group__name="serving-team", role="viewer"
    ).exists()


def test_an_unknown_user_is_that_fields_error_and_keeps_what_was_typed(program, lead):
    response = signed_in(lead).post(url(program), {"user": "nobody", "role": "engineer"}, headers=HTMX)
    assert response.status_code == 400
    body = response.content.decode()
    assert 'data-testid="user-error"' in body and "Unknown user “nobody”." in body
    assert 'value="nobody"' in body
    unknown_group = signed_in(lead).post(url(program), {"group": "nope", "role": "viewer"})
    assert unknown_group.status_code == 400
    assert "Unknown group “nope”." in unknown_group.content.decode()


def test_naming_neither_or_both_is_the_services_refusal_on_the_form(program, lead, engineer):
    Group.objects.create(name="serving-team")
    for data in ({"role": "lead"}, {"user": "engineer", "group": "serving-team", "role": "lead"}):
        response = signed_in(lead).post(url(program), data)
        assert response.status_code == 400
        assert "Name either a user or a group" in response.content.decode()
    assert ProgramMembership.objects.filter(program=program).count() == 1


def test_the_last_lead_is_refused_on_its_row(program, lead):
    pk = membership(program, lead).pk
    for data in ({"remove": "1"}, {"role": "viewer"}):
        response = signed_in(lead).post(url(program, pk), data, headers=HTMX)
        assert response.status_code == 409
        body = html.unescape(response.content.decode())
        row = body.split(f'id="member-{pk}"')[1].split("</li>")[0]
        assert 'data-testid="row-error"' in row
        assert "'user:lead' is the last lead of program 'alpha': grant another lead first." in row
    assert membership(program, lead).role == "lead"
    # Without JavaScript: the whole page, with the same refusal.
    page = signed_in(lead).post(url(program, pk), {"remove": "1"})
    assert page.status_code == 409 and "<html" in page.content.decode()


def test_another_programs_lead_may_not_manage_and_a_platform_admin_may(program, lead2, engineer):
    make_program(lead2, slug="beta")
    assert signed_in(lead2).post(url(program), {"user": "engineer", "role": "viewer"}).status_code == 403
    assert "Add a member" not in signed_in(lead2).get(url(program)).content.decode()
    admin = make_user("platform", PLATFORM_ADMINS)
    assert "Add a member" in signed_in(admin).get(url(program)).content.decode()
    assert signed_in(admin).post(url(program), {"user": "engineer", "role": "viewer"}).status_code == 302
    assert membership(program, engineer).role == "viewer"


def test_a_private_programs_members_page_is_a_404_to_a_non_member(program, lead, viewer, lead2):
    program.is_private = True
    program.save(update_fields=["is_private"])
    assert signed_in(viewer).get(url(program)).status_code == 404
    assert signed_in(lead2).post(url(program), {"user": "viewer", "role": "lead"}).status_code == 404
    membership_grant(actor=lead, program=program, user=viewer, role="viewer")
    assert signed_in(viewer).get(url(program)).status_code == 200


def test_a_membership_of_another_program_is_a_404(program, lead, lead2):
    beta = make_program(lead2, slug="beta")
    other = membership(beta, lead2).pk
    assert signed_in(lead).post(url(program, other), {"remove": "1"}).status_code == 404
    assert ProgramMembership.objects.filter(pk=other).exists()


def test_the_page_runs_the_same_queries_for_few_and_many_members(program, lead, django_assert_num_queries):
    """session, user, the lead's groups and program memberships, the program, the unread count, the
    members (users, groups and who granted, joined), the group names for the add form: eight."""
    client = signed_in(lead)
    client.get(url(program))
    with django_assert_num_queries(8) as few:
        client.get(url(program))
    for i in range(12):
        user = make_user(f"member{i}")
        membership_grant(actor=lead, program=program, user=user, role=("engineer", "viewer")[i % 2])
        membership_grant(
            actor=lead, program=program, group=Group.objects.create(name=f"team{i}"), role="viewer"
        )
    with django_assert_num_queries(len(few.captured_queries)):
        body = client.get(url(program)).content.decode()
    assert body.count('class="member-row"') == 25


def test_demoting_the_named_lead_names_the_next_and_the_panel_says_so(program, lead, lead2):
    membership_grant(actor=lead, program=program, user=lead2, role="lead")
    response = signed_in(lead).post(
        url(program, membership(program, lead).pk), {"role": "engineer"}, headers=HTMX
    )
    assert response.status_code == 200
    body = html.unescape(response.content.decode())
    assert "Changed lead from lead to engineer. lead2 is now the program's named lead." in body
    row = body.split('data-testid="member-user:lead2"')[1].split("</li>")[0]
    assert 'data-testid="named-lead"' in row
    assert body.count('data-testid="named-lead"') == 1
