"""The daily digest: one email per user and day listing the notices of the 24 hours before the digest
hour, for the kinds they chose it for; safe to run twice, also at the same moment."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta

import pytest
from django.core import mail
from django.db import close_old_connections, transaction
from django.test import override_settings
from django.utils import timezone

from core.models import Delivery, Notification, NotificationDigest
from core.notifications import DIGEST_EVENT, digest_period, notification_digests_send, notification_send
from core.services.preferences import notification_preferences_set
from core.tasks import notification_digests_send as digests_task
from tests.conftest import wait_for
from tests.core.test_notifications_worker import worker_runs


@override_settings(NOTIFICATION_DIGEST_HOUR=7)
@pytest.mark.parametrize(
    ("now", "start", "end"),
    [
        # Just after the hour: the 24 h up to it.
        ("2026-03-10T07:00:05Z", "2026-03-09T07:00:00Z", "2026-03-10T07:00:00Z"),
        # Late in the day (a late or repeated run): still the same period.
        ("2026-03-10T23:59:00Z", "2026-03-09T07:00:00Z", "2026-03-10T07:00:00Z"),
        # Before the hour: the period that ended yesterday.
        ("2026-03-10T06:59:59Z", "2026-03-08T07:00:00Z", "2026-03-09T07:00:00Z"),
    ],
)
def test_the_digest_period_ends_at_the_last_digest_hour(now, start, end):
    parse = datetime.fromisoformat
    assert digest_period(parse(now)) == (parse(start), parse(end))


def in_period(notifications: list[Notification], now: datetime, *, hours_before_end: float = 1) -> None:
    """Date the notices inside the period a digest sent at `now` covers."""
    _, end = digest_period(now)
    Notification.objects.filter(pk__in=[n.pk for n in notifications]).update(
        created_at=end - timedelta(hours=hours_before_end)
    )


def three_gate_notices(users) -> list[Notification]:
    return [
        notification_send(
            event="gate.ready", subject=f"Gate {i} ready", body="b", link=f"/programs/gates/{i}/", users=users
        )
        for i in (1, 2, 3)
    ]


@override_settings(SITE_URL="https://tracker.example.com")
def test_one_digest_lists_the_days_notices_with_links(
    db, lead, lead2, mailoutbox, django_capture_on_commit_callbacks
):
    notification_preferences_set(actor=lead, choices={"gates": "digest"})
    now = timezone.now()
    notices = three_gate_notices([lead, lead2])
    in_period(notices, now)
    too_old = notification_send(event="gate.stale", subject="Old news", body="b", users=[lead])
    in_period([too_old], now, hours_before_end=25)
    mailoutbox.clear()  # lead2 chose nothing: three emails at once, and no digest

    with django_capture_on_commit_callbacks(execute=True):
        assert notification_digests_send(now=now) == 1

    assert len(mailoutbox) == 1
    email = mailoutbox[0]
    assert email.to == ["lead@example.com"]
    day = digest_period(now)[1].date()
    assert email.subject == f"[Rebuild Tracker] Daily digest, {day:%Y-%m-%d}: 3 notices"
    for i in (1, 2, 3):
        assert f"Gate {i} ready\n  https://tracker.example.com/programs/gates/{i}/" in email.body
    assert "Old news" not in email.body
    assert "https://tracker.example.com/account/notifications/" in email.body
    digest = NotificationDigest.objects.get()
    assert (digest.user, digest.day, digest.notices) == (lead, day, 3)
    # The digest reaches no inbox and no webhook: the notices are in the inbox already.
    assert not digest.notification.receipts.exists()
    assert list(digest.notification.deliveries.values_list("channel", flat=True)) == ["email"]


def test_a_second_run_sends_nothing_again(db, lead, mailoutbox, django_capture_on_commit_callbacks):
    notification_preferences_set(actor=lead, choices={"gates": "digest"})
    now = timezone.now()
    in_period(three_gate_notices([lead]), now)
    with django_capture_on_commit_callbacks(execute=True):
        assert notification_digests_send(now=now) == 1
        assert notification_digests_send(now=now + timedelta(hours=3)) == 0  # same period, later beat
    assert len(mailoutbox) == 1
    assert Notification.objects.filter(event=DIGEST_EVENT).count() == 1


def test_the_choice_at_sending_time_counts(db, lead, mailoutbox, django_capture_on_commit_callbacks):
    """Emailed at once before switching to the digest: not repeated in it; and the other way round."""
    now = timezone.now()
    emailed = three_gate_notices([lead])
    notification_preferences_set(actor=lead, choices={"gates": "digest"})
    owed = notification_send(event="gate.decided", subject="Decided", body="b", users=[lead])
    notification_preferences_set(actor=lead, choices={"gates": "email"})
    in_period([*emailed, owed], now)
    mailoutbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        notification_digests_send(now=now)
    assert len(mailoutbox) == 1
    assert "1 notice since" in mailoutbox[0].body and "Decided" in mailoutbox[0].body


def test_in_app_only_and_email_users_get_no_digest(db, lead, lead2, engineer):
    notification_preferences_set(actor=lead, choices={"gates": "in_app"})
    now = timezone.now()
    in_period(three_gate_notices([lead, lead2]), now)
    assert notification_digests_send(now=now) == 0
    assert not NotificationDigest.objects.exists()


def test_two_beats_at_once_send_one_digest(transactional_db, lead, mailoutbox):
    notification_preferences_set(actor=lead, choices={"gates": "digest"})
    now = timezone.now()
    in_period(three_gate_notices([lead]), now)
    start = threading.Barrier(2)
    sent: list[int] = []

    def beat() -> None:
        start.wait()
        try:
            sent.append(notification_digests_send(now=now))
        finally:
            close_old_connections()

    threads = [threading.Thread(target=beat) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(sent) == [0, 1]
    assert NotificationDigest.objects.count() == 1
    assert Delivery.objects.filter(notification__event=DIGEST_EVENT).count() == 1


def test_the_digest_runs_on_the_beat_schedule(settings):
    entry = settings.CELERY_BEAT_SCHEDULE["notification-digests-send"]
    assert entry["task"] == "core.tasks.notification_digests_send"
    assert entry["schedule"].hour == {settings.NOTIFICATION_DIGEST_HOUR}
    assert entry["schedule"].minute == {0}


@pytest.mark.services
def test_with_the_real_worker_a_digest_user_gets_one_email_and_an_in_app_user_none(
    celery_worker_real, lead, lead2, engineer
):
    notification_preferences_set(actor=lead, choices={"gates": "digest"})
    notification_preferences_set(actor=lead2, choices={"gates": "in_app"})
    with transaction.atomic():
        notices = three_gate_notices([lead, lead2, engineer])
    # engineer chose nothing: one email per notice, delivered by the worker.
    assert wait_for(lambda: len(mail.outbox) == 3)
    assert {tuple(m.to) for m in mail.outbox} == {("engineer@example.com",)}
    in_period(notices, timezone.now())

    with worker_runs() as finished:
        first = digests_task.delay().id
        assert wait_for(lambda: first in finished)
        second = digests_task.delay().id  # a second beat of the same day
        assert wait_for(lambda: second in finished)
    assert [finished[first], finished[second]] == [("SUCCESS", 1), ("SUCCESS", 0)]
    assert wait_for(
        lambda: Delivery.objects.filter(notification__event=DIGEST_EVENT, status="delivered").exists()
    )

    to_lead = [m for m in mail.outbox if m.to == ["lead@example.com"]]
    assert len(to_lead) == 1
    assert "3 notices since" in to_lead[0].body
    assert [m for m in mail.outbox if m.to == ["lead2@example.com"]] == []
    assert len(mail.outbox) == 4
    assert NotificationDigest.objects.get().user == lead
