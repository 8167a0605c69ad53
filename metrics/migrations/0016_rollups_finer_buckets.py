"""The sketches' buckets went from 0.5 % to 0.1 % (metrics.rollups.sketch.ACCURACY): rollups and
deltas stored with the old γ would be read with the new one, so they are dropped and every day that
has rows is marked stale. The beat's rollups_refresh recomputes them, 500 marks at a time; until a
day's rollup is back, a window reads fewer rollup rows and, under ROLLUP_THRESHOLD, the rows
themselves: answers stay exact, only slower, meanwhile."""

from django.db import migrations

RESET = """
DELETE FROM metrics_rollupdelta;
DELETE FROM metrics_observationrollup;
INSERT INTO metrics_rollupstale (definition_id, workload_id, day, marked_at)
SELECT DISTINCT definition_id, workload_id, (observed_at AT TIME ZONE 'UTC')::date, now()
FROM metrics_observation
ON CONFLICT (definition_id, workload_id, day) DO UPDATE SET marked_at = excluded.marked_at;
"""


class Migration(migrations.Migration):
    dependencies = [("metrics", "0015_rollup_deltas")]

    operations = [migrations.RunSQL(RESET, reverse_sql=RESET)]
