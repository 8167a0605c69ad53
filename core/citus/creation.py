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

JOINING_LOCK = 0x6369_7475  # "citu"


class DatabaseCreation(PostgreSQLCreation):
    def _workers(self) -> list[tuple[str, int]]:
        # A connection of its own: the backend's would open its pool on the real database, which the
        # tests would then go on using.
        settings = self.connection.settings_dict
        conninfo = self._worker_conninfo(settings["HOST"], int(settings["PORT"]), settings["NAME"])
        with psycopg.connect(conninfo) as coordinator:
            rows = coordinator.execute(
                "SELECT nodename, nodeport FROM pg_dist_node"
                " WHERE groupid <> 0 AND noderole = 'primary' ORDER BY nodeport"
            ).fetchall()
        return [(host, int(port)) for host, port in rows]

    def _worker_conninfo(self, host: str, port: int, database: str) -> str:
        settings = self.connection.settings_dict
        return psycopg.conninfo.make_conninfo(
            host=host,
            port=port,
            dbname=database,
            user=settings["USER"],
            password=settings["PASSWORD"] or None,
        )

    def create_test_db(self, *args: Any, **kwargs: Any) -> str:
        # One test database is set up (joined, migrated) at a time: joining and distributing copy the
        # roles to every worker, and two at once (pytest-xdist's processes) failed there with "tuple
        # concurrently updated".
        with self._joining_lock():
            return super().create_test_db(*args, **kwargs)

    @contextmanager
    def _joining_lock(self) -> Iterator[None]:
        settings = self.connection.settings_dict
        conninfo = self._worker_conninfo(settings["HOST"], int(settings["PORT"]), settings["NAME"])
        with psycopg.connect(conninfo, autocommit=True) as coordinator:
            coordinator.execute("SELECT pg_advisory_lock(%s)", [JOINING_LOCK])
            yield  # released when the connection closes

    def _create_test_db(self, verbosity: int, autoclobber: bool, keepdb: bool = False) -> Any:
        workers = self._workers()  # read from the real database, before the test one takes its name
        if not keepdb:  # a run that stopped short left it; Django's own DROP would wait on Citus's daemon
            self._drop_forced(self._get_test_db_name())  # type: ignore[attr-defined]  # not in django-stubs
        test_name = super()._create_test_db(verbosity, autoclobber, keepdb)  # type: ignore[misc]
        for host, port in workers:
            with psycopg.connect(self._worker_conninfo(host, port, "postgres"), autocommit=True) as admin:
                exists = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", [test_name]).fetchone()
                if exists and keepdb:
                    continue
                admin.execute(
                    sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(test_name))
                )
                admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(test_name)))
            with psycopg.connect(self._worker_conninfo(host, port, test_name), autocommit=True) as worker:
                worker.execute("CREATE EXTENSION IF NOT EXISTS citus")
        settings = self.connection.settings_dict
        with psycopg.connect(
            self._worker_conninfo(settings["HOST"], int(settings["PORT"]), test_name), autocommit=True
        ) as coordinator:
            coordinator.execute("CREATE EXTENSION IF NOT EXISTS citus")
            coordinator.execute(
                "SELECT citus_set_coordinator_host(%s, %s)", [settings["HOST"], int(settings["PORT"])]
            )
            known = {port for (port,) in coordinator.execute("SELECT nodeport FROM pg_dist_node").fetchall()}
            for host, port in workers:
                if port not in known:
                    coordinator.execute("SELECT citus_add_node(%s, %s)", [host, port])
        self._citus_workers = workers
        return test_name

    def _drop_forced(self, name: str) -> None:
        # FORCE: Citus's maintenance daemon keeps a session on every database with the extension.
        with self.connection._nodb_cursor() as cursor:
            cursor.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))

    def _destroy_test_db(self, test_database_name: str, verbosity: int) -> None:
        self._drop_forced(test_database_name)
        drop = sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(test_database_name))
        for host, port in getattr(self, "_citus_workers", []):
            with psycopg.connect(self._worker_conninfo(host, port, "postgres"), autocommit=True) as admin:
                admin.execute(drop)
