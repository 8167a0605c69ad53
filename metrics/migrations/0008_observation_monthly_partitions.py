"""Observations partitioned by month of observed_at, with a time-leading covering index.

Works on existing data, in one transaction: the table is renamed aside, a partitioned table of the
same columns and constraints takes its name, every month holding rows gets its partition (and the
current month and the three after it, and DEFAULT), the rows are moved, and the keys are built once
the rows are in (a bulk build, faster than a row-by-row insert into a built index). Ingest must be
stopped meanwhile: the old table is locked for the whole move. Chosen by measurement
(benchmarks/layouts.py, README "Storage of observations").

The partition code is copied here, not imported from metrics.partitions, so this migration keeps
doing what it did when that module changes.
"""

from __future__ import annotations

from datetime import UTC, datetime

from django.db import migrations, models

TABLE = "metrics_observation"
ASIDE = "metrics_observation_unpartitioned"
PRIMARY_KEY = (
    "ALTER TABLE {table} ADD CONSTRAINT {table}_pkey"
    " PRIMARY KEY (definition_id, system_id, workload_id, run_id, observed_at) INCLUDE (value)"
)
TIME_INDEX = (
    f"CREATE INDEX observation_definition_time ON {TABLE} (definition_id, observed_at)"
    " INCLUDE (system_id, workload_id, value)"
)
MONTHS_AHEAD = 3


def _month_add(month: datetime, months: int) -> datetime:
    index = month.year * 12 + month.month - 1 + months
    return datetime(index // 12, index % 12 + 1, 1, tzinfo=UTC)


def partition(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(f"ALTER TABLE {TABLE} RENAME TO {ASIDE}")
        cursor.execute(f"ALTER TABLE {ASIDE} RENAME CONSTRAINT {TABLE}_pkey TO {ASIDE}_pkey")
        cursor.execute(
            f"CREATE TABLE {TABLE} (LIKE {ASIDE} INCLUDING DEFAULTS INCLUDING CONSTRAINTS)"
            " PARTITION BY RANGE (observed_at)"
        )
        cursor.execute(f"SELECT DISTINCT date_trunc('month', observed_at, 'UTC') FROM {ASIDE}")
        months = {month.astimezone(UTC) for (month,) in cursor.fetchall()}
        now = datetime.now(UTC)
        this_month = datetime(now.year, now.month, 1, tzinfo=UTC)
        months.update(_month_add(this_month, offset) for offset in range(MONTHS_AHEAD + 1))
        for month in sorted(months):
            cursor.execute(
                f"CREATE TABLE {TABLE}_y{month:%Y}m{month:%m} PARTITION OF {TABLE}"
                f" FOR VALUES FROM ('{month.isoformat()}') TO ('{_month_add(month, 1).isoformat()}')"
            )
        cursor.execute(f"CREATE TABLE {TABLE}_default PARTITION OF {TABLE} DEFAULT")
        cursor.execute(f"INSERT INTO {TABLE} SELECT * FROM {ASIDE}")
        cursor.execute(f"DROP TABLE {ASIDE}")
        cursor.execute(PRIMARY_KEY.format(table=TABLE))
        cursor.execute(TIME_INDEX)


def unpartition(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(f"CREATE TABLE {ASIDE} (LIKE {TABLE} INCLUDING DEFAULTS INCLUDING CONSTRAINTS)")
        cursor.execute(f"INSERT INTO {ASIDE} SELECT * FROM {TABLE}")
        cursor.execute(f"DROP TABLE {TABLE}")  # and its partitions
        cursor.execute(f"ALTER TABLE {ASIDE} RENAME TO {TABLE}")
        cursor.execute(PRIMARY_KEY.format(table=TABLE))


class Migration(migrations.Migration):
    dependencies = [
        ("metrics", "0007_feed_expected_interval_and_state"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AddIndex(
                    model_name="observation",
                    index=models.Index(
                        fields=["definition", "observed_at"],
                        include=["system", "workload", "value"],
                        name="observation_definition_time",
                    ),
                ),
            ],
            database_operations=[migrations.RunPython(partition, unpartition)],
        ),
    ]
