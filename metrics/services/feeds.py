"""The periodic stale-feed check: tell a metric's owner team once per stale spell of each feed."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from core.notifications import notification_send
from metrics.models import FeedState
from metrics.selectors.feeds import Feed, feeds_list, interval_words


def feeds_check_stale() -> dict[str, int]:
    """Open a spell (and notify) for each newly stale feed; close the spells of feeds that caught up.

    Idempotent: a feed already in a spell is not announced again, however often this runs. The spell
    row is claimed with an insert (unique per feed), so two concurrent runs notify once."""
    now = timezone.now()
    feeds = feeds_list()
    open_spells = {(s.definition_id, s.system_id, s.source): s for s in FeedState.objects.all()}
    opened = closed = 0
    fresh_keys = []
    for feed in feeds:
        key = (feed.definition_id, feed.system_id, feed.source)
        if not feed.stale:
            if key in open_spells:
                fresh_keys.append(open_spells[key].pk)
            continue
        if key in open_spells:
            continue
        with transaction.atomic():
            _, created = FeedState.objects.get_or_create(
                definition_id=feed.definition_id,
                system_id=feed.system_id,
                source=feed.source,
                defaults={"stale_since": now, "last_observed_at": feed.last_observed_at},
            )
            if created:
                _notify_owner_team(feed)
                opened += 1
    if fresh_keys:
        closed, _ = FeedState.objects.filter(pk__in=fresh_keys).delete()
    return {"opened": opened, "closed": closed}


def _notify_owner_team(feed: Feed) -> None:
    members = list(
        get_user_model().objects.filter(groups__name=feed.owner_team, is_active=True).order_by("pk")
    )
    notification_send(
        event="feed.stale",
        subject=f"No {feed.metric} values from {feed.system} ({feed.source_label}) since "
        f"{feed.last_observed_at:%Y-%m-%d %H:%M} UTC",
        body=f"The {feed.source_label} feed of {feed.metric} for {feed.system} has sent nothing for "
        f"{_hours(feed)} h; it is expected every {interval_words(feed.interval)} and flagged stale after "
        "3 intervals. You get this once until values arrive again.",
        link=reverse("metrics:feeds"),
        payload={"metric": feed.metric, "system": feed.system, "source": feed.source_label},
        users=members,
    )


def _hours(feed: Feed) -> str:
    return f"{feed.age.total_seconds() / 3600:.1f}"
