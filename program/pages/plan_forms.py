"""Forms of the plan pages: advancing, re-planning, actual dates, migration states."""

from __future__ import annotations

from typing import Any

from django import forms

from program.models import WorkloadMigration

DATE = {"type": "date"}


class AdvanceForm(forms.Form):
    reason = forms.CharField(
        required=False,
        max_length=2000,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Goes into the history. Needed when today is more than 7 days off the planned end, "
        "and to shift the plan.",
    )
    shift_plan = forms.BooleanField(
        required=False, label="Shift the later plan by the same days (the dates listed above)"
    )

    def __init__(self, *args: Any, offer_shift: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not offer_shift:  # on plan: there is nothing to shift, so no such box
            del self.fields["shift_plan"]


class ReplanForm(forms.Form):
    planned_start = forms.DateField(widget=forms.DateInput(attrs=DATE))
    planned_end = forms.DateField(widget=forms.DateInput(attrs=DATE))
    reason = forms.CharField(
        max_length=2000, widget=forms.Textarea(attrs={"rows": 2}), help_text="Why the plan changes."
    )
    confirm_overlap_or_gap = forms.BooleanField(
        required=False,
        label="Keep an overlap or a gap",
        help_text="Re-plan even though this phase then overlaps the phase before or after it, or leaves "
        "days with no phase.",
    )


class ActualDatesForm(forms.Form):
    actual_start = forms.DateField(widget=forms.DateInput(attrs=DATE))
    actual_end = forms.DateField(
        required=False, widget=forms.DateInput(attrs=DATE), help_text="Empty while the phase is active."
    )
    reason = forms.CharField(
        max_length=2000,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Why the recorded dates were wrong.",
    )


class MigrationStateForm(forms.Form):
    """Offers only the states the migration may move to from where it is."""

    state = forms.ChoiceField(choices=[])
    reason = forms.CharField(max_length=2000, help_text="Why it moves; shown in the program history.")

    def __init__(self, *args: Any, migration: WorkloadMigration, **kwargs: Any) -> None:
        kwargs.setdefault("prefix", f"m{migration.pk}")
        super().__init__(*args, **kwargs)
        self.migration = migration
        self.moves = [
            (value, label)
            for value, label in WorkloadMigration.State.choices
            if migration.state in WorkloadMigration.TRANSITIONS[value]
        ]
        # The declared field is copied per form; its choices are this migration's moves.
        self.fields["state"] = forms.ChoiceField(choices=self.moves)
