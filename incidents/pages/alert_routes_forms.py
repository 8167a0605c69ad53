"""The alert route form: matchers typed as `label=value, label=value`, handed to the route services.

A name or value that holds a comma, `=`, a quote or edge spaces is written in double quotes with JSON's
escapes (`job="train,eval"`), so a route made through the API shows here as text that reads back to the
same matchers when the form is saved, instead of splitting into two."""

from __future__ import annotations

import json
import re
from typing import Any

from django import forms

from freeze.models import Component
from incidents.models import AlertRoute, BugClass, Severity
from metrics.models import System, Workload

MSG_MATCHERS = (
    "Write matchers as label=value, separated by commas (leave blank to match every alert); "
    'put a value that holds a comma in double quotes: job="train,eval".'
)
_QUOTED = r'"(?:[^"\\]|\\.)*"'
# One `name=value` and the comma after it; a bare name stops at `=`, a bare value at a comma.
_PAIR = re.compile(rf'\s*(?P<name>{_QUOTED}|[^,="]*?)\s*=\s*(?P<value>{_QUOTED}|[^,"]*?)\s*(?:,|\Z)')
_PLAIN = re.compile(r'^[^\s,="\\](?:[^,="\\]*[^\s,="\\])?$')


def _text(part: str) -> str:
    return part if _PLAIN.match(part) else json.dumps(part, ensure_ascii=False)


def matchers_text(matchers: dict[str, str]) -> str:
    return ", ".join(f"{_text(name)}={_text(value)}" for name, value in sorted(matchers.items()))


def _part(text: str) -> str:
    return str(json.loads(text)) if text.startswith('"') else text


def matchers_parse(text: str) -> dict[str, str]:
    """The matchers `matchers_text` writes (and people type); ValueError if it is not such a list."""
    matchers: dict[str, str] = {}
    position = 0
    while text[position:].strip(" ,"):
        while text[position] in " ,":
            position += 1
        pair = _PAIR.match(text, position)
        if pair is None:
            raise ValueError(text[position:])
        name = _part(pair["name"])
        if not name:
            raise ValueError(text[position:])
        matchers[name] = _part(pair["value"])
        position = pair.end()
    return matchers


class AlertRouteForm(forms.Form):
    matchers = forms.CharField(
        required=False,
        max_length=2000,
        help_text=(
            "label=value, comma-separated; all must equal the alert's labels. Quote a value with a comma: "
            'job="train,eval". Blank: every alert.'
        ),
        widget=forms.TextInput(attrs={"placeholder": "alertname=NcclAllReduceHang, cluster=rebuilt"}),
    )
    system = forms.ModelChoiceField(System.objects.all(), to_field_name="key")
    component = forms.ModelChoiceField(Component.objects.all(), to_field_name="key")
    workload = forms.ModelChoiceField(Workload.objects.all(), to_field_name="key", required=False)
    bug_class = forms.ModelChoiceField(BugClass.objects.all(), to_field_name="key")
    severity = forms.ChoiceField(
        choices=Severity.choices,
        initial=Severity.SEV3,
        help_text="Unless the alert's own severity label is sev1–sev4.",
    )
    position = forms.IntegerField(
        min_value=0, required=False, help_text="Routes are tried lowest first. Blank: after the others."
    )

    def clean_matchers(self) -> dict[str, str]:
        try:
            return matchers_parse(self.cleaned_data["matchers"])
        except ValueError as error:  # json.JSONDecodeError is one too (a bad escape in quotes)
            raise forms.ValidationError(MSG_MATCHERS) from error

    @classmethod
    def for_route(cls, route: AlertRoute) -> AlertRouteForm:
        initial: dict[str, Any] = {
            "matchers": matchers_text(route.matchers),
            "system": route.system.key,
            "component": route.component.key,
            "workload": route.workload.key if route.workload else None,
            "bug_class": route.bug_class.key,
            "severity": route.severity,
            "position": route.position,
        }
        return cls(initial=initial, prefix=f"route-{route.pk}")
