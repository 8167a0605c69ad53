"""Hooks other apps subscribe to; metrics never imports them (docs/architecture.md, 'Cross-app hooks')."""

from django.dispatch import Signal

# Sent inside the transaction (receivers write outbox messages) when an active version is replaced:
# old_id, new_id.
definition_superseded = Signal()
# Sent by the ingest service (metrics.ingest.service) inside the batch's transaction, right after the
# write, once per batch that stored new rows (receivers write outbox messages, published after commit):
# batch_id, definition_ids, workload_ids.
observations_ingested = Signal()
# Sent by the rollup refresh inside its transaction, once it recomputed days of these definitions or
# folded batches' deltas into them (a judgement from rollups can only see a batch after this):
# definition_ids.
rollups_refreshed = Signal()
