"""The alert route form: matchers typed as `label=value, label=value`, handed to the route services."""

from __future__ import annotations

from typing import Any

from django import forms

from freeze.models import Component
from incidents.models import AlertRoute, BugClass, Severity
from metrics.models import System, Workload

MSG_MATCHERS = "Write matchers as label=value, separated by commas (leave blank to match every alert)."


def matchers_text(matchers: dict[str, str]) -> str:
    return ", ".join(f"{name}={value}" for name, value in sorted(matchers.items()))


class AlertRouteForm(forms.Form):
    matchers = forms.CharField(
        required=False,
        max_length=2000,
        help_text="label=value, comma-separated; all must equal the alert's labels. Blank: every alert.",
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
        text: str = self.cleaned_data["matchers"]
        matchers = {}
        for part in (p.strip() for p in text.split(",")):
            if not part:
                continue
            name, equals, value = part.partition("=")
            if not equals or not name.strip():
                raise forms.ValidationError(MSG_MATCHERS)
            matchers[name.strip()] = value.strip().strip('"')
        return matchers

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
