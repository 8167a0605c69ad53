"""Per-day rollups of each series (definition version × system × workload × UTC day), issue 14.

- `sketch`: the mergeable log-bucket histogram (0.1 % relative accuracy) and exact moments.
- `summary`: the one SQL rule that turns rows (or partial summaries) into a series-day's rollup columns.
- `incremental`: a batch's deltas, written with its rows; the refresh folds them in (cost of the batch).
- `maintain`: recompute whole days from the rows (corrections' stale marks, the rebuild); nightly medians.
- `receivers`: ingest's `observations_ingested` queues one coalesced `rollups_refresh`.
- `read`: comparison sides from rollups when a side has more than settings.ROLLUP_THRESHOLD rows.
- `mannwhitney`: Mann–Whitney U from grouped values (bucket representatives and counts).
"""
