from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings

from core.models import ApiToken


class TokenForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="To tell it apart later, e.g. “nightly ingest”.")
    scopes = forms.MultipleChoiceField(
        choices=ApiToken.Scope.choices,
        widget=forms.CheckboxSelectMultiple,
        initial=[ApiToken.Scope.READ],
        help_text="Give a script only what it needs.",
    )
    expires_in_days = forms.IntegerField(
        label="Expires in (days)", min_value=1, max_value=settings.API_TOKEN_MAX_DAYS
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["expires_in_days"].initial = settings.API_TOKEN_DAYS
