"""Calibration of metrics.inference: A/A false passes, interval coverage and power (issue 10).

    .venv/bin/python benchmarks/calibration.py [--reps 2000] [--seed 10]

No database. For each statistic × distribution × n, simulates ``--reps`` comparisons with both sides
drawn from the same distribution (A/A) and as many with the candidate scaled by 1.1 (a true 10 %
improvement of every quantile and of the mean, higher is better). Prints:

    false-pass rate <statistic> <distribution> n=<n>: <x>   A/A, criterion "relative ≥ 1.0, significant", α = 0.05 (target ≤ 0.06)
    coverage <statistic> <distribution> n=<n>: <x>          A/A, 95 % interval holds the true ratio 1.0 (target 0.93–0.99; n/a: no interval)
    power <statistic> <distribution> n=<n>: <x>             10 % shift, same criterion passes

`distribution` (Mann–Whitney U) has no interval: its criterion is judged by the one-sided tests at
α/2 against the threshold (metrics.inference.judge_shift), and its coverage line is always n/a.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from metrics.inference import infer, judge, judge_shift

STATISTICS = ("p50", "p95", "p99", "mean", "distribution")
SIZES = (30, 300, 3000)
SHIFT = 1.1
ALPHA = 0.05


def draw(distribution: str, rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    """Positive samples shaped like job latencies; each row is one simulated side, sorted once."""
    if distribution == "normal":
        sample = rng.normal(100.0, 15.0, shape)
    elif distribution == "lognormal":
        sample = rng.lognormal(np.log(100.0), 0.75, shape)
    else:  # bimodal: 60 % fast path around 100, 40 % slow path around 250
        slow = rng.random(shape) < 0.4
        sample = np.where(slow, rng.normal(250.0, 25.0, shape), rng.normal(100.0, 10.0, shape))
    return np.sort(sample, axis=1)


def criterion_outcome(result) -> str:
    """The criterion "relative ≥ 1.0, require_significant" judged as a gate judges it."""
    if result.statistic == "distribution":
        outcome, _ = judge_shift(
            estimate=result.relative_performance,
            p_better=result.p_value,
            p_worse=result.p_value_worse,
            alpha=result.alpha,
            operator=">=",
            threshold=1.0,
            require_significant=True,
        )
        return outcome
    outcome, _ = judge(
        estimate=result.relative_performance,
        ci=result.relative_performance_ci,
        operator=">=",
        threshold=1.0,
        require_significant=True,
    )
    return outcome


def cell(statistic: str, distribution: str, n: int, reps: int, rng: np.random.Generator) -> dict:
    base, aa, shifted = (draw(distribution, rng, (reps, n)) for _ in range(3))
    shifted *= SHIFT
    false_pass = covered = formed = power = 0
    for i in range(reps):
        null = infer(statistic=statistic, direction="higher_is_better", baseline=base[i], candidate=aa[i])
        alt = infer(statistic=statistic, direction="higher_is_better", baseline=base[i], candidate=shifted[i])
        for result, is_null in ((null, True), (alt, False)):
            outcome = criterion_outcome(result)
            if is_null:
                false_pass += outcome == "pass"
            else:
                power += outcome == "pass"
        if null.relative_performance_ci is not None:
            formed += 1
            low, high = null.relative_performance_ci
            covered += low <= 1.0 <= high
    return {
        "false-pass rate": f"{false_pass / reps:.4f}",
        "coverage": f"{covered / formed:.4f}" if formed else "n/a",
        "power": f"{power / reps:.4f}",
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=10)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    for statistic in STATISTICS:
        for distribution in ("normal", "lognormal", "bimodal"):
            for n in SIZES:
                figures = cell(statistic, distribution, n, args.reps, rng)
                for label, value in figures.items():
                    print(f"{label} {statistic} {distribution} n={n}: {value}", flush=True)


if __name__ == "__main__":
    main()
