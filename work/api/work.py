""" "My work" through the API: the same five lists as the home page (work.selectors.work), plus the unread count."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.inbox import NotificationOutput
from core.api.permissions import RoleRequired
from core.models import NotificationReceipt
from core.roles import acting_user
from freeze.models import FreezeException
from program.models import Gate
from work.selectors import Section, my_work


class GateItemOutput(serializers.Serializer[Gate]):
    id = serializers.IntegerField()
    name = serializers.CharField()
    status = serializers.CharField()
    stale = serializers.BooleanField()
    due_date = serializers.DateField()
    program = serializers.CharField(source="phase.program.slug")
    phase = serializers.CharField(source="phase.name")
    link = serializers.SerializerMethodField()

    def get_link(self, gate: Gate) -> str:
        return reverse("program:gate", args=[gate.pk])


class ExceptionItemOutput(serializers.Serializer[FreezeException]):
    id = serializers.IntegerField()
    title = serializers.CharField()
    status = serializers.CharField(source="effective_status")
    component = serializers.CharField(source="component.key")
    risk = serializers.CharField()
    change_starts_at = serializers.DateTimeField()
    change_ends_at = serializers.DateTimeField()
    approvals = serializers.IntegerField(source="approval_count")
    required_approvals = serializers.IntegerField()
    link = serializers.SerializerMethodField()

    def get_link(self, exception: FreezeException) -> str:
        return reverse("freeze:exception", args=[exception.pk])


def _section(
    item_serializer: type[serializers.Serializer[Any]],
) -> type[serializers.Serializer[dict[str, Any]]]:
    class SectionOutput(serializers.Serializer[dict[str, Any]]):
        items = item_serializer(many=True)
        more = serializers.BooleanField(help_text="More than these wait; the page or list shows them all.")

    SectionOutput.__name__ = f"{item_serializer.__name__.removesuffix('Output')}SectionOutput"
    return SectionOutput


# One class per item kind: the schema names a component once.
GateSection = _section(GateItemOutput)
ExceptionSection = _section(ExceptionItemOutput)
NotificationSection = _section(NotificationOutput)


class MyWorkOutput(serializers.Serializer[dict[str, Any]]):
    ready_gates = GateSection(help_text="Ready gates a program lead may decide, their own first.")
    exceptions_awaiting = ExceptionSection(help_text="Submitted exceptions I may approve.")
    my_exceptions = ExceptionSection(help_text="My open exceptions.")
    stale_gates = GateSection(help_text="Undecided stale gates in programs I lead.")
    notifications = NotificationSection(help_text="My latest notifications.")
    unread_notifications = serializers.IntegerField()


def _data(section: Section[Any]) -> dict[str, Any]:
    return {"items": section.items, "more": section.more}


@extend_schema(tags=["notifications"])
class MyWorkView(APIView):
    permission_classes = [RoleRequired]

    @extend_schema(summary="What waits for me (the home page's lists)", responses=MyWorkOutput)
    def get(self, request: Request) -> Response:
        work = my_work(acting_user(request))  # RoleRequired: signed in
        unread = NotificationReceipt.objects.filter(user=acting_user(request), read_at__isnull=True).count()
        data = {
            "ready_gates": _data(work.ready_gates),
            "exceptions_awaiting": _data(work.awaiting),
            "my_exceptions": _data(work.my_exceptions),
            "stale_gates": _data(work.stale_gates),
            "notifications": _data(work.notifications),
            "unread_notifications": unread,
        }
        return Response(MyWorkOutput(data).data)
