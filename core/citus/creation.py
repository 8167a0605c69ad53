"""A test database on a Citus cluster: created on the coordinator by Django, and here also on every worker
the coordinator's own database knows (pg_dist_node), with the extension, and the workers added to it.
Destroyed on the workers too, so the next run starts clean."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from django.db.backends.postgresql.creation import DatabaseCreation as PostgreSQLCreation
from psycopg import sql

from core.citus.cluster import Node, cluster_workers, database_on_node, workers_join

JOINING_LOCK = 0x6369_7475  # "citu"


class DatabaseCreation(PostgreSQLCreation):
    def _conninfo(self, node: Node, database: str) -> str:
        settings = self.connection.settings_dict
        return psycopg.conninfo.make_conninfo(
            host=node.host,
            port=node.port,
            dbname=database,
            user=settings["USER"],
            password=settings["PASSWORD"] or None,
        )

    def _coordinator(self) -> Node:
        settings = self.connection.settings_dict
        return Node(settings["HOST"], int(settings["PORT"]))

    def create_test_db(self, *args: Any, **kwargs: Any) -> str:
        # One test database is set up (joined, migrated) at a time: joining and distributing copy the
        # roles to every worker, and two at once (pytest-xdist's processes) failed there with "tuple
        # concurrently updated".
        with self._joining_lock():
            return super().create_test_db(*args, **kwargs)

    @contextmanager
    def _joining_lock(self) -> Iterator[None]:
        conninfo = self._conninfo(self._coordinator(), self.connection.settings_dict["NAME"])
        with psycopg.connect(conninfo, autocommit=True) as coordinator:
            coordinator.execute("SELECT pg_advisory_lock(%s)", [JOINING_LOCK])
            yield  # released when the connection closes

    def _create_test_db(self, verbosity: int, autoclobber: bool, keepdb: bool = False) -> Any:
        # The workers are read from the real database (a connection of its own: the backend's would open
        # its pool there, which the tests would then go on using), before the test one takes its name.
        coordinator = self._coordinator()
        workers = cluster_workers(self._conninfo(coordinator, self.connection.settings_dict["NAME"]))
        if not keepdb:  # a run that stopped short left it; Django's own DROP would wait on Citus's daemon
            self._drop_forced(self._get_test_db_name())  # type: ignore[attr-defined]  # not in django-stubs
        test_name = super()._create_test_db(verbosity, autoclobber, keepdb)  # type: ignore[misc]
        for worker in workers:
            database_on_node(worker, test_name, self._conninfo, recreate=not keepdb)
        workers_join(coordinator, workers, test_name, self._conninfo)
        self._citus_workers = workers
        return test_name

    def _drop_forced(self, name: str) -> None:
        # FORCE: Citus's maintenance daemon keeps a session on every database with the extension.
        with self.connection._nodb_cursor() as cursor:
            cursor.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))

    def _destroy_test_db(self, test_database_name: str, verbosity: int) -> None:
        self._drop_forced(test_database_name)
        drop = sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(test_database_name))
        for worker in getattr(self, "_citus_workers", []):
            with psycopg.connect(self._conninfo(worker, "postgres"), autocommit=True) as admin:
                admin.execute(drop)
