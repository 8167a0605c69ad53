"""How the observation table's physical layout decides what reads by time and ingest cost.

    DATABASE_URL=... .venv/bin/python benchmarks/layouts.py [--sizes 1000000 10000000] [--copy 300000]

Builds scratch tables shaped like metrics_observation (same columns, same primary key with INCLUDE
(value), same session settings) in four layouts, and for each prints:

- the 30-day comparison window (2 of 4 systems, the query of metrics/selectors/comparison/sql.py)
  in a series of each size whose last 30 days always hold the same 20,000 rows, the rest of the
  series spread over the 11 months before (so a month partition next to the window is dense);
- binary COPY of new rows (this month, new runs) into the empty table and into the filled one;
- the size of the table's indexes.

Layouts: `pk` (the primary key only, as before issue 14), `index` (plus a time-leading covering index
(definition_id, observed_at) INCLUDE (system_id, workload_id, value)), `partitions` (monthly range
partitions by observed_at, primary key only), `both`. The chosen layout is in the README.
"""

from __future__ import annotations

import argparse
import statistics
import time
from datetime import UTC, datetime, timedelta

import _setup  # noqa: F401 - Django settings, for the database to use
from ingest import connect, copy_rows, cpu_seconds

LAYOUTS = ("pk", "index", "partitions", "both")
COLUMNS = """
    definition_id bigint NOT NULL, system_id bigint NOT NULL, workload_id bigint NOT NULL,
    value double precision NOT NULL, unit varchar(40) NOT NULL, observed_at timestamptz NOT NULL,
    run_id varchar(120) COLLATE "C" NOT NULL, source varchar(100) NOT NULL, tags jsonb NOT NULL,
    batch_id bigint NULL,
    PRIMARY KEY (definition_id, system_id, workload_id, run_id, observed_at) INCLUDE (value)
"""
TIME_INDEX = "CREATE INDEX {table}_time ON {table} (definition_id, observed_at) INCLUDE (system_id, workload_id, value)"
NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)
WINDOW_ROWS = 20_000
HISTORY_DAYS = 335
WINDOW_SQL = """
SELECT system_id, avg(value), array_agg(value) FROM {table}
WHERE definition_id = 1 AND system_id IN (1, 2) AND observed_at >= %s AND observed_at < %s
GROUP BY system_id
"""
# Rows i of a series of `total`: the first WINDOW_ROWS in the last 30 days, the rest in the 11 months
# before; four systems, three workloads, runs of 1,000 rows.
FILL_SQL = """
INSERT INTO {table}
SELECT 1, 1 + i %% 4, 1 + i %% 3, 100 + random() * 50, 'ms',
       CASE WHEN i < {window} THEN %(now)s - (i::float8 / {window}) * interval '30 days'
            ELSE %(now)s - interval '30 days' - ((i - {window})::float8 / (%(total)s - {window}))
                 * interval '{history} days' END,
       'run-' || (i / 1000), '', '{{}}'::jsonb, NULL
FROM generate_series(%(start)s, %(total)s - 1) AS i
"""


def create(conn, layout: str, table: str) -> None:
    conn.execute(f"DROP TABLE IF EXISTS {table}")
    partitioned = layout in ("partitions", "both")
    conn.execute(
        f"CREATE TABLE {table} ({COLUMNS})" + (" PARTITION BY RANGE (observed_at)" if partitioned else "")
    )
    if partitioned:
        month = datetime(NOW.year - 1, NOW.month, 1, tzinfo=UTC) - timedelta(days=31)
        month = month.replace(day=1)
        for _ in range(18):
            following = (month + timedelta(days=32)).replace(day=1)
            conn.execute(
                f"CREATE TABLE {table}_{month:%Y%m} PARTITION OF {table}"
                f" FOR VALUES FROM ('{month.isoformat()}') TO ('{following.isoformat()}')"
            )
            month = following
        conn.execute(f"CREATE TABLE {table}_default PARTITION OF {table} DEFAULT")
    if layout in ("index", "both"):
        conn.execute(TIME_INDEX.format(table=table))


def fill(conn, table: str, start: int, total: int) -> None:
    sql = FILL_SQL.format(table=table, window=WINDOW_ROWS, history=HISTORY_DAYS)
    conn.execute(sql, {"now": NOW, "start": start, "total": total})
    conn.execute(f"VACUUM ANALYZE {table}")


def window_cost(conn, table: str, repeat: int = 15) -> tuple[float, int]:
    """The fastest of `repeat` runs of the window query (the least disturbed by other work), and
    the shared buffers it touches (its cost, whatever else runs)."""
    sql = WINDOW_SQL.format(table=table)
    args = [NOW - timedelta(days=30), NOW]
    conn.execute(sql, args).fetchall()  # warm the cache: the cost measured is the read, not the disk
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        conn.execute(sql, args).fetchall()
        samples.append((time.perf_counter() - started) * 1000)
    (plan,) = conn.execute("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + sql, args).fetchone()
    touched = plan[0]["Plan"]["Shared Hit Blocks"] + plan[0]["Plan"]["Shared Read Blocks"]
    return min(samples), touched


def copy_rate(conn, table: str, rows: int, tag: str, *, empty: bool, repeat: int = 3) -> tuple[float, float]:
    """Median rows/s, and rows per CPU-second of the server process, of binary COPYs of `rows` new
    observations (new runs, this month) into `table`, each after a CHECKPOINT (so none pays for
    another's full-page writes); an empty table is emptied again before each. CPU-seconds are less
    disturbed than wall time by other work on a busy machine."""
    rates, cpu_rates = [], []
    for attempt in range(repeat):
        if empty:
            conn.execute(f"TRUNCATE {table}")
        conn.execute("CHECKPOINT")
        before = cpu_seconds([conn.info.backend_pid])
        started = time.perf_counter()
        _copy(conn, table, rows, f"{tag}{attempt}")
        rates.append(rows / (time.perf_counter() - started))
        used = sum(cpu_seconds([conn.info.backend_pid]).values()) - sum(before.values())
        cpu_rates.append(rows / used if used else float("nan"))
    return statistics.median(rates), statistics.median(cpu_rates)


def _copy(conn, table: str, rows: int, tag: str) -> None:
    start = NOW - timedelta(hours=6)
    typed = [
        (
            1,
            1 + i % 4,
            1 + i % 3,
            100.0 + i % 97,
            "ms",
            start + timedelta(milliseconds=i),
            f"{tag}-{i // 1000}",
            "",
            "\x01{}",
        )
        for i in range(rows)
    ]
    copy_rows(conn, table, typed)


def plan_scans(conn, table: str) -> str:
    """The window query's scan nodes, e.g. `Index Only Scan bench_layout_both_202611_definition_id…`."""
    (plan,) = conn.execute(
        "EXPLAIN (FORMAT JSON) " + WINDOW_SQL.format(table=table), [NOW - timedelta(days=30), NOW]
    ).fetchone()
    found = []

    def walk(node):
        if "Scan" in node["Node Type"]:
            found.append(f"{node['Node Type']} {node.get('Index Name') or node.get('Relation Name')}")
        for child in node.get("Plans", []):
            walk(child)

    walk(plan[0]["Plan"])
    return ", ".join(found)


def index_mib(conn, table: str) -> float:
    """The indexes of the table and of all its partitions."""
    (size,) = conn.execute(
        "SELECT coalesce(sum(pg_indexes_size(relid)), pg_indexes_size(%s::regclass))"
        " FROM pg_partition_tree(%s::regclass)",
        [table, table],
    ).fetchone()
    return size / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs=2, default=[1_000_000, 10_000_000])
    parser.add_argument("--copy", type=int, default=300_000)
    parser.add_argument("--layouts", nargs="+", default=list(LAYOUTS), choices=LAYOUTS)
    args = parser.parse_args()
    small, large = args.sizes
    with connect() as conn:
        for layout in args.layouts:
            table = f"bench_layout_{layout}"
            create(conn, layout, table)
            _copy(conn, table, args.copy, "warm")  # the first COPY of a session pays for warming up
            empty_rate, empty_cpu = copy_rate(conn, table, args.copy, "empty", empty=True)
            conn.execute(f"TRUNCATE {table}")
            fill(conn, table, 0, small)
            small_ms, small_buffers = window_cost(conn, table)
            fill(conn, table, small, large)
            large_ms, large_buffers = window_cost(conn, table)
            filled_rate, filled_cpu = copy_rate(conn, table, args.copy, "filled", empty=False)
            scans = plan_scans(conn, table)
            print(
                f"{layout:>10}: window {small:,} rows {small_ms:.1f} ms / {small_buffers:,} buffers, "
                f"{large:,} rows {large_ms:.1f} ms / {large_buffers:,} buffers "
                f"({large_ms / small_ms:.2f}× time, {large_buffers / small_buffers:.2f}× buffers); "
                f"COPY empty {empty_rate:,.0f} rows/s ({empty_cpu:,.0f} per server CPU-s), into {large:,} "
                f"{filled_rate:,.0f} rows/s ({filled_cpu:,.0f}) ({filled_rate / empty_rate:.2f}× time, "
                f"{filled_cpu / empty_cpu:.2f}× CPU); indexes {index_mib(conn, table):,.0f} MiB; window plan: {scans}",
                flush=True,
            )
            conn.execute(f"DROP TABLE {table}")


if __name__ == "__main__":
    main()
