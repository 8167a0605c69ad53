"""Alert routes: which system, component, workload and bug class an Alertmanager alert's labels mean.
Reads for anyone signed in; writes by framework engineers and program leads (services.alerts)."""

from __future__ import annotations

from typing import Any, cast

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers, status
from rest_framework.filters import BaseFilterBackend
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.permissions import RoleRequired, WriteRule
from core.api.serializers import KeyRelatedField
from core.idempotency import IDEMPOTENCY_KEY, idempotent
from core.roles import FRAMEWORK_ENGINEERS, PROGRAM_LEADS, acting_user
from freeze.models import Component
from incidents.models import AlertRoute, BugClass, Severity
from incidents.services import alerts
from metrics.models import System, Workload

WRITE_RULE = WriteRule(alerts.ROUTE_ACTION, (FRAMEWORK_ENGINEERS, PROGRAM_LEADS))


class AlertRouteInput(serializers.Serializer[dict[str, Any]]):
    position = serializers.IntegerField(
        min_value=0, required=False, help_text="Lower first; left out: after every route."
    )
    matchers = serializers.DictField(
        child=serializers.CharField(allow_blank=True, max_length=1000),
        help_text="Label → value; every one must equal the alert's label. {} matches every alert.",
    )
    system = KeyRelatedField(slug_field="key", queryset=System.objects.all())
    component = KeyRelatedField(slug_field="key", queryset=Component.objects.all())
    workload = KeyRelatedField(
        slug_field="key", queryset=Workload.objects.all(), required=False, allow_null=True
    )
    bug_class = KeyRelatedField(slug_field="key", queryset=BugClass.objects.all())
    severity = serializers.ChoiceField(choices=Severity.choices, required=False)


class AlertRouteOutput(serializers.ModelSerializer[AlertRoute]):
    system = serializers.CharField(source="system.key")
    component = serializers.CharField(source="component.key")
    workload = serializers.CharField(source="workload.key", allow_null=True, default=None)
    bug_class = serializers.CharField(source="bug_class.key")

    class Meta:
        model = AlertRoute
        fields = ["id", "position", "matchers", "system", "component", "workload", "bug_class", "severity"]


def routes() -> QuerySet[AlertRoute]:
    return AlertRoute.objects.select_related("system", "component", "workload", "bug_class")


@extend_schema(tags=["incidents"])
class AlertRouteList(generics.ListAPIView[AlertRoute]):
    """The routes in the order they are tried; POST adds one."""

    serializer_class = AlertRouteOutput
    permission_classes = [RoleRequired]
    write_rule = WRITE_RULE
    pagination_class = None
    filter_backends: list[type[BaseFilterBackend]] = []

    def get_queryset(self) -> QuerySet[AlertRoute]:
        return routes()

    @extend_schema(request=AlertRouteInput, responses={201: AlertRouteOutput}, parameters=[IDEMPOTENCY_KEY])
    @idempotent
    def post(self, request: Request) -> Response:
        data = AlertRouteInput(data=request.data)
        data.is_valid(raise_exception=True)
        route = alerts.alert_route_create(actor=acting_user(request), **data.validated_data)
        return Response(AlertRouteOutput(routes().get(pk=route.pk)).data, status=status.HTTP_201_CREATED)


@extend_schema(tags=["incidents"])
class AlertRouteDetail(APIView):
    """One route; PATCH changes the fields sent, DELETE removes it."""

    permission_classes = [RoleRequired]
    write_rule = WRITE_RULE

    def _route(self) -> AlertRoute:
        return get_object_or_404(routes(), pk=self.kwargs["pk"])

    @extend_schema(responses=AlertRouteOutput)
    def get(self, request: Request, pk: int) -> Response:
        return Response(AlertRouteOutput(self._route()).data)

    @extend_schema(request=AlertRouteInput(partial=True), responses=AlertRouteOutput)
    def patch(self, request: Request, pk: int) -> Response:
        route = self._route()
        data = AlertRouteInput(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        alerts.alert_route_update(
            actor=acting_user(request),
            route=route,
            changes=cast(alerts.RouteChanges, dict(data.validated_data)),
        )
        return Response(AlertRouteOutput(routes().get(pk=pk)).data)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, pk: int) -> Response:
        alerts.alert_route_delete(actor=acting_user(request), route=self._route())
        return Response(status=status.HTTP_204_NO_CONTENT)
