"""An index on observed_at alone: the unfiltered observations list's newest-first order.

Without it the list sorted every row of every partition for each page; with it each partition is
walked backwards and ties on observed_at are sorted incrementally. Created on the partitioned table,
so every partition gets it, and partitions attached later (metrics.partitions) too. Built without
CONCURRENTLY (not supported on a partitioned parent): it locks writes to the table while it builds.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("metrics", "0009_rollups"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="observation",
            index=models.Index(fields=["observed_at"], name="observation_time"),
        ),
    ]
