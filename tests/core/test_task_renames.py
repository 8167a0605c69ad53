"""The data migration that moves messages waiting in the outbox to the tasks' `<entity>_<action>` names
(core/migrations/0006_task_renames.py), run through Django's migration executor."""

from __future__ import annotations

from importlib import import_module

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from config.celery import app
from core.models import OutboxMessage

RENAMES = import_module("core.migrations.0006_task_renames")
BEFORE, AFTER = ("core", "0005_heartbeat"), ("core", "0006_task_renames")


def migrate_to(target: tuple[str, str]) -> None:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate([target])


@pytest.mark.django_db
def test_pending_messages_move_to_the_new_names_and_back():
    migrate_to(BEFORE)
    pending = OutboxMessage.objects.create(
        task="program.tasks.evaluate_gate", args=[7], key="gate-evaluate:7"
    )
    started = OutboxMessage.objects.create(
        task="core.tasks.deliver_notification", args=["d"], started_at=timezone.now()
    )
    finished = OutboxMessage.objects.create(
        task="freeze.tasks.follow_phase", args=[3, "replan"], done_at=timezone.now()
    )
    unrelated = OutboxMessage.objects.create(task="metrics.tasks.rollups_refresh", key="rollups_refresh")

    migrate_to(AFTER)
    tasks = dict(OutboxMessage.objects.values_list("pk", "task"))
    assert tasks[pending.pk] == "program.tasks.gate_evaluate"
    # Started but unfinished: the sweep re-sends it once its lease runs out, under the name a worker knows.
    assert tasks[started.pk] == "core.tasks.notification_deliver"
    assert tasks[finished.pk] == "freeze.tasks.follow_phase"  # history keeps the name it ran under
    assert tasks[unrelated.pk] == "metrics.tasks.rollups_refresh"
    assert OutboxMessage.objects.get(pk=pending.pk).args == [7]

    migrate_to(BEFORE)
    tasks = dict(OutboxMessage.objects.values_list("pk", "task"))
    assert tasks[pending.pk] == "program.tasks.evaluate_gate"
    assert tasks[started.pk] == "core.tasks.deliver_notification"
    migrate_to(AFTER)


def test_every_new_name_is_a_registered_task_and_no_old_one_is():
    """The mapping is frozen in the migration: a task renamed again, or a typo, fails here."""
    app.loader.import_default_modules()
    assert set(RENAMES.RENAMED.values()) - set(app.tasks) == set()
    assert set(RENAMES.RENAMED) & set(app.tasks) == set()
