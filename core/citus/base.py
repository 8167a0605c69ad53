"""Django's PostgreSQL backend with the Citus test-database set-up (core/citus/creation.py)."""

from __future__ import annotations

from django.db.backends.postgresql import base

from core.citus.creation import DatabaseCreation


class DatabaseWrapper(base.DatabaseWrapper):
    creation_class = DatabaseCreation
