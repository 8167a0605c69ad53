"""In the Citus mode (DATABASE_ENGINE_MODE=citus), distribute observations, their rollups, the batches'
deltas and the stale-day marks by definition_id, co-located: everything one metric's comparison, gate
evaluation or rollup refresh reads or writes lies on one shard (docs/scaling.md). On plain PostgreSQL it
does nothing.

Citus wants every unique key of a distributed table to hold the distribution column. The observation
table's natural key does; the three rollup tables' surrogate key `id` does not, so it becomes
(definition_id, id): `id` still comes from its sequence, so it stays unique.

The list of months dropped by retention becomes a reference table (a copy on every node): the rollup
maintenance joins it to the rollups on the workers. The registry (definitions, systems, workloads) and
the histogram points stay local tables on the coordinator: their audit triggers (django-pghistory) write
to local event tables, which a reference table's copies on the workers could not reach, and no query
joins them to the distributed tables (metrics.selectors.series_presence probes each metric instead).

Not reversible in the Citus mode: Citus 13.2's undistribute_table refuses tables with an identity
column, which Django's BigAutoField is.
"""

from __future__ import annotations

from django.conf import settings
from django.db import migrations
from django.db.migrations.exceptions import IrreversibleError

OBSERVATIONS = "metrics_observation"
# Keyed by id: (definition_id, id) takes the primary key's place.
ROLLUP_TABLES = ("metrics_observationrollup", "metrics_rollupdelta", "metrics_rollupstale")
MONTHS_DROPPED = "metrics_observationmonthdropped"


def distribute(apps, schema_editor):
    if settings.DATABASE_ENGINE_MODE != "citus":
        return
    with schema_editor.connection.cursor() as cursor:
        for table in ROLLUP_TABLES:
            cursor.execute(f"ALTER TABLE {table} DROP CONSTRAINT {table}_pkey")
            cursor.execute(f"ALTER TABLE {table} ADD CONSTRAINT {table}_pkey PRIMARY KEY (definition_id, id)")
        cursor.execute(
            "SELECT create_distributed_table(%s, 'definition_id', shard_count => %s)",
            [OBSERVATIONS, settings.CITUS_SHARD_COUNT],
        )
        for table in ROLLUP_TABLES:
            cursor.execute(
                "SELECT create_distributed_table(%s, 'definition_id', colocate_with => %s)", [table, OBSERVATIONS]
            )
        cursor.execute("SELECT create_reference_table(%s)", [MONTHS_DROPPED])
        # Rows already there were copied to the shards; the coordinator's own copies go.
        for table in (OBSERVATIONS, *ROLLUP_TABLES, MONTHS_DROPPED):
            cursor.execute("SELECT truncate_local_data_after_distributing_table(%s)", [table])


def undistribute(apps, schema_editor):
    if settings.DATABASE_ENGINE_MODE == "citus":
        raise IrreversibleError(
            "metrics 0018 cannot be reversed on Citus: undistribute_table refuses identity columns"
        )


class Migration(migrations.Migration):
    dependencies = [
        ("metrics", "0017_observation_months_dropped"),
    ]

    operations = [migrations.RunPython(distribute, undistribute, elidable=False)]
