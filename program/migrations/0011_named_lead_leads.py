"""A program's named lead (Program.lead) is a user who leads it (program.services.memberships keeps it so
from now on). Before, removing or demoting that user left the name behind: such a program is named after
the user lead with the oldest membership. A program led only by teams keeps its name."""

from django.db import migrations


def forwards(apps, schema_editor):
    Program = apps.get_model("program", "Program")
    Membership = apps.get_model("program", "ProgramMembership")
    for program in Program.objects.all():
        leads = Membership.objects.filter(program=program, role="lead", user__isnull=False)
        if leads.filter(user_id=program.lead_id).exists():
            continue
        longest = leads.order_by("granted_at", "pk").first()
        if longest is not None:
            program.lead_id = longest.user_id
            program.save(update_fields=["lead"])


class Migration(migrations.Migration):
    dependencies = [("program", "0010_gate_closed")]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
