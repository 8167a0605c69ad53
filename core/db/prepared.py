"""Statements prepared on the server and run with a generic plan, for the few reads that are planned
more than they are run.

Django binds parameters on the client and never prepares, so PostgreSQL plans every statement anew. For
a read whose best plan is the same whatever its parameters — an observations page bounded in time on one
side (a first page, or a cursor's), its keys looked up by subqueries — planning is most of the server's
work: 0.18 ms of a 0.30 ms page across metrics over six monthly partitions, 0.68 ms of one metric's page
over nineteen. `PreparedCursor` binds on the server and prepares the statement the first time a
connection runs it (psycopg keeps it, by text and parameter types, until the connection closes or rolls
back); the connection's plan_cache_mode makes PostgreSQL run it with one generic plan, pruning the
monthly partitions when the executor starts instead of when the planner runs: 0.10 ms a page either way.

plan_cache_mode applies only to prepared statements and PL/pgSQL. Only this cursor prepares, and the
PL/pgSQL here is pghistory's triggers (inserts of NEW and OLD, one plan for any row), so the setting
changes nothing else. A statement whose best plan depends on its values must not use this cursor: an
equality on a skewed column, or a range bounded on both sides, whose rows a generic plan guesses at
0.5 % of the table whatever the bounds (metrics.api.observations_keyset says which pages qualify). Named
prepared statements need a session of their own: behind PgBouncer in transaction mode they need its
max_prepared_statements (docs/scaling.md).
"""

from __future__ import annotations

from typing import Any, Self

import psycopg

# Set on each new connection (core.db.base.DatabaseWrapper._configure_connection).
GENERIC_PLANS = "SET plan_cache_mode = force_generic_plan"


class PreparedCursor(psycopg.Cursor):
    """Binds parameters on the server and prepares every statement it runs on first use."""

    def execute(
        self, query: Any, params: Any = None, *, prepare: bool | None = None, binary: bool | None = None
    ) -> Self:
        return super().execute(query, params, prepare=True, binary=binary)
