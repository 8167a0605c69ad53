"""The filing and edit forms of the incidents page; they hand cleaned data to the services."""

from __future__ import annotations

from typing import Any

from django import forms

from freeze.models import Component
from incidents.models import BugClass, Incident, Severity
from metrics.models import System, Workload

DATETIME = forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M")


class IncidentForm(forms.Form):
    title = forms.CharField(max_length=200)
    system = forms.ModelChoiceField(System.objects.all(), to_field_name="key")
    component = forms.ModelChoiceField(Component.objects.all(), to_field_name="key")
    workload = forms.ModelChoiceField(Workload.objects.all(), to_field_name="key", required=False)
    bug_class = forms.ModelChoiceField(BugClass.objects.all(), to_field_name="key")
    severity = forms.ChoiceField(choices=Severity.choices)
    opened_at = forms.DateTimeField(widget=DATETIME, help_text="UTC: when the failure began.")
    detected_at = forms.DateTimeField(widget=DATETIME, help_text="UTC")
    mitigated_at = forms.DateTimeField(widget=DATETIME, required=False, help_text="UTC")
    resolved_at = forms.DateTimeField(widget=DATETIME, required=False, help_text="UTC: setting it resolves.")
    troubleshooting = forms.CharField(widget=forms.Textarea(attrs={"rows": 4}), required=False)
    link = forms.URLField(required=False, max_length=500, assume_scheme="https")
    owner_team = forms.CharField(max_length=80, required=False, help_text="Blank: the component's owners.")
    # A number box, not a select of every incident: the id of an earlier one of the same root cause.
    recurrence_of = forms.ModelChoiceField(
        Incident.objects.all(),
        required=False,
        widget=forms.NumberInput(attrs={"min": 1}),
        label="Recurrence of #",
        help_text="The id of an earlier incident of the same root cause (same bug class), if this repeats it.",
    )


class ResolveForm(forms.Form):
    """ "Resolve now", confirmed with the times the person states (defaulting to now): MTTR and MTTD
    evidence is a moment someone said, not the moment a button was clicked."""

    prefix = "resolve"  # beside the edit form's time fields on the same page: ids of its own
    # The service checks these times against ones this form does not have; its messages name them too.
    other_field_labels = {"opened_at": "Opened at", "detected_at": "Detected at"}

    mitigated_at = forms.DateTimeField(
        widget=DATETIME, label="Mitigated at", help_text="UTC: when the impact stopped."
    )
    resolved_at = forms.DateTimeField(
        widget=DATETIME, label="Resolved at", help_text="UTC: when the fix landed."
    )


class ChecklistForm(forms.Form):
    """The runbook steps as checkboxes; the names are the step indices."""

    done_steps = forms.TypedMultipleChoiceField(
        coerce=int, required=False, widget=forms.CheckboxSelectMultiple
    )

    def __init__(self, *args: Any, steps: list[dict[str, Any]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        done_steps = self.fields["done_steps"]
        assert isinstance(done_steps, forms.TypedMultipleChoiceField)
        done_steps.choices = [(i, item["step"]) for i, item in enumerate(steps)]
        self.fields["done_steps"].initial = [i for i, item in enumerate(steps) if item.get("done")]
