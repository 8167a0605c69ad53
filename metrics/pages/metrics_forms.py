from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

from django import forms

from metrics.models import ComparedStatistic, MetricDefinition, System, Workload


class RegistryFilterForm(forms.Form):
    owner_team = forms.ChoiceField(required=False)
    status = forms.ChoiceField(required=False, choices=[("", "any status"), *MetricDefinition.Status.choices])

    def __init__(self, *args: Any, teams: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        owner_team = self.fields["owner_team"]
        assert isinstance(owner_team, forms.ChoiceField)
        owner_team.choices = [("", "any team"), *((t, t) for t in teams)]


class ComparisonForm(forms.Form):
    """The comparison page's picker; the API's validation runs on the same values."""

    metric = forms.ChoiceField(help_text="Active version unless you pick key@N.")
    baseline = forms.ChoiceField(initial="legacy")
    candidate = forms.ChoiceField(initial="rebuilt")
    workload = forms.ChoiceField(required=False)
    statistic = forms.ChoiceField(
        required=False,
        choices=[("", "definition default"), *ComparedStatistic.choices],
    )
    since = forms.DateTimeField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    until = forms.DateTimeField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    tags = forms.CharField(
        required=False,
        label="Tag filters",
        help_text="key=value[,value…]; more keys with ';' (values of a key: any; keys: all).",
        widget=forms.TextInput(attrs={"placeholder": "severity=sev1,sev2; cluster=a", "class": "mono"}),
    )
    group_by = forms.ChoiceField(required=False, label="Group by", choices=[("", "no grouping")])

    def __init__(self, *args: Any, tag_keys: Iterable[str] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        chosen = self.data.get("group_by") if self.is_bound else None
        keys = sorted({*tag_keys, *([chosen] if chosen else [])})
        cast(forms.ChoiceField, self.fields["group_by"]).choices = [
            ("", "no grouping"),
            *((k, k) for k in keys),
        ]
        # Drafts too: comparing a draft's shadow data is how a new version is tried before activation.
        definitions = MetricDefinition.objects.order_by("key", "-version")
        cast(forms.ChoiceField, self.fields["metric"]).choices = [
            (
                d.key if d.status == "active" else d.ref,
                f"{d.name} ({d.ref}{'' if d.status == 'active' else ', ' + d.status})",
            )
            for d in definitions
        ]
        # The metric page links to the active version by its ref (key@N); the picker lists it by its
        # key, so the link's metric is shown chosen rather than the first option (a trap for "Compare").
        active_refs = {d.ref: d.key for d in definitions if d.status == "active"}
        if self.is_bound and self.data.get("metric") in active_refs:
            data = self.data.copy()  # type: ignore[attr-defined]  # a QueryDict, or a dict in tests
            data["metric"] = active_refs[data["metric"]]
            self.data = data
        systems = [(s.key, s.name) for s in System.objects.all()]
        cast(forms.ChoiceField, self.fields["baseline"]).choices = systems
        cast(forms.ChoiceField, self.fields["candidate"]).choices = systems
        cast(forms.ChoiceField, self.fields["workload"]).choices = [
            ("", "all workloads"),
            *((w.key, w.name) for w in Workload.objects.all()),
        ]
