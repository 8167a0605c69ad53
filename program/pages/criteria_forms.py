"""The gate page's criterion form (add and edit): the same fields as the API, metric as key or key@N.

The metric and workload are typed (with a datalist of suggestions) rather than chosen from a select,
so a page with a form per criterion runs no query per form."""

from __future__ import annotations

from typing import Any, cast

from django import forms
from django.http import QueryDict

from core.errors import ApplicationError
from metrics.models import ComparedStatistic, MetricDefinition, Workload
from metrics.public import definition_resolve, tag_filters_as_text, tag_filters_check, tag_filters_from_text
from program.models import Criterion

METRIC_LIST, WORKLOAD_LIST = "criterion-metrics", "criterion-workloads"


class CriterionForm(forms.Form):
    name = forms.CharField(max_length=200)
    kind = forms.ChoiceField(choices=Criterion.Kind.choices)
    metric = forms.CharField(
        required=False,
        help_text="key (its active version) or key@N; not for manual items.",
        widget=forms.TextInput(attrs={"list": METRIC_LIST, "placeholder": "step-time@2", "class": "mono"}),
    )
    workload = forms.CharField(
        required=False,
        help_text="Empty: every workload.",
        widget=forms.TextInput(attrs={"list": WORKLOAD_LIST, "class": "mono"}),
    )
    statistic = forms.ChoiceField(
        choices=[("", "the metric's own"), *ComparedStatistic.choices], required=False
    )
    operator = forms.ChoiceField(choices=Criterion.Operator.choices, initial="gte")
    threshold = forms.FloatField(
        required=False, help_text="× the baseline (relative), % (improvement) or in the metric's unit."
    )
    window_days = forms.IntegerField(
        required=False, min_value=1, max_value=3650, help_text="Empty: all the data."
    )
    tag_filters = forms.CharField(
        required=False,
        label="Tag filters",
        help_text="Only rows with these tags: key=value[,value…]; more keys with ';'.",
        widget=forms.TextInput(attrs={"placeholder": "severity=sev1,sev2", "class": "mono"}),
    )
    group_by = forms.CharField(
        required=False,
        max_length=64,
        label="Group by tag",
        help_text="Must hold in every group of this tag (the worst decides).",
        widget=forms.TextInput(attrs={"placeholder": "bug_class", "class": "mono"}),
    )
    excluded_metrics = forms.CharField(
        required=False,
        label="Excluded metrics",
        help_text="Every metric only: one 'key: reason' a line; the gate page shows each reason.",
        widget=forms.Textarea(
            attrs={"rows": 2, "placeholder": "checkpoint-save-time: object-store tuning lands in May"}
        ),
    )
    min_samples = forms.IntegerField(min_value=2, max_value=1_000_000, initial=30)
    require_significant = forms.BooleanField(
        required=False, label="The whole interval must clear the threshold"
    )
    required = forms.BooleanField(required=False, initial=True, label="Required (else advisory)")

    def clean_metric(self) -> MetricDefinition | None:
        ref = self.cleaned_data["metric"].strip()
        if not ref:
            return None
        try:
            return definition_resolve(ref)
        except ApplicationError as exc:
            raise forms.ValidationError(exc.message) from None

    def clean_tag_filters(self) -> dict[str, list[str]]:
        try:
            return tag_filters_check(tag_filters_from_text(self.cleaned_data["tag_filters"]))
        except ApplicationError as exc:
            raise forms.ValidationError(exc.message) from None

    def clean_excluded_metrics(self) -> list[dict[str, str]]:
        """'key: reason' lines as the service takes them; the service checks the keys and reasons."""
        excluded = []
        for line in cast(str, self.cleaned_data["excluded_metrics"]).splitlines():
            if not line.strip():
                continue
            key, colon, reason = line.partition(":")
            if not colon:
                raise forms.ValidationError(f"Write 'key: reason' (no reason for '{line.strip()}').")
            excluded.append({"metric": key.strip(), "reason": reason.strip()})
        return excluded

    def clean_group_by(self) -> str:
        return cast(str, self.cleaned_data["group_by"]).strip()  # a CharField cleans to str

    def clean_workload(self) -> Workload | None:
        key = self.cleaned_data["workload"].strip()
        if not key:
            return None
        workload = Workload.objects.filter(key=key).first()
        if workload is None:
            raise forms.ValidationError(f"Unknown workload '{key}'.")
        return workload


def criterion_initial(criterion: Criterion) -> dict[str, Any]:
    """The edit form's starting values: the criterion as it is."""
    return {
        "name": criterion.name,
        "kind": criterion.kind,
        "metric": criterion.metric.ref if criterion.metric else "",
        "workload": criterion.workload.key if criterion.workload else "",
        "statistic": criterion.statistic,
        "operator": criterion.operator,
        "threshold": criterion.threshold,
        "window_days": criterion.window_days,
        "tag_filters": tag_filters_as_text(criterion.tag_filters),
        "group_by": criterion.group_by,
        "excluded_metrics": "\n".join(f"{e['metric']}: {e['reason']}" for e in criterion.excluded_metrics),
        "min_samples": criterion.min_samples,
        "require_significant": criterion.require_significant,
        "required": criterion.required,
    }


def edit_form(criterion: Criterion, data: QueryDict | None = None) -> CriterionForm:
    return CriterionForm(data, initial=criterion_initial(criterion), prefix=f"c{criterion.pk}")


def criterion_choices() -> dict[str, Any]:
    """Suggestions for the typed metric and workload: two queries whatever the number of forms."""
    active = MetricDefinition.objects.filter(status=MetricDefinition.Status.ACTIVE).order_by("key")
    return {
        "metric_suggestions": [f"{key}@{version}" for key, version in active.values_list("key", "version")],
        "workload_suggestions": list(Workload.objects.order_by("key").values_list("key", flat=True)),
        "metric_list": METRIC_LIST,
        "workload_list": WORKLOAD_LIST,
    }
