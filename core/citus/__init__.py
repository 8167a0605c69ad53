"""The Citus mode (DATABASE_ENGINE_MODE=citus, docs/scaling.md): the same schema on a Citus coordinator,
with observations and their rollups distributed by definition_id.

`ENGINE = "core.citus"` is Django's PostgreSQL backend plus one thing: a test database is also created on
every worker and the workers joined to it (creation.py), as an operator does once for the real database.
What is distributed, and how, is the migration metrics/migrations/0018_citus_distribution.py; the
partition functions that differ in this mode are in metrics/partitions.py and metrics/retention.py.
"""

from __future__ import annotations

from django.conf import settings


def citus_mode() -> bool:
    return bool(settings.DATABASE_ENGINE_MODE == "citus")
