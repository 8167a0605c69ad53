from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Any

from django import forms
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import UploadedFile
from django.utils import timezone
from django.utils.datastructures import MultiValueDict

from freeze.models import Component, ExpectedImpact, FreezeException, FreezeWindow, Level
from metrics.models import MetricDefinition

# A browser's own time picker (type=time, datetime-local) follows the viewer's locale and shows 12-hour
# AM/PM clocks in en-US; times here are UTC and 24-hour, so the time is a text box that only takes HH:MM.
TIME_24H = {
    "pattern": "([01][0-9]|2[0-3]):[0-5][0-9]",
    "placeholder": "HH:MM",
    "inputmode": "numeric",
    "size": "5",
    "maxlength": "5",
    "title": "24-hour time, UTC, e.g. 14:30",
    "aria-label": "Time (UTC, 24-hour)",  # the fieldset's legend names the moment; each box says its part
}


class UtcDateTimeWidget(forms.MultiWidget):
    """A date picker (no clock) and a 24-hour HH:MM text box, both UTC, read back as one value.

    A client that posts the single field (`change_starts_at=2026-05-01T14:30`, as before) still works."""

    def __init__(self) -> None:
        super().__init__(
            [
                forms.DateInput(attrs={"type": "date", "aria-label": "Date (UTC)"}, format="%Y-%m-%d"),
                forms.TextInput(attrs=TIME_24H),
            ]
        )

    def decompress(self, value: Any) -> list[date | str | None]:
        if isinstance(value, datetime):
            # Bound forms hand over the value already in the current time zone (UTC), naive.
            value = timezone.localtime(value, UTC) if timezone.is_aware(value) else value
            return [value.date(), value.strftime("%H:%M")]
        if isinstance(value, str) and value:
            date, _, time = value.replace("T", " ").partition(" ")
            return [date, time[:5]]
        return [None, None]

    # Any, not MultiWidget's list: the single posted field, or the two parts joined.
    def value_from_datadict(
        self, data: Mapping[str, Any], files: MultiValueDict[str, UploadedFile], name: str
    ) -> Any:
        if name in data:
            return data[name]
        date, time = super().value_from_datadict(data, files, name)
        return f"{date or ''} {time or ''}".strip() or None

    def value_omitted_from_data(
        self, data: Mapping[str, Any], files: MultiValueDict[str, UploadedFile], name: str
    ) -> bool:
        return name not in data and super().value_omitted_from_data(data, files, name)


class UtcDateTimeField(forms.DateTimeField):
    widget = UtcDateTimeWidget
    default_error_messages = {"invalid": "Enter a date and a 24-hour UTC time as HH:MM, e.g. 14:30."}


# ModelChoiceField is generic only in django-stubs: at run time it cannot be subscripted.
if TYPE_CHECKING:
    _ComponentChoiceBase = forms.ModelChoiceField[Component]
else:
    _ComponentChoiceBase = forms.ModelChoiceField


class ComponentChoiceField(_ComponentChoiceBase):
    """Each option says the component's level in force now, so a frozen or open one is seen before
    the form is filled in (`levels` is set by the form: one query for every component)."""

    levels: dict[int, str] = {}

    def label_from_instance(self, obj: Component) -> str:
        level = self.levels.get(obj.pk)
        return f"{obj.name} ({obj.key}) — {obj.owner_team}" + (f" · {level} now" if level else "")


class ExceptionForm(forms.Form):
    component = ComponentChoiceField(
        queryset=Component.objects.all(),
        to_field_name="key",
        help_text="The component that changes during the freeze.",
    )
    window = forms.ModelChoiceField(
        queryset=FreezeWindow.objects.select_related("program"),
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
        help_text="High risk needs two approvers, one of them a program lead. Medium risk near a gate's due "
        "date or in the frontier sprint may need one more and a program lead (the program's approval bar).",
    )
    rollback_plan = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="How to undo it, who does it, and how long it takes.",
    )
    change_starts_at = UtcDateTimeField(
        label="Change starts (UTC)", help_text="Date, then 24-hour time (HH:MM) in UTC."
    )
    change_ends_at = UtcDateTimeField(
        label="Change ends (UTC)",
        help_text="Date, then 24-hour time (HH:MM) in UTC. The exception stops allowing the change at this moment.",
    )

    affected_metrics = forms.MultipleChoiceField(
        required=False,
        widget=forms.CheckboxSelectMultiple,
        label="Gate metrics it may affect",
        help_text="Gates using these metrics re-evaluate when the exception is approved, revoked or expires.",
    )
    expected_impacts = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3, "placeholder": "step-time worse 5"}),
        label="Expected impact",
        help_text="One line per gate metric ticked above: its key, better / worse / unchanged, and the size "
        "in % — “step-time worse 5” (5 % worse), “training-throughput unchanged 2” (within ± 2 %). Each "
        "ticked metric needs one before submission; after the change window the exception page sets what "
        "happened beside it.",
    )

    def __init__(self, *args: Any, levels: dict[int, str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        component = self.fields["component"]
        metrics = self.fields["affected_metrics"]
        assert isinstance(component, ComponentChoiceField) and isinstance(metrics, forms.MultipleChoiceField)
        component.levels = levels or {}
        metrics.choices = [
            (d.key, f"{d.name} ({d.key})")
            for d in MetricDefinition.objects.filter(status=MetricDefinition.Status.ACTIVE).order_by("key")
        ]
        self.fields["rollback_plan"].label = "Rollback plan"

    def clean_expected_impacts(self) -> list[dict[str, Any]]:
        """Lines of "key direction size" as the service's entries; the service checks their values."""
        entries = []
        for number, line in enumerate(self.cleaned_data["expected_impacts"].splitlines(), start=1):
            parts = line.replace("%", " ").split()
            if not parts:
                continue
            try:
                key, direction, size = parts
                entries.append({"metric": key, "direction": direction, "size_pct": float(size)})
            except ValueError:
                raise forms.ValidationError(
                    f"Line {number}: write the metric key, better / worse / unchanged, and a size in %, "
                    "e.g. “step-time worse 5”."
                ) from None
        return entries


def expected_impacts_text(impacts: Iterable[ExpectedImpact]) -> str:
    """The inverse of ExceptionForm.clean_expected_impacts: what the edit form's box shows."""
    return "\n".join(f"{i.metric.key} {i.direction} {i.size_pct:g}" for i in impacts)


class ExceptionFilterForm(forms.Form):
    """The all-exceptions page's filters (GET). Status is the effective status."""

    status = forms.ChoiceField(choices=[("", "any status"), *FreezeException.Status.choices], required=False)
    component = forms.ModelChoiceField(
        queryset=Component.objects.all(), to_field_name="key", required=False, empty_label="any component"
    )
    risk = forms.ChoiceField(choices=[("", "any risk"), *FreezeException.Risk.choices], required=False)
    window = forms.ModelChoiceField(
        queryset=FreezeWindow.objects.all(), required=False, empty_label="any window"
    )
    requester = forms.ModelChoiceField(
        queryset=get_user_model()
        .objects.filter(pk__in=FreezeException.objects.values("requester"))
        .order_by("username"),
        to_field_name="username",
        required=False,
        empty_label="anyone",
    )


class DecisionForm(forms.Form):
    comment = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 2}), help_text="Required to reject or revoke."
    )


def levels_form_class(rows: list[dict[str, Any]], default_level: str) -> type[forms.Form]:
    """One select per component, named by its key; the window's default is marked in each."""
    choices = [
        (value, f"{label} (window default)" if value == default_level else label)
        for value, label in Level.choices
    ]
    fields: dict[str, forms.Field] = {
        row["component"].key: forms.ChoiceField(choices=choices, label=row["component"].name) for row in rows
    }
    fields["reason"] = forms.CharField(
        required=False, help_text="Why these levels change (kept in the history)."
    )
    return type("LevelsForm", (forms.Form,), fields)
