"""Single sign-on against a real OpenID provider (oidc-provider on Node): the authorization-code flow with
PKCE, the user made at the first sign-in, groups kept in step at every sign-in, and every failure on a
clear page."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from core.models import Transition
from core.roles import FRAMEWORK_ENGINEERS, PLATFORM_ADMINS, PROGRAM_LEADS, group_names
from core.sso import errors
from core.sso.provider import discovery_forget
from core.sso.services import GROUPS_SYNCED
from tests.conftest import make_user
from tests.core.sso.conftest import PROVIDER_NAME, query_of, says, sign_in, through_provider

pytestmark = pytest.mark.django_db


def signed_in_as(client) -> str:
    return client.get("/api/v1/auth/me/").json().get("username", "")


def test_sign_in_is_the_code_flow_with_pkce_and_lands_on_my_work(client, sso):
    sso.user("alice", email="alice@example.com", preferred_username="alice")
    response = sign_in(client, sso, "alice")
    assert response.status_code == 302
    assert response["Location"] == "/"
    assert signed_in_as(client) == "alice"
    [authorization] = sso.authorizations()
    assert authorization["response_type"] == "code"
    assert authorization["code_challenge_method"] == "S256"
    assert len(authorization["code_challenge"]) == 43  # base64url of a SHA-256
    assert authorization["state"] and authorization["nonce"]
    assert set(authorization["scope"].split()) == {"openid", "email", "profile", "groups"}
    # The provider requires PKCE (server.mjs), and was sent the verifier with the code.
    assert sso.grants() == [{"grant_type": "authorization_code", "code_verifier": True}]
    home = client.get("/")
    assert home.status_code == 200
    assert "My work" in home.content.decode()


def test_first_sign_in_creates_the_user_and_later_ones_update_them(client, sso):
    sso.user("bob", email="bob@example.com", preferred_username="bob", given_name="Bob", family_name="Ng")
    assert not User.objects.filter(username="bob").exists()
    sign_in(client, sso, "bob")
    bob = User.objects.get(username="bob")
    assert (bob.email, bob.first_name, bob.last_name) == ("bob@example.com", "Bob", "Ng")
    assert not bob.has_usable_password()  # signs in through the provider only
    sso.user("bob", email="bob@new.example.com", preferred_username="bob", given_name="Bob", family_name="Ng")
    client.logout()
    sign_in(client, sso, "bob")
    assert User.objects.filter(username__iexact="bob").count() == 1
    assert User.objects.get(username="bob").email == "bob@new.example.com"


def test_username_falls_back_to_the_email_address(client, sso):
    sso.user("carol", email="carol@example.com")
    sign_in(client, sso, "carol")
    assert signed_in_as(client) == "carol@example.com"


def test_a_group_claim_grants_a_role_and_a_later_sign_in_without_it_revokes_it(client, sso):
    sso.user(
        "dana", preferred_username="dana", email="dana@example.com", groups=["rt-leads", "training-platform"]
    )
    sign_in(client, sso, "dana")
    dana = User.objects.get(username="dana")
    # The mapped group grants the role; every provider group is a team of the same name.
    assert group_names(dana) == {PROGRAM_LEADS, "rt-leads", "training-platform"}

    sso.user("dana", preferred_username="dana", email="dana@example.com", groups=["training-platform"])
    client.logout()
    sign_in(client, sso, "dana")
    assert group_names(User.objects.get(username="dana")) == {"training-platform"}

    audit = Transition.objects.filter(object_id=dana.pk, action=GROUPS_SYNCED).order_by("id")
    assert [row.data for row in audit] == [
        {"added": [PROGRAM_LEADS, "rt-leads", "training-platform"], "removed": []},
        {"added": [], "removed": [PROGRAM_LEADS, "rt-leads"]},
    ]
    assert audit[0].reason == f"Signed in through {PROVIDER_NAME}."


def test_no_groups_claim_means_no_groups(client, sso):
    """Keycloak leaves the claim out for a user in no group: every provider-managed group goes."""
    erin = make_user("erin", FRAMEWORK_ENGINEERS, "data-platform")
    erin.set_unusable_password()
    erin.save()
    sso.user("erin", preferred_username="erin")
    sign_in(client, sso, "erin")
    assert group_names(User.objects.get(username="erin")) == frozenset()


def test_local_only_groups_are_neither_added_nor_removed(client, sso, settings):
    settings.OIDC_LOCAL_GROUPS = ["break-glass", PLATFORM_ADMINS]
    make_user("frank", "break-glass", "old-team")
    sso.user("frank", preferred_username="frank", groups=["rt-admins", "new-team"])
    sign_in(client, sso, "frank")
    # rt-admins maps to platform-admins, a local-only group here: the provider cannot grant it.
    assert group_names(User.objects.get(username="frank")) == {"break-glass", "rt-admins", "new-team"}


def test_a_local_administrator_account_cannot_sign_in_through_the_provider(client, sso):
    User.objects.create_superuser("admin", "admin@example.com", "pw-for-break-glass")
    sso.user("admin", preferred_username="admin", groups=["rt-admins"])
    response = sign_in(client, sso, "admin")
    assert response.status_code == 403
    assert says(response, errors.LOCAL_ADMIN)
    assert signed_in_as(client) == ""


def test_a_deactivated_user_is_refused(client, sso):
    User.objects.create_user("gina", is_active=False)
    sso.user("gina", preferred_username="gina")
    response = sign_in(client, sso, "gina")
    assert response.status_code == 403
    assert says(response, errors.INACTIVE)


def test_a_username_this_site_cannot_use_is_refused(client, sso):
    sso.user("hal", preferred_username="hal 9000")
    response = sign_in(client, sso, "hal")
    assert response.status_code == 403
    assert says(response, errors.BAD_USERNAME)
    assert not User.objects.filter(username__startswith="hal").exists()


def _answer_for_another_browser(sso, login: str) -> str:
    """A callback URL the provider issued for a sign-in another browser started."""
    start = Client().get("/oidc/authenticate/")
    return through_provider(sso, start["Location"], login)


def test_a_state_this_browser_did_not_start_is_refused_with_a_clear_page(client, sso):
    sso.user("ivan", preferred_username="ivan")
    client.get("/oidc/authenticate/")  # this browser has a state of its own, just not this one
    response = client.get(_answer_for_another_browser(sso, "ivan"))
    assert response.status_code == 400
    assert says(response, errors.STATE_UNKNOWN)
    assert 'href="/oidc/authenticate/">Try again' in response.content.decode()
    assert not User.objects.filter(username="ivan").exists()
    assert sso.grants() == []  # refused before the code was ever exchanged


def test_a_forged_or_missing_state_is_refused(client, sso):
    for query in ("?code=abc&state=forged", "?code=abc", ""):
        response = client.get(f"/oidc/callback/{query}")
        assert response.status_code == 400
        assert says(response, errors.STATE_UNKNOWN)


def test_an_expired_state_is_refused_with_a_clear_page(client, sso, settings):
    sso.user("judy", preferred_username="judy")
    start = client.get("/oidc/authenticate/")
    back = through_provider(sso, start["Location"], "judy")
    session = client.session
    session["oidc_states"][query_of(back)["state"]]["added_on"] -= settings.OIDC_STATE_MAX_AGE + 1
    session.save()
    response = client.get(back)
    assert response.status_code == 400
    assert says(response, errors.STATE_EXPIRED)
    assert signed_in_as(client) == ""
    # Spent: the same answer again is no longer this browser's.
    assert says(client.get(back), errors.STATE_UNKNOWN)


def test_a_callback_replayed_after_sign_in_is_refused(client, sso):
    sso.user("kim", preferred_username="kim")
    start = client.get("/oidc/authenticate/")
    back = through_provider(sso, start["Location"], "kim")
    assert client.get(back).status_code == 302
    again = client.get(back)
    assert again.status_code == 400
    assert says(again, errors.STATE_UNKNOWN)


def test_cancelling_at_the_provider_lands_on_a_clear_page(client, sso):
    sso.user("liam", preferred_username="liam")
    response = sign_in(client, sso, "liam", abort=True)
    assert response.status_code == 403
    html = response.content.decode()
    assert f"{errors.PROVIDER_REFUSED}: access_denied." in html
    assert "End-User aborted interaction" in html  # the provider's error_description
    assert 'href="/oidc/authenticate/">Try again' in html
    assert signed_in_as(client) == ""


def test_a_code_the_provider_no_longer_honours_lands_on_a_clear_page(client, sso):
    """The state is fresh but the code was already exchanged (by someone else): the provider answers
    invalid_grant, the tracker a 502 page, not a 500."""
    sso.user("mia", preferred_username="mia")
    start = client.get("/oidc/authenticate/")
    back = through_provider(sso, start["Location"], "mia")
    session = client.session
    state = query_of(back)["state"]
    entry = dict(session["oidc_states"][state])
    assert client.get(back).status_code == 302
    client.logout()
    session = client.session
    session["oidc_states"] = {state: entry}  # the same state again, so only the code is stale
    session.save()
    response = client.get(back)
    assert response.status_code == 502
    assert says(response, errors.PROVIDER_ERROR)


def test_a_provider_out_of_reach_lands_on_a_clear_page(client, sso, settings):
    settings.OIDC_OP_DISCOVERY_URL = "http://127.0.0.1:9/.well-known/openid-configuration"
    discovery_forget()
    response = client.get("/oidc/authenticate/")
    assert response.status_code == 502
    assert says(response, errors.PROVIDER_UNREACHABLE)


def test_sso_signs_in_with_password_sign_in_turned_off(client, sso, settings):
    settings.LOCAL_LOGIN_ENABLED = False
    sso.user("nora", preferred_username="nora", groups=["rt-engineers"])
    assert sign_in(client, sso, "nora")["Location"] == "/"
    assert group_names(User.objects.get(username="nora")) == {"rt-engineers", FRAMEWORK_ENGINEERS}
