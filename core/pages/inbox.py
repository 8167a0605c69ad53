"""The in-app inbox: a to-do list first (notices that ask for an action not yet taken, grouped:
"3 exceptions awaiting your approval"), then the other notices newest first, neighbours of one kind
folded together; opening one, marking one or all read.

URLs name the notification; each person finds it in their own inbox only (someone else's is a 404)."""

from __future__ import annotations

from django.contrib import messages
from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST

from core.inbox_groups import TO_DO, by_event, runs_of_event
from core.models import NotificationReceipt
from core.roles import acting_user
from core.services.inbox import receipt_read, receipts_read_all

PAGE_SIZE = 20


def _mine(request: HttpRequest) -> QuerySet[NotificationReceipt]:
    return NotificationReceipt.objects.filter(user=acting_user(request)).select_related("notification")


def _local(request: HttpRequest, url: str) -> str | None:
    """The URL if it stays on this site (a `next` field or a stored link), else None."""
    if url and url_has_allowed_host_and_scheme(url, allowed_hosts={request.get_host()}):
        return url
    return None


def _back(request: HttpRequest) -> HttpResponseRedirect:
    return redirect(_local(request, request.POST.get("next", "")) or "notifications")


@require_GET
def notification_list(request: HttpRequest) -> HttpResponse:
    mine = _mine(request).order_by("-notification_id")
    to_do = mine.filter(done_at__isnull=True, notification__event__in=list(TO_DO))
    page = Paginator(mine.exclude(pk__in=to_do.values("pk")), PAGE_SIZE).get_page(request.GET.get("page"))
    return render(
        request,
        "core/notifications.html",
        {"page": page, "to_do": by_event(to_do), "feed": runs_of_event(page.object_list)},
    )


@require_POST
def notification_open(request: HttpRequest, pk: int) -> HttpResponse:
    """Opening a notification marks it read and goes to the object it links to."""
    receipt = get_object_or_404(_mine(request), notification_id=pk)
    receipt_read(actor=acting_user(request), receipt=receipt)
    target = _local(request, receipt.notification.link)
    if target is None:
        messages.info(request, f"“{receipt.notification.subject}” links to no page; marked as read.")
        return redirect("notifications")
    return redirect(target)


@require_POST
def notification_read(request: HttpRequest, pk: int) -> HttpResponse:
    receipt = get_object_or_404(_mine(request), notification_id=pk)
    if receipt_read(actor=acting_user(request), receipt=receipt):
        messages.success(request, f"Marked “{receipt.notification.subject}” as read.")
    else:
        messages.info(request, f"“{receipt.notification.subject}” was read already.")
    return _back(request)


@require_POST
def notifications_read_all(request: HttpRequest) -> HttpResponse:
    count = receipts_read_all(actor=acting_user(request))
    if count:
        messages.success(request, f"Marked {count} notification{'s' if count != 1 else ''} as read.")
    else:
        messages.info(request, "Nothing was unread.")
    return _back(request)
