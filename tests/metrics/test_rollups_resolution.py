"""Rollup answers against exact ones on the same rows, through the real comparison path on PostgreSQL.

Issue 27, items 1 and 2: a quantile interval read from the day rollups is widened to its buckets'
edges, so it always contains the exact interval; where that widened interval cannot settle the
verdict but the exact one might, the comparison reads the rows exactly (or, where it cannot, says it
cannot tell); it never answers `no_difference` where the exact answer is `worse`. And a window's
partial edge days are read from the rows, so its n is exactly the rows in it.

The samples are narrow (a relative spread of about 1 %, one or two of the sketch's buckets) and
small (2,000 a side), so shifts of 0.05–1 % are significant exactly but below the buckets' width:
the case where the old path collapsed both intervals to a point and answered `no_difference`.
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, time, timedelta

import numpy as np
import pytest
from django.db import connection

from metrics.models import Observation
from metrics.rollups.maintain import rollups_rebuild
from metrics.selectors.comparison import comparison_compute
from metrics.selectors.comparison.compute import CANNOT_TELL, FROM_ROLLUPS, REREAD
from metrics.selectors.comparison.sweep import case_agrees

TODAY = datetime.now(UTC).date()
N = 2000
SHIFTS = (0.0, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.30)
STATISTICS = ("p50", "p95", "p99", "mean", "distribution")
DISTRIBUTIONS = {
    "normal": lambda rng, n: rng.normal(100, 1, n),
    "lognormal": lambda rng, n: rng.lognormal(np.log(100), 0.01, n),
    "bimodal": lambda rng, n: np.concatenate(
        [rng.normal(100, 0.5, n // 2), rng.normal(110, 0.5, n - n // 2)]
    ),
}


def midnight(days_ago: int) -> datetime:
    return datetime.combine(TODAY - timedelta(days=days_ago), time.min, tzinfo=UTC)


def store(ref, values, *, system: str, start: datetime, span: timedelta, tag: str) -> None:
    """Rows spread evenly over `span` from `start`, in one INSERT (bulk_create would take seconds)."""
    step = span / len(values)
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO metrics_observation
                (definition_id, system_id, workload_id, value, unit, observed_at, run_id, source, tags)
            SELECT %s, %s, %s, v, 's', %s + (i - 1) * %s, %s || i, '', '{}'
            FROM unnest(%s::float8[]) WITH ORDINALITY AS t (v, i)
            """,
            [
                ref["latency"].pk,
                ref[system].pk,
                ref["medium"].pk,
                start,
                step,
                f"{tag}-{system}-",
                [float(v) for v in values],
            ],
        )


def compare(ref, statistic: str, since: datetime, until: datetime):
    return comparison_compute(
        definition=ref["latency"],
        baseline=ref["legacy"],
        candidate=ref["rebuilt"],
        workload=ref["medium"],
        statistic=statistic,
        since=since,
        until=until,
    )


@pytest.mark.parametrize("distribution", DISTRIBUTIONS)
def test_rollup_verdicts_equal_the_exact_ones_or_say_they_cannot_tell(ref, settings, distribution):
    rng = np.random.default_rng(27)
    draw = DISTRIBUTIONS[distribution]
    windows = []
    for j, shift in enumerate(SHIFTS):  # one whole UTC day per shift
        start = midnight(2 + j)
        store(ref, draw(rng, N), system="legacy", start=start, span=timedelta(days=1), tag=f"s{j}")
        store(
            ref,
            draw(rng, N) * (1 + shift),
            system="rebuilt",
            start=start,
            span=timedelta(days=1),
            tag=f"s{j}",
        )
        windows.append((shift, start, start + timedelta(days=1)))
    rollups_rebuild()
    failures, paths = [], []
    for shift, since, until in windows:
        for statistic in STATISTICS:
            settings.ROLLUP_THRESHOLD = 10 * N  # every side under it: exact rows
            exact = compare(ref, statistic, since, until)
            settings.ROLLUP_THRESHOLD = N // 2  # every side over it: the day rollups first
            fast = compare(ref, statistic, since, until)
            assert not exact.approximate
            problem = case_agrees(exact=exact, fast=fast)
            paths.append(fast.method)
            if problem:
                failures.append(f"{distribution} shift {shift:g} {statistic}: {problem}")
    assert not failures, f"{len(failures)} of {len(windows) * len(STATISTICS)} cases:\n" + "\n".join(failures)
    # The sweep exercises both answers: some cases settled from the rollups, some read exactly.
    print(distribution, Counter(paths))
    assert any(m.endswith(FROM_ROLLUPS) for m in paths) and any(m.endswith(REREAD) for m in paths), paths


def test_a_windows_n_is_exactly_its_rows_with_partial_days_at_both_ends(ref, settings):
    settings.ROLLUP_THRESHOLD = 50
    rng = np.random.default_rng(7)
    # 4 whole days of rows, 100 a day, from midnight(5) to midnight(1), and more rows today.
    for system in ("legacy", "rebuilt"):
        store(
            ref, rng.lognormal(0, 0.5, 400), system=system, start=midnight(5), span=timedelta(days=4), tag="a"
        )
        store(
            ref,
            rng.lognormal(0, 0.5, 30),
            system=system,
            start=midnight(1),
            span=timedelta(hours=20),
            tag="b",
        )
    rollups_rebuild()
    since, until = midnight(5) + timedelta(hours=7, minutes=13), midnight(1) + timedelta(hours=9)
    for statistic in ("p50", "mean"):
        result = compare(ref, statistic, since, until)
        assert result.approximate
        assert (result.since, result.until) == (since, until)  # the window asked, not its whole days
        for side, system in ((result.baseline, "legacy"), (result.candidate, "rebuilt")):
            rows = np.asarray(
                Observation.objects.filter(
                    system=ref[system], observed_at__gte=since, observed_at__lt=until
                ).values_list("value", flat=True)
            )
            assert side.n == len(rows)
            assert side.mean == pytest.approx(rows.mean(), rel=1e-12)
            assert (side.min, side.max) == (rows.min(), rows.max())
            if statistic == "mean":
                exact_ci = _exact_mean_ci(rows)
                assert side.ci == pytest.approx(exact_ci, rel=1e-9)


def _exact_mean_ci(rows: np.ndarray) -> tuple[float, float]:
    from scipy.stats import t

    half = float(t.ppf(0.975, len(rows) - 1)) * rows.std(ddof=1) / np.sqrt(len(rows))
    return rows.mean() - half, rows.mean() + half


def test_a_request_rereads_the_rows_only_up_to_its_limit_and_otherwise_says_it_cannot_tell(
    ref, settings, viewer, client
):
    """The same rows, the same undecided p95 (no shift, narrower than a bucket): under
    COMPARISON_REREAD_MAX_ROWS the API reads them exactly; over it, it says it cannot tell and why,
    and claims nothing. A gate's evaluation (comparison_compute without a cap) still reads them."""
    rng = np.random.default_rng(5)
    start = midnight(3)
    for system in ("legacy", "rebuilt"):
        store(ref, rng.normal(100, 1, N), system=system, start=start, span=timedelta(days=1), tag="cap")
    rollups_rebuild()
    settings.ROLLUP_THRESHOLD = N // 2
    client.force_login(viewer)
    url = (
        "/api/v1/comparisons/?metric=latency&baseline=legacy&candidate=rebuilt&workload=finetune"
        f"&statistic=p95&since={start.isoformat().replace('+00:00', 'Z')}"
        f"&until={(start + timedelta(days=1)).isoformat().replace('+00:00', 'Z')}"
    )

    settings.COMPARISON_REREAD_MAX_ROWS = 2 * N
    response = client.get(url)
    assert response.status_code == 200, response.content
    read = response.json()
    assert read["method"].endswith(REREAD) and read["approximate"] is False
    assert (read["baseline"]["n"], read["candidate"]["n"]) == (N, N)

    settings.COMPARISON_REREAD_MAX_ROWS = 2 * N - 1
    capped = client.get(url).json()
    assert capped["method"].endswith(CANNOT_TELL) and capped["approximate"] is True
    assert capped["verdict"] == "insufficient_data" and capped["significant"] is False
    assert any(f"{2 * N:,} rows exactly" in w and f"({2 * N - 1:,}," in w for w in capped["warnings"])

    evaluated = compare(ref, "p95", start, start + timedelta(days=1))  # no cap: what an evaluation runs
    assert evaluated.method.endswith(REREAD) and evaluated.verdict == read["verdict"]
