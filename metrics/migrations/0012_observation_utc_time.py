"""The newest-first list across every metric reads a B-tree on the UTC time instead of time bands over BRIN.

The bands (migration 0011) cost about 1.4 ms of PostgreSQL per page against 0.3 ms for an index scan, which
kept `ratio list-vs-bare-drf` at 0.23. The index is on `observed_at AT TIME ZONE 'UTC'`, an expression
only metrics.observation_page writes, so the planner never picks it for one metric's reads: a plain B-tree
on observed_at made it walk every newer row of other metrics for those. Built on the partitioned table,
so every partition, DEFAULT and any attached later (metrics.partitions) included, has its own.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("metrics", "0011_observation_time_brin"),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name="observation",
            name="observation_time_brin",
        ),
        migrations.AddIndex(
            model_name="observation",
            index=models.Index(
                models.Func(
                    models.Value("UTC"),
                    models.F("observed_at"),
                    function="timezone",
                    output_field=models.DateTimeField(),
                ),
                name="observation_utc_time",
            ),
        ),
    ]
