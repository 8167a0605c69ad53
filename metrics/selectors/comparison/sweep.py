"""Whether a fast answer (day rollups first) keeps the exact answer's promise, for tests and benchmarks.

Two checks of one comparison asked twice on the same rows, once exactly (`exact`) and once with the
rollups allowed (`fast`), as the issue 27 sweep and `make bench`'s verdict-agreement and
interval-coverage lines ask them:

- `verdict_agrees`: the fast verdict is the exact one, or the fast answer says it cannot tell at the
  rollups' accuracy (never `no_difference` where the exact answer is `worse`, say).
- `interval_covers`: each side's interval and the relative-performance interval of the fast answer
  contain the exact ones (floating-point slack aside); trivially so where the fast path read the rows.
"""

from __future__ import annotations

from dataclasses import dataclass

from metrics.selectors.comparison.compute import Comparison

# Two paths sum the same doubles in different orders: a few ulps, far below any real miss.
SLACK = 1e-9


@dataclass(frozen=True)
class SweepCase:
    verdict_agrees: bool
    interval_covers: bool
    problem: str  # "" when both hold


def cannot_tell(comparison: Comparison) -> bool:
    """The answer says the rollups cannot settle it and it did not read the rows (compute.py)."""
    return comparison.verdict == "insufficient_data" and "cannot tell" in comparison.method


def _covers(outer: tuple[float, float] | None, inner: tuple[float, float] | None) -> bool:
    if inner is None:
        return True  # no exact interval to contain
    if outer is None:
        return False
    low, high = outer
    return low <= inner[0] + SLACK * abs(inner[0]) and high >= inner[1] - SLACK * abs(inner[1])


def sweep_case(*, exact: Comparison, fast: Comparison) -> SweepCase:
    problems = []
    agrees = fast.verdict == exact.verdict or cannot_tell(fast)
    if not agrees:
        problems.append(f"verdict {fast.verdict} ({fast.method}), exact {exact.verdict}")
    pairs = [
        ("baseline", fast.baseline.ci, exact.baseline.ci),
        ("candidate", fast.candidate.ci, exact.candidate.ci),
        ("relative performance", fast.relative_performance_ci, exact.relative_performance_ci),
    ]
    missed = [name for name, outer, inner in pairs if not _covers(outer, inner)]
    if missed:
        shown = ", ".join(f"{name} {outer} ⊉ {inner}" for name, outer, inner in pairs if name in missed)
        problems.append(f"intervals not covering the exact ones: {shown}")
    return SweepCase(agrees, not missed, "; ".join(problems))


def case_agrees(*, exact: Comparison, fast: Comparison) -> str:
    """What is wrong with the fast answer against the exact one, or "" when nothing is."""
    return sweep_case(exact=exact, fast=fast).problem
