"""The in-app inbox through the API: my notifications, marking one or all read.

Paths name the notification; a caller finds it in their own inbox only (someone else's is a 404)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.permissions import RoleRequired, WriteRule
from core.idempotency import IDEMPOTENCY_KEY, idempotent
from core.models import NotificationReceipt
from core.notifications import absolute_link
from core.roles import acting_user
from core.services.inbox import receipt_read, receipts_read_all

# Anyone signed in has an inbox; that it is theirs is the only rule (the queryset keeps to it).
WRITE_RULES = {
    "notification_read": WriteRule("mark notifications read"),
    "notifications_read_all": WriteRule("mark notifications read"),
}


class NotificationOutput(serializers.Serializer[NotificationReceipt]):
    id = serializers.IntegerField(source="notification_id")
    event = serializers.CharField(source="notification.event")
    subject = serializers.CharField(source="notification.subject")
    body = serializers.CharField(source="notification.body")
    link = serializers.CharField(source="notification.link", help_text="Site path of the object.")
    url = serializers.SerializerMethodField(help_text="The link made absolute with SITE_URL.")
    payload = serializers.JSONField(source="notification.payload")
    created_at = serializers.DateTimeField(source="notification.created_at")
    read_at = serializers.DateTimeField(allow_null=True)

    def get_url(self, receipt: NotificationReceipt) -> str:
        return absolute_link(receipt.notification.link)


class ReadAllOutput(serializers.Serializer[dict[str, Any]]):
    marked = serializers.IntegerField(help_text="How many were unread.")


def _mine(user: User) -> QuerySet[NotificationReceipt]:
    return NotificationReceipt.objects.filter(user=user).select_related("notification")


@extend_schema(
    tags=["notifications"],
    summary="List my notifications, newest first",
    parameters=[OpenApiParameter("unread", bool, description="Only unread ones")],
)
class NotificationList(generics.ListAPIView[NotificationReceipt]):
    serializer_class = NotificationOutput
    permission_classes = [RoleRequired]
    queryset = NotificationReceipt.objects.none()  # tells the schema the model; get_queryset answers

    def get_queryset(self) -> QuerySet[NotificationReceipt]:
        queryset = _mine(acting_user(self.request)).order_by("-notification_id")
        if self.request.query_params.get("unread") in ("1", "true"):
            queryset = queryset.filter(read_at__isnull=True)
        return queryset


@extend_schema(tags=["notifications"])
class NotificationRead(APIView):
    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["notification_read"]

    @extend_schema(
        summary="Mark one of my notifications read",
        request=None,
        responses=NotificationOutput,
        parameters=[IDEMPOTENCY_KEY],
    )
    @idempotent
    def post(self, request: Request, pk: int) -> Response:
        receipt = get_object_or_404(_mine(acting_user(request)), notification_id=pk)
        receipt_read(actor=acting_user(request), receipt=receipt)
        receipt.refresh_from_db(fields=["read_at"])
        return Response(NotificationOutput(receipt).data)


@extend_schema(tags=["notifications"])
class NotificationsReadAll(APIView):
    permission_classes = [RoleRequired]
    write_rule = WRITE_RULES["notifications_read_all"]

    @extend_schema(
        summary="Mark all my notifications read",
        request=None,
        responses=ReadAllOutput,
        parameters=[IDEMPOTENCY_KEY],
    )
    @idempotent
    def post(self, request: Request) -> Response:
        return Response({"marked": receipts_read_all(actor=acting_user(request))})
