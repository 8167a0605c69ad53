"""Issue 25: roles become per program. So that nothing that worked stops working, every member of the
global group `program-leads` (which now means "may create programs") becomes a lead of every existing
program, and each program's recorded lead leads it too. The `platform-admins` group is created here
(core.roles.PLATFORM_ADMINS). Narrow the leads down afterwards on each program's Members page."""

from django.db import migrations

PROGRAM_LEADS = "program-leads"
PLATFORM_ADMINS = "platform-admins"


def forwards(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    User = apps.get_model("auth", "User")
    Program = apps.get_model("program", "Program")
    Membership = apps.get_model("program", "ProgramMembership")
    Group.objects.get_or_create(name=PLATFORM_ADMINS)
    lead_ids = set(User.objects.filter(groups__name=PROGRAM_LEADS).values_list("pk", flat=True))
    rows = []
    for program in Program.objects.all():
        for user_id in sorted(lead_ids | {program.lead_id}):
            rows.append(Membership(program=program, user_id=user_id, role="lead"))
    Membership.objects.bulk_create(rows, ignore_conflicts=True)


def backwards(apps, schema_editor):
    apps.get_model("program", "ProgramMembership").objects.all().delete()
    apps.get_model("auth", "Group").objects.filter(name=PLATFORM_ADMINS).delete()


class Migration(migrations.Migration):
    dependencies = [("program", "0006_memberships"), ("core", "0002_role_groups")]

    operations = [migrations.RunPython(forwards, backwards)]
