"""Why a single sign-on failed, in the words the failure page shows (tests assert on these)."""

from __future__ import annotations

STATE_UNKNOWN = (
    "This sign-in answer does not belong to a sign-in started in this browser, or it was already used."
)
STATE_EXPIRED = "This sign-in took too long and has expired."
INCOMPLETE = "The identity provider's answer lacked the sign-in code."
PROVIDER_REFUSED = "The identity provider did not sign you in"
PROVIDER_UNREACHABLE = "The identity provider could not be reached or answered something unexpected."
PROVIDER_ERROR = "The sign-in could not be completed with the identity provider."
NO_USERNAME = "The identity provider sent neither a username nor an email address for you."
BAD_USERNAME = "The identity provider's username for you is not one this site can use"
AMBIGUOUS_USER = "More than one account here matches the username the identity provider sent."
INACTIVE = "Your account here is deactivated. Ask a platform admin to reactivate it."
LOCAL_ADMIN = (
    "This is a local administrator account: it signs in with its password only, never through the "
    "identity provider."
)
SSO_OFF = "Single sign-on is not configured on this site."
LOCAL_LOGIN_OFF = "Password sign-in is turned off on this site: sign in with your organisation's account."


class SignInRefused(Exception):
    """A sign-in the provider completed that this site refuses; the message is shown to the person.

    Not a PermissionDenied: django.contrib.auth.authenticate() would turn that into a silent None."""
