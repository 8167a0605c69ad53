"""Start (or reuse) a local Citus cluster — a coordinator and two workers on private ports — and print the
coordinator's DATABASE_URL; `--stop` ends it. For tests and benchmarks of the Citus mode (docs/scaling.md).

Three `initdb` clusters of the PostgreSQL that Citus was built against (scripts/citus_build.sh) under
$CITUS_DATA (default /tmp/rebuild-tracker-citus), on ports $CITUS_PORT, +1 and +2 (default 55432–55434),
trust authentication on 127.0.0.1 only. The database `rebuild_tracker` is created on all three with the
extension, and the workers are added to the coordinator. Under root the servers run as `postgres`
(initdb refuses root).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import psycopg

from core.citus.cluster import Node, database_on_node, workers_join

DATA = Path(os.environ.get("CITUS_DATA", "/tmp/rebuild-tracker-citus"))
BASE_PORT = int(os.environ.get("CITUS_PORT", "55432"))
NODES = {"coordinator": BASE_PORT, "worker1": BASE_PORT + 1, "worker2": BASE_PORT + 2}
DATABASE = "rebuild_tracker"
HOST = "127.0.0.1"
USER = "postgres"


def _bindir() -> Path:
    pg_config = (
        os.environ.get("PG_CONFIG") or shutil.which("pg_config") or "/usr/lib/postgresql/15/bin/pg_config"
    )
    return Path(
        subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, check=True).stdout.strip()
    )


def _as_postgres(args: list[str]) -> list[str]:
    return ["runuser", "-u", USER, "--", *args] if os.geteuid() == 0 else args


def _run(args: list[str]) -> None:
    result = subprocess.run(_as_postgres(args), capture_output=True, text=True)
    if result.returncode != 0:
        sys.stderr.write(result.stdout + result.stderr)
        raise SystemExit(f"failed: {' '.join(args)}")


# A test cluster: durability off (fsync), enough connections for Citus's per-shard connections from
# two test processes, and the row triggers of django-pghistory allowed should a distributed table get one.
CONF = """
listen_addresses = '127.0.0.1'
port = {port}
shared_preload_libraries = 'citus'
max_connections = 300
shared_buffers = 128MB
fsync = off
synchronous_commit = off
full_page_writes = off
unix_socket_directories = '{data}'
citus.enable_create_database_propagation = off
log_min_messages = warning
"""


def url(port: int, database: str = DATABASE) -> str:
    return f"postgres://{USER}@{HOST}:{port}/{database}"


def start() -> None:
    bindir = _bindir()
    DATA.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:
        shutil.chown(DATA, USER, USER)
    for name, port in NODES.items():
        pgdata = DATA / name
        if not (pgdata / "PG_VERSION").exists():
            _run(
                [
                    str(bindir / "initdb"),
                    "-D",
                    str(pgdata),
                    "-U",
                    USER,
                    "--auth=trust",
                    "-E",
                    "UTF8",
                    "--no-sync",
                ]
            )
            with open(pgdata / "postgresql.conf", "a") as conf:
                conf.write(CONF.format(port=port, data=pgdata))
        if not (pgdata / "postmaster.pid").exists():
            _run([str(bindir / "pg_ctl"), "-D", str(pgdata), "-l", str(pgdata / "server.log"), "-w", "start"])
    nodes = {name: Node(HOST, port) for name, port in NODES.items()}
    for node in nodes.values():
        _wait_until_up(node)
        database_on_node(node, DATABASE, _conninfo, recreate=False)
    workers = [node for name, node in nodes.items() if name != "coordinator"]
    workers_join(nodes["coordinator"], workers, DATABASE, _conninfo)
    sys.stdout.write(url(BASE_PORT) + "\n")


def _conninfo(node: Node, database: str) -> str:
    return url(node.port, database)


def _wait_until_up(node: Node) -> None:
    for _attempt in range(50):
        try:
            psycopg.connect(url(node.port, "postgres")).close()
            return
        except psycopg.OperationalError:
            time.sleep(0.2)
    raise SystemExit(f"the Citus node on port {node.port} did not start")


def stop() -> None:
    bindir = _bindir()
    for name in NODES:
        pgdata = DATA / name
        if (pgdata / "postmaster.pid").exists():
            _run([str(bindir / "pg_ctl"), "-D", str(pgdata), "-m", "fast", "-w", "stop"])
    sys.stdout.write("The Citus cluster has stopped.\n")


if __name__ == "__main__":
    stop() if sys.argv[1:] == ["--stop"] else start()
