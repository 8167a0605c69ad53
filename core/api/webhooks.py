"""Webhook endpoints through the API: the same services and rule as the page (/account/webhooks/).

A caller sees and acts on the endpoints whose scope core.policies.may_manage_webhooks lets them manage:
writes by anyone else are refused (403) before the body is read; an endpoint's path that names nothing
is a 404. The signing secret is in the creation's answer only (and unused by the slack and teams formats)."""

from __future__ import annotations

from typing import Any, cast

from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import SAFE_METHODS
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.permissions import RoleRequired, WriteRule
from core.api.renderers import SECRET_HEADERS
from core.idempotency import IDEMPOTENCY_KEY, idempotent
from core.models import WebhookEndpoint
from core.policies import (
    MSG_WEBHOOKS,
    may_manage_webhooks,
    webhook_endpoint_visible,
    webhook_scope_check,
    webhook_scopes,
)
from core.programs import program_choices
from core.roles import acting_user
from core.services import webhooks
from core.webhook_bodies import Format

# The scope (a program, or every program) decides, per endpoint: the views check it before the body.
WRITE_RULES = {"webhook_manage": WriteRule("manage webhook endpoints")}


class WebhookOutput(serializers.ModelSerializer[WebhookEndpoint]):
    program_key = serializers.CharField(help_text="The program it hears; blank: every program.")
    events = serializers.ListField(
        child=serializers.CharField(), help_text="Kinds or event names it receives; empty: all."
    )

    class Meta:
        model = WebhookEndpoint
        fields = ["id", "name", "url", "program_key", "events", "format", "is_active"]


class WebhookCreatedOutput(WebhookOutput):
    secret = serializers.CharField(help_text="The signing secret (whsec_…): in this answer only.")

    class Meta(WebhookOutput.Meta):
        fields = [*WebhookOutput.Meta.fields, "secret"]


class WebhookInput(serializers.Serializer[dict[str, Any]]):
    # Types and lengths here; the URL, the program and the event names are checked by the service.
    name = serializers.CharField(max_length=100)
    url = serializers.CharField(max_length=200, help_text="http(s) URL of the receiver.")
    program_key = serializers.CharField(
        max_length=80, required=False, allow_blank=True, help_text="A program's key; blank: every program."
    )
    events = serializers.ListField(
        child=serializers.CharField(max_length=60),
        required=False,
        max_length=50,
        help_text="Kinds (gates, exceptions, overrides, incidents, feeds, other) or event names; empty: all.",
    )
    format = serializers.ChoiceField(
        choices=Format.choices,
        required=False,
        help_text="What it is sent: standard (signed Standard Webhooks JSON, the default), slack (a Slack "
        "incoming-webhook message) or teams (an Adaptive Card for a Teams workflow); the last two unsigned.",
    )


def _refuse_unless_manager(request: Request) -> None:
    if not webhook_scopes(acting_user(request), (key for key, _ in program_choices())):
        raise PermissionDenied(MSG_WEBHOOKS)


@extend_schema(tags=["webhooks"])
class WebhookList(APIView):
    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["webhook_manage"]

    def check_permissions(self, request: Request) -> None:
        super().check_permissions(request)
        if request.method not in SAFE_METHODS:
            _refuse_unless_manager(request)

    @extend_schema(summary="The webhook endpoints I may manage", responses=WebhookOutput(many=True))
    def get(self, request: Request) -> Response:
        user = acting_user(request)
        endpoints = [
            endpoint
            for endpoint in WebhookEndpoint.objects.order_by("program_key", "name", "pk")
            if may_manage_webhooks(user, endpoint.program_key)
        ]
        return Response(WebhookOutput(endpoints, many=True).data)

    @extend_schema(
        summary="Add a webhook endpoint (its secret is in this answer only)",
        request=WebhookInput,
        responses={201: WebhookCreatedOutput},
        parameters=[IDEMPOTENCY_KEY],
    )
    @idempotent
    def post(self, request: Request) -> Response:
        data = WebhookInput(data=request.data)
        data.is_valid(raise_exception=True)
        created = webhooks.webhook_endpoint_create(actor=acting_user(request), **data.validated_data)
        body = {**WebhookOutput(created.endpoint).data, "secret": created.secret}
        return Response(body, status=status.HTTP_201_CREATED, headers=SECRET_HEADERS)


class _OneEndpoint(APIView):
    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["webhook_manage"]
    endpoint: WebhookEndpoint

    def check_permissions(self, request: Request) -> None:
        """Reads and writes alike: 404 for no such endpoint, 403 outside the caller's scopes."""
        super().check_permissions(request)
        self.endpoint = get_object_or_404(WebhookEndpoint, pk=self.kwargs["id"])
        webhook_endpoint_visible(acting_user(request), self.endpoint.program_key)
        webhook_scope_check(acting_user(request), self.endpoint.program_key)


@extend_schema(tags=["webhooks"])
class WebhookDetail(_OneEndpoint):
    @extend_schema(summary="One webhook endpoint", responses=WebhookOutput)
    def get(self, request: Request, id: int) -> Response:
        return Response(WebhookOutput(self.endpoint).data)

    @extend_schema(
        summary="Edit a webhook endpoint", request=WebhookInput(partial=True), responses=WebhookOutput
    )
    def patch(self, request: Request, id: int) -> Response:
        data = WebhookInput(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        webhooks.webhook_endpoint_update(
            actor=acting_user(request),
            endpoint=self.endpoint,
            changes=cast(webhooks.WebhookEndpointChanges, dict(data.validated_data)),
        )
        return Response(WebhookOutput(WebhookEndpoint.objects.get(pk=id)).data)

    @extend_schema(summary="Delete a webhook endpoint and its deliveries", responses={204: None})
    def delete(self, request: Request, id: int) -> Response:
        webhooks.webhook_endpoint_delete(actor=acting_user(request), endpoint=self.endpoint)
        return Response(status=status.HTTP_204_NO_CONTENT)


@extend_schema(tags=["webhooks"])
class WebhookDeactivate(_OneEndpoint):
    @extend_schema(
        summary="Deactivate: no new notices reach it (409 if deactivated already)",
        request=None,
        responses=WebhookOutput,
        parameters=[IDEMPOTENCY_KEY],
    )
    @idempotent
    def post(self, request: Request, id: int) -> Response:
        endpoint = webhooks.webhook_endpoint_deactivate(actor=acting_user(request), endpoint=self.endpoint)
        return Response(WebhookOutput(endpoint).data)


@extend_schema(tags=["webhooks"])
class WebhookReactivate(_OneEndpoint):
    @extend_schema(
        summary="Reactivate (409 if active already)",
        request=None,
        responses=WebhookOutput,
        parameters=[IDEMPOTENCY_KEY],
    )
    @idempotent
    def post(self, request: Request, id: int) -> Response:
        endpoint = webhooks.webhook_endpoint_reactivate(actor=acting_user(request), endpoint=self.endpoint)
        return Response(WebhookOutput(endpoint).data)
