"""core.sso.claims: what a provider's claims mean here (pure functions)."""

from __future__ import annotations

import pytest

from core.sso.claims import groups_wanted, parse_role_groups, provider_groups, username_from

MAPPING = {"platform-admins": ("rt-admins",), "program-leads": ("rt-leads", "rt-managers")}


def test_role_groups_parse_pairs_with_several_provider_groups_a_role():
    assert parse_role_groups(" platform-admins=rt-admins, program-leads=rt-leads;rt-managers ,") == MAPPING
    assert parse_role_groups("") == {}


@pytest.mark.parametrize("text", ["platform-admins", "=rt-admins", "platform-admins=", "a=x,a=y"])
def test_role_groups_refuse_a_wrong_shape_naming_it(text):
    with pytest.raises(ValueError, match="OIDC_ROLE_GROUPS"):
        parse_role_groups(text)


def test_username_is_the_configured_claim_else_the_email():
    claims = {"preferred_username": " ana ", "upn": "ana@corp.example", "email": "a@example.com"}
    assert username_from(claims, "preferred_username") == "ana"
    assert username_from(claims, "upn") == "ana@corp.example"
    assert (
        username_from({"preferred_username": "", "email": "a@example.com"}, "preferred_username")
        == "a@example.com"
    )
    assert username_from({"preferred_username": 7}, "preferred_username") == ""


def test_provider_groups_read_lists_strings_and_keycloak_paths():
    assert provider_groups({"groups": ["/platform/sre", "rt-leads", 3, "", "x" * 151]}, "groups") == {
        "platform/sre",
        "rt-leads",
    }
    assert provider_groups({"groups": "rt-leads"}, "groups") == {"rt-leads"}
    assert provider_groups({}, "groups") == frozenset()
    assert provider_groups({"groups": {"rt-leads": True}}, "groups") == frozenset()


def test_every_provider_group_is_a_team_and_mapped_ones_grant_their_role():
    assert groups_wanted(frozenset({"rt-managers", "training-platform"}), MAPPING) == {
        "rt-managers",
        "training-platform",
        "program-leads",
    }
    assert groups_wanted(frozenset(), MAPPING) == frozenset()
