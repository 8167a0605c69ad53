"""tests.numbers: sums compared within a few ulps' tolerance, every exact value still exactly (no database)."""

from __future__ import annotations

import math
from collections import namedtuple
from datetime import date

import numpy as np

from tests.numbers import approx_floats, approx_rows

DAY = date(2026, 3, 1)
ROW = (1, 2, 3, DAY, 24, 3.97, 0.0575, 0.7143, 0.1, 0.26, 0, '{"-230": 5}', "{}")
SUMS = (5, 6, 7)


def test_sums_added_in_another_order_compare_equal():
    moved = (*ROW[:5], 3.970000000000001, math.nextafter(0.0575, 1), 0.7143, *ROW[8:])
    assert [moved] == approx_rows([ROW], sums=SUMS)
    assert [moved] == approx_rows([ROW])  # without `sums`: every float
    summed = np.random.default_rng(1).lognormal(0, 1, 3000)
    assert math.fsum(summed) == approx_floats(float(np.sum(summed[::-1])))


def test_real_differences_and_exact_columns_still_fail():
    assert [(*ROW[:5], 3.97 * (1 + 1e-9), *ROW[6:])] != approx_rows([ROW], sums=SUMS)
    assert [(*ROW[:8], math.nextafter(0.1, 1), *ROW[9:])] != approx_rows([ROW], sums=SUMS)  # min exact
    assert [(*ROW[:4], 25, *ROW[5:])] != approx_rows([ROW])  # a count
    assert [(*ROW[:11], '{"-229": 5}', "{}")] != approx_rows([ROW])  # the bins


def test_nested_structures_keep_their_shape_and_their_exact_parts():
    Point = namedtuple("Point", "n value")
    value = {"n": 3, "bins": {"7": 2}, "ci": [0.1, 0.30000000000000004], "point": Point(2, 0.5), "day": DAY}
    expected = approx_floats(value)
    assert {"n": 3, "bins": {"7": 2}, "ci": [0.1, 0.3], "point": Point(2, 0.5), "day": DAY} == expected
    assert {**value, "bins": {"7": 3}} != expected
    assert isinstance(expected["point"], Point)
    assert approx_rows([{"total": 0.3, "min": 0.1}], sums={"total"}) == [
        {"total": 0.30000000000000004, "min": 0.1}
    ]
