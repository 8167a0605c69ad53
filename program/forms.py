from __future__ import annotations

from django import forms

from metrics.models import System
from program.blueprints import blueprint_keys
from program.models import Decision


class DecisionForm(forms.Form):
    decision = forms.ChoiceField(choices=Decision.Verdict.choices, widget=forms.RadioSelect)
    note = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="Why — required to waive. The evidence of a fresh evaluation is frozen with the decision.",
    )


class ReopenForm(forms.Form):
    reason = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 2}), help_text="Why the decision is reopened."
    )


class ProgramForm(forms.Form):
    slug = forms.SlugField(
        max_length=80, help_text="Short name used in URLs and the API, e.g. 'frontier-2027'."
    )
    name = forms.CharField(max_length=120)
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))
    start_date = forms.DateField(
        widget=forms.DateInput(attrs={"type": "date"}),
        help_text="Month 1 starts here; phases are planned from it.",
    )
    baseline = forms.ModelChoiceField(
        queryset=System.objects.all(), to_field_name="key", help_text="The old stack."
    )
    candidate = forms.ModelChoiceField(
        queryset=System.objects.all(), to_field_name="key", help_text="The new stack."
    )
    template = forms.ChoiceField(
        choices=[], help_text="Phases, exit gates and suggested criteria to start from."
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["template"].choices = [(key, key) for key in blueprint_keys()]
