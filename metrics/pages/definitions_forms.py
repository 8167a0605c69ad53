"""The register and new-version forms: the API's DefinitionInput as a page form.

Only shape is checked here (types, choices, lengths, a unit pint can read, so a typo is named before
the preview); every rule of the registry (bounds, overlap, a duplicate boundary) stays in
metrics.services.definitions, whose refusals are put on the field they name (core.pages.form_submit)."""

from __future__ import annotations

from typing import Any, cast

from django import forms
from django.contrib.auth.models import AnonymousUser, User

from core.roles import ROLE_GROUPS
from metrics.models import Direction, MetricDefinition, Phase, Sampling, Statistic
from metrics.services.definitions import EDITABLE_FIELDS, DefinitionFields
from metrics.units import UnitError, unit_dimension

# The service's editable fields, in its order; `expected_interval` is edited through the API and admin only.
FIELD_ORDER = tuple(field for field in EDITABLE_FIELDS if field != "expected_interval")


class DefinitionFieldsForm(forms.Form):
    name = forms.CharField(max_length=120)
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))
    unit = forms.CharField(
        max_length=40, help_text="A pint unit: ms, s, token/s, percent, GiB, GPU_hour, USD…"
    )
    direction = forms.ChoiceField(choices=Direction.choices)
    statistic = forms.ChoiceField(
        choices=Statistic.choices, initial=Statistic.MEAN, help_text="What comparisons judge by default."
    )
    sampling = forms.ChoiceField(choices=Sampling.choices, help_text="What one observation is.")
    start_event = forms.CharField(
        max_length=200, help_text="When the clock starts, e.g. 'the request arrives'."
    )
    end_event = forms.CharField(max_length=200, help_text="When it stops, e.g. 'the last token is sent'.")
    includes = forms.MultipleChoiceField(
        choices=Phase.choices, required=False, widget=forms.CheckboxSelectMultiple, help_text="Counted in."
    )
    excludes = forms.MultipleChoiceField(
        choices=Phase.choices, required=False, widget=forms.CheckboxSelectMultiple, help_text="Left out."
    )
    owner_team = forms.CharField(max_length=80)
    min_value = forms.FloatField(
        required=False, help_text="Lowest value ingest accepts, in the unit; blank: none."
    )
    max_value = forms.FloatField(required=False, help_text="Highest value ingest accepts; blank: none.")
    otel_name = forms.CharField(
        max_length=255,
        required=False,
        label="OpenTelemetry name",
        help_text="The metric name OTLP pushes use for this metric; blank: the key.",
    )

    def clean_unit(self) -> str:
        unit: str = self.cleaned_data["unit"].strip()
        try:
            unit_dimension(unit)
        except UnitError as exc:
            raise forms.ValidationError(str(exc)) from exc
        return unit

    def definition_data(self) -> DefinitionFields:
        """The cleaned fields as the service takes them (the form's fields are the TypedDict's keys)."""
        return cast(DefinitionFields, {field: self.cleaned_data[field] for field in FIELD_ORDER})


class RegisterForm(DefinitionFieldsForm):
    key = forms.SlugField(
        max_length=80, help_text="Short name for URLs, the API and ingest, e.g. 'step-time'."
    )

    field_order = ("key", *FIELD_ORDER)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields[
            "min_value"
        ].help_text = "Lowest value ingest accepts. Blank: 0 for durations, counts and rates, otherwise none."

    def definition_data(self) -> DefinitionFields:
        data: DefinitionFields = {"key": self.cleaned_data["key"], **super().definition_data()}
        if data["min_value"] is None:
            del data["min_value"]  # the service's default: 0 where a value cannot be negative
        return data


def team_of(user: User | AnonymousUser) -> str:
    """The user's first non-role group, the team a new metric most likely belongs to."""
    teams = sorted(name for name in user.groups.values_list("name", flat=True) if name not in ROLE_GROUPS)
    return teams[0] if teams else ""


def initial_from(definition: MetricDefinition) -> dict[str, Any]:
    return {field: getattr(definition, field) for field in FIELD_ORDER}
