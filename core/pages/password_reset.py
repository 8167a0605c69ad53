"""Password reset by email, for local accounts: Django's views, the new password set by our service.

Django's PasswordResetView mails a link only to active users with a usable password, so accounts
signed in by single sign-on (no local password) get none; the link is made absolute with SITE_URL,
not with the request's Host header. Setting the new password goes through
core/services/passwords.py `password_reset_confirm`, which checks the link again, writes the audit
row, revokes the user's API tokens and tells the user by email after the commit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import SetPasswordForm
from django.contrib.auth.models import User

from core.services.passwords import password_reset_confirm

if TYPE_CHECKING:
    # Generic in django-stubs only: at run time it cannot be subscripted.
    _SetPasswordForm = SetPasswordForm[User]
else:
    _SetPasswordForm = SetPasswordForm


class ResetSetPasswordForm(_SetPasswordForm):
    def __init__(self, user: User, *args: Any, reset_token: str = "", **kwargs: Any) -> None:
        super().__init__(user, *args, **kwargs)
        self.reset_token = reset_token

    def save(self, commit: bool = True) -> User:
        return password_reset_confirm(
            user=self.user, reset_token=self.reset_token, password=self.cleaned_data["new_password1"]
        )


class PasswordResetView(auth_views.PasswordResetView):
    extra_email_context = {"site_url": settings.SITE_URL}


class PasswordResetConfirmView(auth_views.PasswordResetConfirmView):
    form_class = ResetSetPasswordForm

    def get_form_kwargs(self) -> dict[str, Any]:
        kwargs = super().get_form_kwargs()
        # The link's token, which Django keeps in the session once the link is opened.
        kwargs["reset_token"] = self.request.session.get(auth_views.INTERNAL_RESET_SESSION_TOKEN, "")
        return kwargs
