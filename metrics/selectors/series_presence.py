"""Which definitions have rows, optionally on given systems, a workload and since a moment: one query,
an index probe (LIMIT 1) per definition and system, joined by UNION ALL.

Not a correlated EXISTS from the definitions: on Citus (core.citus) the observations are distributed and
the definitions a local table, and Citus refuses a subquery that correlates the two. Each probe here
names its definition, so it is a single-shard query there, and the same index probe on PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from django.db import connection

PROBE = (
    "(SELECT %s::bigint, %s::bigint FROM metrics_observation WHERE definition_id = %s{system}{rest} LIMIT 1)"
)


def series_present(
    definition_ids: Iterable[int],
    *,
    system_ids: Iterable[int | None] = (None,),
    workload_id: int | None = None,
    since: datetime | None = None,
) -> set[tuple[int, int | None]]:
    """(definition id, system id) of every pair with at least one row (system None: on any system)."""
    rest, rest_params = "", list[int | datetime | None]()
    if workload_id is not None:
        rest, rest_params = rest + " AND workload_id = %s", [*rest_params, workload_id]
    if since is not None:
        rest, rest_params = rest + " AND observed_at >= %s", [*rest_params, since]
    probes: list[str] = []
    params: list[int | datetime | None] = []
    systems = list(system_ids)
    for definition_id in sorted(set(definition_ids)):
        for system_id in systems:
            system = "" if system_id is None else " AND system_id = %s"
            probes.append(PROBE.format(system=system, rest=rest))
            params += [definition_id, system_id, definition_id, *([] if system_id is None else [system_id])]
            params += rest_params
    if not probes:
        return set()
    with connection.cursor() as cursor:
        cursor.execute(" UNION ALL ".join(probes), params)
        return {(definition_id, system_id) for definition_id, system_id in cursor.fetchall()}
