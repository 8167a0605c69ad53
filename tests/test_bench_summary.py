"""scripts/bench.py: the target lines of the benchmarks become the README's table, each judged against
its own target (issue 27: the table comes from one run, never assembled by hand)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SPEC = importlib.util.spec_from_file_location("bench", Path(__file__).parent.parent / "scripts" / "bench.py")
assert SPEC is not None and SPEC.loader is not None
bench = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(bench)


@pytest.mark.parametrize(
    ("value", "goal", "verdict"),
    [
        ("0.80", "≥ 0.8", "met"),
        ("0.79", "≥ 0.8", "**not met**"),
        ("1.51", "≤ 1.5", "**not met**"),
        ("149.9", "< 150", "met"),
        ("1.00", "= 1.00", "met"),
        ("0.98", "= 1.00", "**not met**"),
        ("3.10", "reference", "—"),
    ],
)
def test_each_line_is_judged_against_its_own_target(value, goal, verdict):
    assert bench.met(value, goal) == verdict


def test_the_table_holds_every_target_line_with_its_load():
    lines = [
        "ratio ingest-cpu-indexed: 0.07  (target ≥ 0.8)  load 5.91",
        "verdict-agreement: 1.00  (target = 1.00)  load 1.20",
        "ratio mixed-load-p99-read: 3.10  (target reference)  load 3.10  ÷ bare view p99",
    ]
    assert all(bench.TARGET_LINE.match(line) for line in lines)
    assert not bench.TARGET_LINE.match("empty table, API: 145.6 µs CPU a row  load 5.91")
    table = bench.markdown_table(lines, quick=False, started_load=1.5)
    assert "load (1 min) 1.50 at the start" in table
    assert "| `ratio ingest-cpu-indexed` | 0.07 | ≥ 0.8 | **not met** | 5.91 |" in table
    assert "| `verdict-agreement` | 1.00 | = 1.00 | met | 1.20 |" in table
    assert "| `ratio mixed-load-p99-read` (÷ bare view p99) | 3.10 | reference | — | 3.10 |" in table
