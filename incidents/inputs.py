"""The fields of an incident as the API, the CSV import and the page take them."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from core.api.serializers import IdRelatedField, KeyRelatedField
from freeze.models import Component
from incidents.models import BugClass, Incident, Severity
from metrics.models import System, Workload


class IncidentInput(serializers.Serializer[dict[str, Any]]):
    title = serializers.CharField(max_length=200)
    system = KeyRelatedField(slug_field="key", queryset=System.objects.all())
    component = KeyRelatedField(slug_field="key", queryset=Component.objects.all())
    workload = KeyRelatedField(
        slug_field="key", queryset=Workload.objects.all(), required=False, allow_null=True
    )
    bug_class = KeyRelatedField(slug_field="key", queryset=BugClass.objects.all())
    severity = serializers.ChoiceField(choices=Severity.choices)
    opened_at = serializers.DateTimeField(help_text="When the failure began.")
    detected_at = serializers.DateTimeField()
    mitigated_at = serializers.DateTimeField(required=False, allow_null=True)
    resolved_at = serializers.DateTimeField(required=False, allow_null=True, help_text="Setting it resolves.")
    troubleshooting = serializers.CharField(required=False, allow_blank=True, max_length=20000)
    done_steps = serializers.ListField(
        child=serializers.IntegerField(min_value=0),
        required=False,
        help_text="Indices (from 0) of the runbook steps done; the rest are not.",
    )
    link = serializers.URLField(required=False, allow_blank=True, max_length=500)
    owner_team = serializers.CharField(required=False, allow_blank=True, max_length=80)
    recurrence_of = IdRelatedField(
        queryset=Incident.objects.all(),
        required=False,
        allow_null=True,
        help_text="The id of an earlier incident of the same root cause (and bug class) this one repeats.",
    )
