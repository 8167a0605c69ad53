"""core.sso.checks: single sign-on settings that could only fail at a sign-in are reported at start-up."""

from __future__ import annotations

from core.sso.checks import sso_settings_check


def ids(settings) -> list[str]:
    return [message.id for message in sso_settings_check()]


def test_the_default_settings_pass(settings):
    assert ids(settings) == []


def test_a_mapping_naming_no_role_is_an_error(settings):
    settings.OIDC_ROLE_GROUPS = {"program-lead": ("rt-leads",)}
    [message] = sso_settings_check()
    assert message.id == "sso.E001"
    assert "program-lead" in message.msg


def test_a_client_without_a_provider_or_a_secret_is_an_error(settings):
    settings.OIDC_RP_CLIENT_ID = "rebuild-tracker"
    assert ids(settings) == ["sso.E002"]
    settings.OIDC_OP_DISCOVERY_URL = "https://idp.example/.well-known/openid-configuration"
    assert ids(settings) == ["sso.E003"]


def test_explicit_endpoints_must_all_be_set(settings):
    settings.OIDC_RP_CLIENT_ID = "rebuild-tracker"
    settings.OIDC_RP_CLIENT_SECRET = "secret"
    settings.OIDC_OP_AUTHORIZATION_ENDPOINT = "https://idp.example/authorize"
    assert ids(settings) == ["sso.E004"]
