"""Per-day rollups of each series (definition version × system × workload × UTC day), issue 14.

- `sketch`: the mergeable log-bucket histogram (0.5 % relative accuracy) and exact moments.
- `maintain`: recompute rollups from the rows in SQL; ingest's stale marks; the rebuild.
- `receivers`: ingest's `observations_ingested` marks the touched days and queues `rollups_refresh`.
- `read`: comparison sides from rollups when a side has more than settings.ROLLUP_THRESHOLD rows.
- `mannwhitney`: Mann–Whitney U from grouped values (bucket representatives and counts).
"""
