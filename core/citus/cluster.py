"""Joining a database to a Citus cluster, the one way the test backend (creation.py), the local cluster
(scripts/citus_cluster.py) and the Citus benchmark (benchmarks/citus.py) do it: the database on every
node with the extension, then the workers added to the coordinator's. Plain psycopg, no Django: the
script and the benchmark run it before any settings exist.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import psycopg
from psycopg import sql


@dataclass(frozen=True)
class Node:
    host: str
    port: int


# How to reach a database on a node (user, password: the caller's).
Conninfo = Callable[[Node, str], str]


def cluster_workers(conninfo: str) -> list[Node]:
    """The primary workers a coordinator's database knows (pg_dist_node), by port."""
    with psycopg.connect(conninfo) as coordinator:
        rows = coordinator.execute(
            "SELECT nodename, nodeport FROM pg_dist_node"
            " WHERE groupid <> 0 AND noderole = 'primary' ORDER BY nodeport"
        ).fetchall()
    return [Node(host, int(port)) for host, port in rows]


def database_on_node(node: Node, name: str, conninfo: Conninfo, *, recreate: bool) -> None:
    """Database `name` on `node` with the citus extension: dropped first where `recreate` (FORCE: Citus's
    maintenance daemon keeps a session on every database with the extension), else kept if there."""
    with psycopg.connect(conninfo(node, "postgres"), autocommit=True) as admin:
        exists = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if recreate or not exists:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
            admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    with psycopg.connect(conninfo(node, name), autocommit=True) as database:
        database.execute("CREATE EXTENSION IF NOT EXISTS citus")


def workers_join(coordinator: Node, workers: list[Node], name: str, conninfo: Conninfo) -> None:
    """The coordinator's database `name` (with the extension) told its own address and every worker
    it does not know yet."""
    with psycopg.connect(conninfo(coordinator, name), autocommit=True) as database:
        database.execute("CREATE EXTENSION IF NOT EXISTS citus")
        database.execute("SELECT citus_set_coordinator_host(%s, %s)", [coordinator.host, coordinator.port])
        known = {int(port) for (port,) in database.execute("SELECT nodeport FROM pg_dist_node").fetchall()}
        for worker in workers:
            if worker.port not in known:
                database.execute("SELECT citus_add_node(%s, %s)", [worker.host, worker.port])
