"""Programs get the status `not_started` (issue 26, item 5).

A program created with a start date still ahead used to have its first phase active from that date
("started on plan" in the future). Such programs, where nothing else has happened yet (the first phase
active with that future actual start, every other phase planned), become not started: the first phase
is planned again, with no actual start."""

from datetime import date

from django.db import migrations, models


def unstart_future_programs(apps, schema_editor):
    Program = apps.get_model("program", "Program")
    Phase = apps.get_model("program", "Phase")
    today = date.today()
    for program in Program.objects.filter(status="active", start_date__gt=today):
        phases = list(Phase.objects.filter(program=program).order_by("order"))
        if not phases:
            continue
        first, rest = phases[0], phases[1:]
        if first.status != "active" or first.actual_start != program.start_date:
            continue
        if any(p.status != "planned" for p in rest):
            continue
        Phase.objects.filter(pk=first.pk).update(status="planned", actual_start=None)
        Program.objects.filter(pk=program.pk).update(status="not_started")


class Migration(migrations.Migration):
    dependencies = [
        ("program", "0008_criterion_every_metric"),
    ]

    operations = [
        migrations.AlterField(
            model_name="program",
            name="status",
            field=models.CharField(
                choices=[("not_started", "not started"), ("active", "Active"), ("completed", "Completed")],
                default="active",
                max_length=12,
            ),
        ),
        migrations.RunPython(unstart_future_programs, migrations.RunPython.noop),
    ]
