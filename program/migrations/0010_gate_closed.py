"""A gate left undecided when its phase completed is `closed` (program.services.programs.program_advance
closes them from now on). Gates already in that state before this change are closed here, each with the
audit row advancing would have written."""

from typing import Any

from django.db import migrations, models

REASON = "not decided — phase completed"


def close_undecided_gates_of_completed_phases(apps: Any, schema_editor: Any) -> None:
    Gate = apps.get_model("program", "Gate")
    Transition = apps.get_model("core", "Transition")
    ContentType = apps.get_model("contenttypes", "ContentType")
    gates = list(Gate.objects.filter(phase__status="completed", status__in=["open", "ready"]))
    if not gates:
        return
    content_type, _ = ContentType.objects.get_or_create(app_label="program", model="gate")
    Transition.objects.bulk_create(
        Transition(
            content_type=content_type,
            object_id=gate.pk,
            action="closed",
            from_state=gate.status,
            to_state="closed",
            reason=REASON,
            data={"migration": "0010_gate_closed"},
        )
        for gate in gates
    )
    Gate.objects.filter(pk__in=[g.pk for g in gates]).update(status="closed")


class Migration(migrations.Migration):
    dependencies = [
        ("program", "0009_program_not_started"),
        ("core", "0009_notification_preferences_and_scoped_webhooks"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.AlterField(
            model_name="gate",
            name="status",
            field=models.CharField(
                choices=[
                    ("open", "Open"),
                    ("ready", "Ready"),
                    ("passed", "Passed"),
                    ("failed", "Failed"),
                    ("waived", "Waived"),
                    ("closed", "closed (not decided)"),
                ],
                default="open",
                max_length=10,
            ),
        ),
        # Reversing leaves the gates closed: the audit rows say what happened to them.
        migrations.RunPython(close_undecided_gates_of_completed_phases, migrations.RunPython.noop),
    ]
