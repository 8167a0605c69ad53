"""POST /api/v1/incidents/alertmanager/: Alertmanager's webhook receiver (payload version 4).

Alertmanager authenticates with a token of scope `alerts` (its receiver's http_config
authorization), whose user must be allowed to file incidents. A malformed envelope (not version 4,
`alerts` not a list, …) is a 400 naming the field and writes nothing. An alert that cannot be used is
answered "refused" in the 200's body (field `alerts.1.startsAt` and reason) while the others are written:
Alertmanager drops a notification answered 4xx, with all its alerts (it retries only 5xx), and ignores
the body of a 200.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.utils import timezone
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.errors import flatten_errors
from core.api.permissions import RoleRequired, WriteRule
from core.roles import FRAMEWORK_ENGINEERS, PROGRAM_LEADS, acting_user
from incidents.services import alerts

WRITE_RULE = WriteRule(alerts.RECEIVE_ACTION, (FRAMEWORK_ENGINEERS, PROGRAM_LEADS))


class AlertTimeField(serializers.DateTimeField):
    """Alertmanager writes Go's zero time (0001-01-01T00:00:00Z) for "not ended": that is no time."""

    def to_internal_value(self, value: Any) -> datetime | None:  # type: ignore[override]
        if isinstance(value, str) and value.startswith("0001-01-01"):
            return None
        return super().to_internal_value(value)


class AlertInput(serializers.Serializer[dict[str, Any]]):
    """One alert; the field names are Alertmanager's own (camelCase), as it sends them."""

    status = serializers.ChoiceField(choices=[alerts.FIRING, alerts.RESOLVED])
    labels = serializers.DictField(child=serializers.CharField(allow_blank=True, max_length=1000))
    annotations = serializers.DictField(
        child=serializers.CharField(allow_blank=True, max_length=20000), required=False, default=dict
    )
    startsAt = serializers.DateTimeField()
    endsAt = AlertTimeField(required=False, allow_null=True, default=None)
    generatorURL = serializers.CharField(required=False, allow_blank=True, default="", max_length=4000)
    fingerprint = serializers.RegexField(r"^[0-9a-f]{1,64}$", help_text="Alertmanager's hex fingerprint.")

    def validate_labels(self, labels: dict[str, str]) -> dict[str, str]:
        bad = next((name for name in labels if not alerts.label_name_ok(name)), None)
        if bad is not None:
            raise serializers.ValidationError(f"{bad!r} is not a label name.")
        return labels

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs["status"] == alerts.RESOLVED and attrs["endsAt"] is None:
            raise serializers.ValidationError({"endsAt": "A resolved alert needs its endsAt."})
        return attrs


@extend_schema_field(AlertInput(many=True))
class AlertList(serializers.ListField):
    """A list of anything: each alert is checked on its own (AlertInput, in _alert), so that one unusable
    alert does not refuse the others."""

    child = serializers.JSONField()


class AlertmanagerInput(serializers.Serializer[dict[str, Any]]):
    version = serializers.ChoiceField(choices=["4"], help_text="The webhook payload's version.")
    receiver = serializers.CharField(max_length=200)
    status = serializers.ChoiceField(choices=[alerts.FIRING, alerts.RESOLVED])
    alerts = AlertList()
    groupLabels = serializers.DictField(required=False)
    commonLabels = serializers.DictField(required=False)
    commonAnnotations = serializers.DictField(required=False)
    externalURL = serializers.CharField(required=False, allow_blank=True)
    groupKey = serializers.CharField(required=False, allow_blank=True)
    truncatedAlerts = serializers.IntegerField(required=False, min_value=0)


class AlertOutcomeOutput(serializers.Serializer[alerts.AlertOutcome]):
    fingerprint = serializers.CharField()
    outcome = serializers.CharField(
        help_text="opened, attached, refired, mitigated, replayed, unrouted, ignored or refused"
    )
    incident = serializers.IntegerField(allow_null=True)
    field = serializers.CharField(help_text="What a refused alert got wrong, e.g. alerts.1.startsAt.")
    reason = serializers.CharField(help_text="Why the alert was refused.")


def _alert(item: Any) -> alerts.Alert | alerts.RefusedAlert:
    data = AlertInput(data=item)
    if not data.is_valid():
        error = flatten_errors(data.errors)[0]
        fingerprint = item.get("fingerprint") if isinstance(item, dict) else None
        return alerts.RefusedAlert(
            fingerprint=fingerprint if isinstance(fingerprint, str) else "",
            field=error["field"] or "",
            reason=error["message"] or "",
        )
    alert = data.validated_data
    return alerts.Alert(
        status=alert["status"],
        fingerprint=alert["fingerprint"],
        starts_at=alert["startsAt"],
        ends_at=alert["endsAt"],
        labels=alert["labels"],
        annotations=alert["annotations"],
        generator_url=alert["generatorURL"],
    )


@extend_schema(
    tags=["incidents"],
    request=AlertmanagerInput,
    responses={200: AlertOutcomeOutput(many=True)},
)
class AlertmanagerWebhook(APIView):
    """Alertmanager's webhook: a firing alert opens (or attaches to) an incident, a resolved one marks
    it mitigated at endsAt, an unusable one is answered "refused". Sending the same notification again
    changes nothing."""

    permission_classes = [RoleRequired]
    write_rule = WRITE_RULE
    token_scope = "alerts"

    def post(self, request: Request) -> Response:
        data = AlertmanagerInput(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        outcomes = alerts.alert_receive(
            actor=acting_user(request),
            receiver=values["receiver"],
            alerts=[_alert(item) for item in values["alerts"]],
            now=timezone.now(),
        )
        return Response(AlertOutcomeOutput(outcomes, many=True).data)  # type: ignore[arg-type]
