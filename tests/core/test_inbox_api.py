"""The inbox through the API: my notifications only, newest first, marking read."""

from __future__ import annotations

import pytest
from django.test import override_settings

from core.models import NotificationReceipt
from core.notifications import notification_send

URL = "/api/v1/notifications/"


def send(*users, subject: str = "s", link: str = "/programs/gates/3/"):
    return notification_send(event="gate.ready", subject=subject, body="b", link=link, users=users)


@override_settings(SITE_URL="https://tracker.example.com")
def test_lists_my_notifications_newest_first_with_their_links(as_user, lead, viewer):
    first = send(lead, viewer, subject="first")
    second = send(lead, subject="second")
    send(viewer, subject="not mine")
    body = as_user(lead).get(URL).json()
    assert [n["subject"] for n in body["results"]] == ["second", "first"]
    assert body["results"][0]["id"] == second.pk
    assert body["results"][1] | {"created_at": None} == {
        "id": first.pk,
        "event": "gate.ready",
        "subject": "first",
        "body": "b",
        "link": "/programs/gates/3/",
        "url": "https://tracker.example.com/programs/gates/3/",
        "payload": {},
        "created_at": None,
        "read_at": None,
    }


def test_unread_filter_and_mark_one_read(as_user, lead):
    first = send(lead, subject="first")
    send(lead, subject="second")
    client = as_user(lead)
    response = client.post(f"{URL}{first.pk}/read/")
    assert response.status_code == 200 and response.json()["read_at"] is not None
    assert [n["subject"] for n in client.get(f"{URL}?unread=true").json()["results"]] == ["second"]
    # Again: still 200, still read at the first moment.
    assert client.post(f"{URL}{first.pk}/read/").json()["read_at"] == response.json()["read_at"]


def test_someone_elses_notification_is_404_and_stays_unread(as_user, lead, viewer):
    notification = send(lead)
    assert as_user(viewer).post(f"{URL}{notification.pk}/read/").status_code == 404
    assert NotificationReceipt.objects.get(user=lead).read_at is None


def test_read_all_counts_mine_only(as_user, lead, viewer):
    send(lead, viewer)
    send(lead)
    assert as_user(lead).post(f"{URL}read-all/").json() == {"marked": 2}
    assert as_user(lead).post(f"{URL}read-all/").json() == {"marked": 0}
    assert NotificationReceipt.objects.filter(user=viewer, read_at__isnull=True).count() == 1


def test_a_repeated_read_all_with_a_key_replays_the_first_answer(as_user, lead):
    send(lead)
    client = as_user(lead)
    first = client.post(f"{URL}read-all/", HTTP_IDEMPOTENCY_KEY="k1")
    again = client.post(f"{URL}read-all/", HTTP_IDEMPOTENCY_KEY="k1")
    assert first.json() == again.json() == {"marked": 1}
    assert again["Idempotent-Replay"] == "true"


@pytest.mark.django_db
def test_the_list_runs_the_same_queries_for_few_and_many(as_user, lead, django_assert_num_queries):
    client = as_user(lead)
    send(lead)
    client.get(URL)
    # count for the pager, the page of receipts with their notifications.
    with django_assert_num_queries(2):
        client.get(URL)
    for i in range(30):
        send(lead, subject=f"n{i}")
    with django_assert_num_queries(2):
        assert len(client.get(URL).json()["results"]) == 31
