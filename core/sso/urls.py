"""/oidc/: the start and the callback of the authorization-code flow. The names are mozilla-django-oidc's,
which reverses them itself (the redirect URI is the callback's absolute URL)."""

from django.contrib.auth.decorators import login_not_required
from django.urls import path

from core.sso.pages import SsoCallback, SsoStart

urlpatterns = [
    path("authenticate/", login_not_required(SsoStart.as_view()), name="oidc_authentication_init"),
    path("callback/", login_not_required(SsoCallback.as_view()), name="oidc_authentication_callback"),
]
