from __future__ import annotations

from django import forms

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
