"""Notification preferences: per user and kind of notice, in-app only, email or the daily digest.

A person sets their own only. The audit row (subject: the user) records what changed, so "why did I stop
getting emails?" has an answer in the history."""

from __future__ import annotations

from collections.abc import Mapping

from django.contrib.auth.models import User
from django.db import transaction

from core.audit import transition_record
from core.errors import ApplicationError
from core.models import NotificationPreference
from core.notification_kinds import Kind

MSG_KIND = "'{kind}' is not a kind of notice; the kinds are: {kinds}."
MSG_CHANNEL = "Choose one of: {channels}."


def notification_preferences_of(user: User) -> dict[str, str]:
    """Every kind's channel for `user`, the default where they chose nothing; one query."""
    chosen = dict(NotificationPreference.objects.filter(user=user).values_list("kind", "channel"))
    return {kind: chosen.get(kind, NotificationPreference.DEFAULT) for kind in Kind.values}


def notification_preferences_set(*, actor: User, choices: Mapping[str, str]) -> dict[str, tuple[str, str]]:
    """Set the actor's channel for each kind in `choices` (kinds left out keep theirs). Returns what
    changed, kind → (old, new); nothing changed writes nothing."""
    for kind, channel in choices.items():
        if kind not in Kind.values:
            raise ApplicationError(
                MSG_KIND.format(kind=kind, kinds=", ".join(Kind.values)), status=400, field=kind
            )
        if channel not in NotificationPreference.Channel.values:
            channels = ", ".join(NotificationPreference.Channel.values)
            raise ApplicationError(MSG_CHANNEL.format(channels=channels), status=400, field=kind)
    with transaction.atomic():
        # The person's row locks all of their preferences: two saves at once apply one after the other,
        # so each audit row's "old" is what the other left.
        User.objects.select_for_update().filter(pk=actor.pk).first()
        before = notification_preferences_of(actor)
        changed = {
            kind: (before[kind], channel) for kind, channel in choices.items() if before[kind] != channel
        }
        if changed:
            NotificationPreference.objects.bulk_create(
                [
                    NotificationPreference(user=actor, kind=kind, channel=new)
                    for kind, (_, new) in changed.items()
                ],
                update_conflicts=True,
                unique_fields=["user", "kind"],
                update_fields=["channel"],
            )
            transition_record(
                subject=actor,
                action="notification preferences",
                actor=actor,
                data={"changed": {kind: list(pair) for kind, pair in sorted(changed.items())}},
            )
    return changed
