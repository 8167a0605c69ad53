"""Page forms of break-glass overrides: open one (24-hour UTC end), review one."""

from __future__ import annotations

from datetime import datetime, timedelta

from django import forms
from django.utils import timezone

from freeze.models import Component

TIME_24H = r"([01][0-9]|2[0-3]):[0-5][0-9]"


class UtcDateTime24Widget(forms.SplitDateTimeWidget):
    """A date picker and a typed 24-hour HH:MM time: browsers show <input type=time> in 12-hour form
    in some locales, which reads wrong under a "UTC" label."""

    def __init__(self) -> None:
        super().__init__(
            date_attrs={"type": "date", "aria-label": "End date (UTC)"},
            time_attrs={
                "pattern": TIME_24H,
                "placeholder": "HH:MM",
                "inputmode": "numeric",
                "size": "5",
                "maxlength": "5",
                "aria-label": "End time (UTC, 24-hour)",
                "title": "24-hour time, e.g. 18:30",
            },
            date_format="%Y-%m-%d",
            time_format="%H:%M",
        )


class OverrideForm(forms.Form):
    component = forms.ModelChoiceField(
        queryset=Component.objects.all(), to_field_name="key", help_text="Whatever its level now."
    )
    reason = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 2}),
        max_length=2000,
        help_text="What is broken and why it cannot wait. The owner team and the leads are told.",
    )
    ends_at = forms.SplitDateTimeField(
        label="Ends at (UTC, 24-hour)",
        widget=UtcDateTime24Widget(),
        help_text="At most 24 hours from now. It starts now.",
        error_messages={"invalid_time": "Enter the time as HH:MM, 24-hour (e.g. 18:30)."},
    )

    @staticmethod
    def default_end() -> datetime:
        return (timezone.now() + timedelta(hours=4)).replace(second=0, microsecond=0)


class ReviewForm(forms.Form):
    review_note = forms.CharField(
        label="Review note",
        widget=forms.Textarea(attrs={"rows": 2}),
        max_length=4000,
        help_text="What was changed, and should it have waited?",
    )
