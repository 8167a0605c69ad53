"""Issue 16 renamed the Celery tasks `<entity>_<action>`, like the services. A message still waiting in the
outbox names its task by the old dotted name, which no worker registers any more: rewrite the unfinished
ones (finished ones are history and keep the name they ran under). The reverse puts the old names back."""

from django.db import migrations

# Frozen here rather than imported: a migration must keep meaning what it meant when it was written.
RENAMED = {
    "core.tasks.deliver_notification": "core.tasks.notification_deliver",
    "core.tasks.heartbeat": "core.tasks.heartbeat_record",
    "freeze.tasks.expire_exceptions": "freeze.tasks.exceptions_expire",
    "freeze.tasks.warn_expiring_exceptions": "freeze.tasks.exceptions_warn_expiring",
    "freeze.tasks.warn_overdue_overrides": "freeze.tasks.overrides_warn_overdue",
    "freeze.tasks.create_frontier_window": "freeze.tasks.frontier_window_create",
    "freeze.tasks.follow_phase": "freeze.tasks.windows_follow_phase",
    "metrics.tasks.pull_prometheus": "metrics.tasks.pull_sources_scrape",
    "program.tasks.evaluate_open_gates": "program.tasks.gates_evaluate_open",
    "program.tasks.evaluate_gate": "program.tasks.gate_evaluate",
    "program.tasks.mark_gates_stale": "program.tasks.gates_mark_stale",
}


def _rename_pending(apps, names: dict[str, str]) -> None:
    OutboxMessage = apps.get_model("core", "OutboxMessage")
    pending = OutboxMessage.objects.filter(done_at__isnull=True)
    for old, new in names.items():
        pending.filter(task=old).update(task=new)


def tasks_rename_forward(apps, schema_editor):
    _rename_pending(apps, RENAMED)


def tasks_rename_backward(apps, schema_editor):
    _rename_pending(apps, {new: old for old, new in RENAMED.items()})


class Migration(migrations.Migration):
    dependencies = [
        ("core", "0005_heartbeat"),
    ]

    operations = [
        migrations.RunPython(tasks_rename_forward, tasks_rename_backward),
    ]
