"""Seed the bug-class vocabulary with runbooks (the incident metrics are registered on first use:
incidents.vocabulary)."""

from django.db import migrations

from incidents.vocabulary import bug_classes_seed


def seed(apps, schema_editor):
    bug_classes_seed(apps.get_model("incidents", "BugClass"))


class Migration(migrations.Migration):
    dependencies = [("incidents", "0001_initial")]

    operations = [migrations.RunPython(seed, migrations.RunPython.noop)]
