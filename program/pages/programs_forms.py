from __future__ import annotations

from typing import Any

from django import forms

from metrics.models import MetricDefinition, System, Workload
from program.blueprints import blueprint_keys, blueprint_load, blueprint_slots
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


def _template_choices() -> list[tuple[str, str]]:
    """Read when a form is made: a template file added meanwhile is offered without a restart."""
    return [(key, key) for key in blueprint_keys()]


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
        choices=_template_choices, help_text="Phases, exit gates and suggested criteria to start from."
    )

    SLOT_PREFIX = "slot_"
    UNBOUND = ("", "— leave unbound —")

    def __init__(self, *args: Any, template: str = "rebuild-14m", **kwargs: Any) -> None:
        """One picker per slot of `template`: active metrics or workloads, the suggested key chosen
        when the registry has it. Two queries whatever the number of slots."""
        super().__init__(*args, **kwargs)
        keys = blueprint_keys()
        self.slots = blueprint_slots(blueprint_load(template)) if template in keys else []
        metrics = [
            (d.key, f"{d.key}@{d.version} — {d.name}")
            for d in MetricDefinition.objects.filter(status=MetricDefinition.Status.ACTIVE).order_by("key")
        ]
        workloads = [(w.key, f"{w.key} — {w.name}") for w in Workload.objects.order_by("key")]
        for slot in self.slots:
            choices = metrics if slot.kind == "metric" else workloads
            exists = any(key == slot.suggested for key, _ in choices)
            suggestion = slot.suggested if exists else f"{slot.suggested} (not registered yet)"
            self.fields[self.SLOT_PREFIX + slot.name] = forms.ChoiceField(
                label=f"{slot.name.replace('_', ' ')} ({slot.kind})",
                choices=[self.UNBOUND, *choices],
                required=False,
                initial=slot.suggested if exists else "",
                help_text=f"{slot.description} Suggested: {suggestion}.",
            )

    def slot_fields(self) -> list[forms.BoundField]:
        return [self[self.SLOT_PREFIX + slot.name] for slot in self.slots]

    def plan_fields(self) -> list[forms.BoundField]:
        return [field for field in self if not field.name.startswith(self.SLOT_PREFIX)]

    def service_kwargs(self) -> dict[str, Any]:
        """program_create's arguments; every slot is named, "leave unbound" as None."""
        values = {k: v for k, v in self.cleaned_data.items() if not k.startswith(self.SLOT_PREFIX)}
        values["bindings"] = {
            slot.name: self.cleaned_data.get(self.SLOT_PREFIX + slot.name) or None for slot in self.slots
        }
        return values
