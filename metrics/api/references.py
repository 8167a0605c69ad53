"""Metrics API: systems and workloads, plain CRUD by key."""

from __future__ import annotations

from typing import Any, TypeVar

import django_filters
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, viewsets
from rest_framework.request import Request
from rest_framework.response import Response

from core.api.permissions import RoleRequired
from core.idempotency import IDEMPOTENCY_KEY, idempotent
from metrics import services
from metrics.api.fields import KnownKeyFilter
from metrics.api.write_rules import WRITE_RULES
from metrics.models import System, Workload

_Reference = TypeVar("_Reference", System, Workload)


class SystemOutput(serializers.ModelSerializer[System]):
    class Meta:
        model = System
        fields = ["id", "key", "name", "description"]


class WorkloadOutput(serializers.ModelSerializer[Workload]):
    class Meta:
        model = Workload
        fields = ["id", "key", "name", "size", "criticality", "owner_team"]


class ReferenceViewSet(viewsets.ModelViewSet[_Reference]):
    """Systems and workloads: plain CRUD by key, written by metric owners and program leads."""

    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["reference_write"]
    lookup_field = "key"
    lookup_value_regex = "[-a-zA-Z0-9_]+"  # keys are slugs; anything else (a NUL too) is a 404

    @extend_schema(parameters=[IDEMPOTENCY_KEY])
    @idempotent
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().create(request, *args, **kwargs)

    def perform_destroy(self, instance: _Reference) -> None:
        services.reference_delete(instance=instance)


class SystemFilter(django_filters.FilterSet):  # type: ignore[misc]  # django-filter is untyped; --strict only
    key = KnownKeyFilter(model=System, noun="system")

    class Meta:
        model = System
        fields = ["key"]


@extend_schema(tags=["metrics"])
class SystemViewSet(ReferenceViewSet[System]):
    queryset = System.objects.all()
    serializer_class = SystemOutput
    filterset_class = SystemFilter


@extend_schema(tags=["metrics"])
class WorkloadViewSet(ReferenceViewSet[Workload]):
    queryset = Workload.objects.all()
    serializer_class = WorkloadOutput
    filterset_fields = ["size", "criticality", "owner_team"]
