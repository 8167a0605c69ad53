"""Seed the bug-class vocabulary with runbooks, the `fleet` workload incidents without a workload are
filed under, and the registry's incident metrics (active, owned by the framework engineers)."""

from django.db import migrations

from incidents.vocabulary import vocabulary_seed


def seed(apps, schema_editor):
    vocabulary_seed(
        apps.get_model("incidents", "BugClass"),
        apps.get_model("metrics", "Workload"),
        apps.get_model("metrics", "MetricDefinition"),
    )


class Migration(migrations.Migration):
    dependencies = [("incidents", "0001_initial"), ("metrics", "0009_rollups")]

    operations = [migrations.RunPython(seed, migrations.RunPython.noop)]
