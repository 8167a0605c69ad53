"""Mixed load: 16 concurrent clients against gunicorn with production settings, freeze checks, reads and ingest.

    DATABASE_URL=... CELERY_BROKER_URL=... CACHE_URL=... \\
        .venv/bin/python benchmarks/mixed_load.py [--observations 10000000] [--seconds 30] [--clients 16]

The data of benchmarks/http_reads.py (the demo, the observations topped up to --observations, freeze
data at a realistic size). gunicorn runs as the Docker image runs it (3 sync workers) with production's
settings (benchmarks/production_settings.py: config.settings.production plus the bare DRF view); the
clients send X-Forwarded-Proto: https, as production's TLS proxy does. Two phases of --seconds each,
with --clients concurrent clients (asyncio, one keep-alive connection each):

1. the bare DRF view only (the same token authentication): the yardstick of this run;
2. the mix: 70 % freeze checks (every component at random), 20 % reads (the observations list of the
   benchmark metric and its comparison, alternately), 10 % ingests of 1,000 new rows.

Prints each kind's count, errors, p50 and p99, `mixed-load-errors` (target = 0) and
`mixed-load-p99-<kind>` = the kind's p99 ÷ the bare view's p99 (for reference). Latencies are the
client's: on a 2-core machine they include waiting for the machine the clients share.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import time
from datetime import UTC, datetime, timedelta

import httpx
import orjson
from _measure import load, target
from _setup import BENCH_METRIC, gunicorn_serving, reference_data
from http_reads import (
    BARE_PATH,
    BENCH_DIR,
    ensure_demo,
    ensure_freeze_data,
    ensure_observations,
    viewer_token,
)

KINDS = {"freeze-check": 70, "read": 20, "ingest": 10}
FORWARDED = {"X-Forwarded-Proto": "https"}


def ingest_body(client_number: int, sequence: int) -> bytes:
    start = datetime.now(UTC) - timedelta(minutes=2)
    run = f"mixed-{client_number}-{sequence}-{time.time_ns()}"
    return orjson.dumps(
        {
            "observations": [
                {
                    "metric": BENCH_METRIC,
                    "system": "bench-legacy" if i % 2 else "bench-rebuilt",
                    "workload": "bench-workload",
                    "value": 100.0 + (i * 7919) % 1000 / 10,
                    "unit": "ms",
                    "observed_at": (start + timedelta(milliseconds=i)).isoformat(),
                    "run_id": run,
                }
                for i in range(1000)
            ]
        }
    )


async def drive(
    base: str,
    *,
    mix: bool,
    seconds: float,
    clients: int,
    read_token: str,
    ingest_token: str,
    components: list[str],
) -> list[tuple[str, float, bool]]:
    """(kind, seconds, ok) of every request the clients sent within `seconds`."""
    results: list[tuple[str, float, bool]] = []
    reads = [
        f"/api/v1/observations/?metric={BENCH_METRIC}&page_size=50",
        f"/api/v1/comparisons/?metric={BENCH_METRIC}&baseline=bench-legacy&candidate=bench-rebuilt",
    ]
    deadline = time.monotonic() + seconds

    async def one_client(number: int) -> None:
        rng = random.Random(number)
        async with httpx.AsyncClient(base_url=base, timeout=120, headers=FORWARDED) as client:
            sequence = 0
            while time.monotonic() < deadline:
                sequence += 1
                kind = rng.choices(list(KINDS), weights=list(KINDS.values()))[0] if mix else "bare"
                started = time.perf_counter()
                try:
                    if kind == "ingest":
                        response = await client.post(
                            "/api/v1/observations/batch/",
                            content=ingest_body(number, sequence),
                            headers={
                                "Authorization": f"Token {ingest_token}",
                                "Content-Type": "application/json",
                            },
                        )
                    else:
                        path = {
                            "bare": BARE_PATH,
                            "freeze-check": f"/api/v1/freeze/check/?component={rng.choice(components)}",
                            "read": reads[sequence % 2],
                        }[kind]
                        response = await client.get(path, headers={"Authorization": f"Token {read_token}"})
                    ok = response.status_code < 400
                    if not ok and len([r for r in results if not r[2]]) < 3:
                        print(f"  {kind} answered {response.status_code}: {response.text[:200]}")
                except httpx.HTTPError as error:
                    ok = False
                    print(f"  {kind} failed: {error!r}")
                results.append((kind, time.perf_counter() - started, ok))

    await asyncio.gather(*(one_client(n) for n in range(clients)))
    return results


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--observations", type=int, default=10_000_000)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--clients", type=int, default=16)
    args = parser.parse_args()
    for name in ("CELERY_BROKER_URL", "CACHE_URL"):
        if not os.environ.get(name):
            raise SystemExit(
                f"Set {name}: production's settings refuse to start without it (make bench sets it)."
            )

    ensure_demo()
    observations = ensure_observations(args.observations)
    sizes = ensure_freeze_data()
    from django.db import connection

    from freeze.models import Component
    from metrics.rollups.maintain import rollups_rebuild

    definition, *_, ingest_token = reference_data()
    rollups_rebuild(definition_ids=[definition.pk])  # the comparison reads them, as production's would
    read_token = viewer_token()
    components = sorted(Component.objects.values_list("key", flat=True))
    connection.close()

    common = {"seconds": args.seconds, "clients": args.clients, "read_token": read_token,
              "ingest_token": ingest_token, "components": components}  # fmt: skip
    production_env = {
        "PYTHONPATH": str(BENCH_DIR),
        "DJANGO_SECRET_KEY": os.environ.get("DJANGO_SECRET_KEY", "benchmark-only-not-a-secret-" + "x" * 40),
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
    }
    with gunicorn_serving(
        "production_settings",
        workers=3,
        args=["--timeout", "120"],
        env=production_env,
        health_headers=FORWARDED,
    ) as (base, _):
        asyncio.run(drive(base, mix=True, **{**common, "seconds": 3}))  # every worker warm
        bare = asyncio.run(drive(base, mix=False, **common))
        print(f"bare phase done  {load()}", flush=True)
        mixed = asyncio.run(drive(base, mix=True, **common))
        print(f"mixed phase done  {load()}", flush=True)

    print(
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC; {os.cpu_count()} CPU cores; gunicorn 3 sync workers, production "
        f"settings; {args.clients} clients; {args.seconds:g} s a phase; data: {observations:,} observations; "
        "freeze: " + ", ".join(f"{v} {k}" for k, v in sizes.items())
    )
    bare_p99 = percentile([seconds for _, seconds, _ in bare], 0.99)
    errors = sum(not ok for *_, ok in bare + mixed)
    by_kind = {"bare": bare} | {kind: [r for r in mixed if r[0] == kind] for kind in KINDS}
    for kind, results in by_kind.items():
        times = [seconds for _, seconds, _ in results]
        print(
            f"{kind:>13}: {len(results):6} requests ({len(results) / args.seconds:6.1f}/s), errors "
            f"{sum(not ok for *_, ok in results)}, p50 {percentile(times, 0.5) * 1000:7.1f} ms, "
            f"p99 {percentile(times, 0.99) * 1000:7.1f} ms  {load()}"
        )
    target("mixed-load-errors", errors, "= 0", ratio=False, digits=0)
    for kind in KINDS:
        times = [seconds for _, seconds, _ in by_kind[kind]]
        target(
            f"mixed-load-p99-{kind}", percentile(times, 0.99) / bare_p99, "reference", note="÷ bare view p99"
        )


if __name__ == "__main__":
    main()
