from __future__ import annotations

from typing import Any

from django import forms

from core.models import NotificationPreference
from core.notification_kinds import EVENTS, Kind


def _examples(kind: Kind) -> str:
    names = [name for name, of in EVENTS.items() if of == kind]
    return ", ".join(names) if names else "anything not listed above"


class PreferencesForm(forms.Form):
    """One required choice per kind of notice; the field names are the kinds."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for kind in Kind:
            self.fields[kind.value] = forms.ChoiceField(
                label=kind.label,
                choices=NotificationPreference.Channel.choices,
                widget=forms.RadioSelect,
                help_text=_examples(kind),
            )
