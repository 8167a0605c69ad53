"""Old-vs-new comparison of one metric version (docs/architecture.md, 'Comparisons and verdicts').

- `query`: the comparison asked for by keys; the API and the comparison page call `comparison_from_query`.
- `compute`: `comparison_compute` on resolved objects (also the gate evaluation's entry): read, test, judge.
- `sql`: the PostgreSQL read: each side's sample once, sorted once, and its statistics.
- `batch`: many comparisons' samples in one read (`sides_fetch_many`), judged by `comparison_of_sides`.
- `verdict`: the pure judgement from the two sides' numbers.
"""

from metrics.selectors.comparison.batch import SidesRequest, sides_fetch_many
from metrics.selectors.comparison.compute import (
    DEFAULT_ALPHA,
    DEFAULT_MIN_SAMPLES,
    Comparison,
    comparison_compute,
    comparison_of_sides,
)
from metrics.selectors.comparison.query import (
    ComparisonInput,
    ComparisonQuery,
    comparison_from_query,
    comparison_query,
)
from metrics.selectors.comparison.sql import SideStats
from metrics.selectors.comparison.verdict import Verdict, comparison_verdict

__all__ = [
    "DEFAULT_ALPHA",
    "DEFAULT_MIN_SAMPLES",
    "Comparison",
    "ComparisonInput",
    "ComparisonQuery",
    "SideStats",
    "SidesRequest",
    "Verdict",
    "comparison_compute",
    "comparison_from_query",
    "comparison_of_sides",
    "comparison_query",
    "comparison_verdict",
    "sides_fetch_many",
]
