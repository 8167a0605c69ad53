from __future__ import annotations

from django import forms

from freeze.models import Component, FreezeException, FreezeWindow, Level


class DateTimeLocalInput(forms.DateTimeInput):
    input_type = "datetime-local"

    def __init__(self, **kwargs):
        super().__init__(format="%Y-%m-%dT%H:%M", **kwargs)


class ComponentChoiceField(forms.ModelChoiceField):
    def label_from_instance(self, obj: Component) -> str:
        return f"{obj.name} ({obj.key}) — {obj.owner_team}"


class ExceptionForm(forms.Form):
    component = ComponentChoiceField(
        queryset=Component.objects.all(),
        to_field_name="key",
        help_text="The component that changes during the freeze.",
    )
    window = forms.ModelChoiceField(
        queryset=FreezeWindow.objects.all(),
        required=False,
        help_text="Leave empty for the window in force when the change starts.",
    )
    title = forms.CharField(
        max_length=160, help_text="One line a reviewer understands, e.g. 'Bump NCCL to 2.23.4'."
    )
    change = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="What changes, concretely: versions, flags, hosts, config keys.",
    )
    justification = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="Why it cannot wait until the freeze ends. What breaks if it waits?",
    )
    risk = forms.ChoiceField(
        choices=FreezeException.Risk.choices,
        help_text="High risk needs two approvers, one of them a program lead.",
    )
    rollback_plan = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="How to undo it, who does it, and how long it takes.",
    )
    change_starts_at = forms.DateTimeField(widget=DateTimeLocalInput(), help_text="UTC")
    change_ends_at = forms.DateTimeField(
        widget=DateTimeLocalInput(), help_text="UTC. The exception stops allowing the change at this moment."
    )


class DecisionForm(forms.Form):
    comment = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 2}), help_text="Required to reject or revoke."
    )


def levels_form_class(rows: list[dict], default_level: str) -> type[forms.Form]:
    """One select per component, named by its key; the window's default is marked in each."""
    choices = [
        (value, f"{label} (window default)" if value == default_level else label)
        for value, label in Level.choices
    ]
    fields = {
        row["component"].key: forms.ChoiceField(choices=choices, label=row["component"].name) for row in rows
    }
    fields["reason"] = forms.CharField(
        required=False, help_text="Why these levels change (kept in the history)."
    )
    return type("LevelsForm", (forms.Form,), fields)
