from __future__ import annotations

from typing import Any

from django import forms

from core.notification_kinds import EVENTS, Kind
from core.webhook_bodies import EXPLAINED, Format

EVERY_PROGRAM = "Every program (and notices about none)"


def event_choices() -> list[tuple[str, list[tuple[str, str]]]]:
    return [
        ("Kinds of notice", list(Kind.choices)),
        ("Single events", [(name, name) for name in EVENTS]),
    ]


class WebhookForm(forms.Form):
    """Create and edit. `programs` is the (key, name) list of the scopes this person may manage; "" first
    when they may manage the endpoints that hear every program."""

    name = forms.CharField(max_length=100)
    # Before the URL: which URL to paste depends on it. Its choices are explained beside it (EXPLAINED).
    format = forms.ChoiceField(
        label="Send as",
        choices=Format.choices,
        initial=Format.STANDARD,
        widget=forms.Select(attrs={"aria-describedby": "formats-explained"}),
    )
    url = forms.CharField(label="URL", max_length=200, help_text="https://… the receiver's address")
    program_key = forms.ChoiceField(label="Program", required=False)
    events = forms.MultipleChoiceField(
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="None ticked: everything of the chosen program.",
    )

    def __init__(self, *args: Any, programs: list[tuple[str, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["program_key"]
        assert isinstance(field, forms.ChoiceField)
        field.choices = [(key, name if key else EVERY_PROGRAM) for key, name in programs]
        events = self.fields["events"]
        assert isinstance(events, forms.MultipleChoiceField)
        events.choices = event_choices()

    @staticmethod
    def format_explained() -> list[tuple[str, str]]:
        """(label, what it sends and which URL to paste) per format, for the list beside the select."""
        return [(Format(value).label, EXPLAINED[Format(value)]) for value in Format.values]
