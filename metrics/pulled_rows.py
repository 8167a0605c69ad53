"""How an observation pulled from Prometheus is recognised: its `source` and its run_id's prefix.

The pull (metrics.services.pull) writes every series of pull source N as source 'prometheus' and run_id
`prom-N-<hash of the series' labels>`; the comparison's sampling check (metrics.selectors.comparison.
sampling) reads the rows of one source back by the same two facts.
"""

from __future__ import annotations

INGEST_SOURCE = "prometheus"


def run_id_prefix(source_id: int) -> str:
    """Every run_id a pull source writes starts with this (LIKE-safe: digits and hyphens only)."""
    return f"prom-{source_id}-"
