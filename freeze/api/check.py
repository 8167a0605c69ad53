"""The freeze check for CI: `GET /api/v1/freeze/check/?component=&at=&program=` — one call, one answer."""

from __future__ import annotations

from typing import Any

from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.plain_json import plain
from core.api.serializers import KeyRelatedField
from core.telemetry.instruments import FREEZE_CHECKS
from freeze import selectors
from freeze.models import Component, FreezeOverride
from program.models import Program

PROGRAM_HELP = "Count only this program's windows (default: every program's)."


class CheckInput(serializers.Serializer[dict[str, Any]]):
    """The query as documented: an unknown component or program is a 400 naming it."""

    component = KeyRelatedField(
        slug_field="key", queryset=Component.objects.all(), help_text="The component's key."
    )
    at = serializers.DateTimeField(required=False, help_text="Default: now.")
    program = KeyRelatedField(
        slug_field="slug", queryset=Program.objects.all(), required=False, help_text=PROGRAM_HELP
    )


class WindowInForceOutput(serializers.Serializer[dict[str, Any]]):
    id = serializers.IntegerField()
    name = serializers.CharField()
    program = serializers.CharField(help_text="The program's slug.")
    level = serializers.CharField(help_text="The component's level in this window.")
    explicit = serializers.BooleanField(help_text="False when the window's default level applies.")
    deciding = serializers.BooleanField(help_text="True for the window whose (strictest) level decided.")
    recurring = serializers.BooleanField()
    starts_at = serializers.DateTimeField(help_text="The span in force: this occurrence, if recurring.")
    ends_at = serializers.DateTimeField()


class OverrideSummaryOutput(serializers.Serializer[dict[str, Any]]):
    id = serializers.IntegerField()
    opened_by = serializers.CharField()
    reason = serializers.CharField()
    starts_at = serializers.DateTimeField()
    ends_at = serializers.DateTimeField()
    review_status = serializers.ChoiceField(choices=["awaiting", "overdue", "reviewed"])


class CheckOutput(serializers.Serializer[dict[str, Any]]):
    component = serializers.CharField()
    at = serializers.DateTimeField()
    program = serializers.CharField(allow_null=True, help_text="The program the check was limited to.")
    decision = serializers.ChoiceField(choices=["allowed", "needs_approval", "forbidden"])
    level = serializers.CharField(help_text="The strictest level in force; open outside every window.")
    window = serializers.DictField(allow_null=True, help_text="The window whose level decided.")
    windows = WindowInForceOutput(many=True, help_text="Every window in force, with the component's level.")
    exception = serializers.DictField(allow_null=True, help_text="The approved exception lifting approval.")
    override = OverrideSummaryOutput(allow_null=True, help_text="The break-glass override in force, if any.")
    reason = serializers.CharField()


def override_as_dict(override: FreezeOverride) -> dict[str, Any]:
    return {
        "id": override.pk,
        "opened_by": override.opened_by.username,
        "reason": override.reason,
        "starts_at": override.starts_at,
        "ends_at": override.ends_at,
        "review_status": override.review_status,
    }


def check_as_dict(check: selectors.FreezeCheck) -> dict[str, Any]:
    deciding = check.deciding
    return {
        "component": check.component.key,
        "at": check.at,
        "program": check.program.slug if check.program else None,
        "decision": check.decision,
        "level": check.level,
        "window": None
        if check.window is None
        else {
            "id": check.window.pk,
            "name": check.window.name,
            "program": check.window.program.slug,
            "starts_at": deciding.starts_at if deciding else check.window.starts_at,
            "ends_at": deciding.ends_at if deciding else check.window.ends_at,
        },
        "windows": [
            {
                "id": w.window.pk,
                "name": w.window.name,
                "program": w.window.program.slug,
                "level": w.level,
                "explicit": w.explicit,
                "deciding": w.window == check.window,
                "recurring": w.window.is_recurring,
                "starts_at": w.starts_at,
                "ends_at": w.ends_at,
            }
            for w in check.windows
        ],
        "exception": None
        if check.exception is None
        else {
            "id": check.exception.pk,
            "title": check.exception.title,
            "valid_until": check.exception.change_ends_at,
        },
        "override": None if check.override is None else override_as_dict(check.override),
        "reason": check.reason,
    }


@extend_schema(tags=["freeze"], parameters=[CheckInput], responses=CheckOutput)
class FreezeCheckView(APIView):
    """May this component change now (or at `at`)? Over every window in force, or one program's:
    the strictest level wins, an approved exception lifts `approval`, nothing lifts `frozen`, and a
    break-glass override allows anything while it lasts. An unknown `component` or `program` is a
    400 naming it."""

    # CI's token needs no more than this (core/api/permissions.py); `read` and `full` cover it too.
    token_scope = "freeze-check"

    def get(self, request: Request) -> Response:
        query = CheckInput(data=request.query_params)
        query.is_valid(raise_exception=True)
        check = selectors.freeze_check(
            query.validated_data["component"],
            query.validated_data.get("at") or timezone.now(),
            query.validated_data.get("program"),
        )
        FREEZE_CHECKS.labels(decision=check.decision).inc()
        return Response(plain(check_as_dict(check)))
