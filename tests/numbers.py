"""Comparing floats that two computation paths produced: sums within a tolerance, exact values exactly.

Why a tolerance at all: a sum of doubles depends on the order it is added in. PostgreSQL adds rows
in scan order, which the query plan, a parallel worker, a partial recompute against a full rebuild,
or the PostgreSQL version (15 against 18) may change; numpy adds pairwise. Sums of a few thousand
doubles added in different orders differ by a few ulps (3.97 against 3.970000000000001 on
PostgreSQL 18), a relative difference around 1e-15. A relative tolerance of 1e-12 is far above that
and far below any real error: a row lost or counted twice, a wrong bucket or a wrong formula moves
the value by orders of magnitude more. The absolute tolerance only matters for a sum that should be
0 (the m2 of a day of equal values), where a few ulps of rounding are left instead.

Values that are exact stay compared exactly: ints (counts, keys, bucket indexes), bools, strings,
dates, None, dict keys, and dicts of integer counts (histogram bins, as dicts or as jsonb text).
min and max are a chosen element, not a sum, so they are exact too: `approx_rows` takes the columns
that are sums and leaves every other float exact.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Iterable
from typing import Any

import pytest

REL = 1e-12
ABS = 1e-12


def approx_floats(value: Any, *, rel: float = REL, abs: float = ABS) -> Any:
    """`value` with every float in it (at any depth of lists, tuples and dict values) replaced by
    pytest.approx(float, rel=rel, abs=abs); everything else is kept as it is, so it compares exactly."""
    if isinstance(value, float):  # numpy's float64 too: it subclasses float
        return pytest.approx(value, rel=rel, abs=abs)
    if isinstance(value, dict):
        return {key: approx_floats(item, rel=rel, abs=abs) for key, item in value.items()}
    if isinstance(value, list):
        return [approx_floats(item, rel=rel, abs=abs) for item in value]
    if isinstance(value, tuple):
        items = [approx_floats(item, rel=rel, abs=abs) for item in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)  # a namedtuple
    return value


def approx_rows(
    rows: Iterable[Any],
    *,
    sums: Collection[Hashable] | None = None,
    rel: float = REL,
    abs: float = ABS,
) -> list[Any]:
    """Rows (tuples, lists or dicts) to compare with `==`: the floats at `sums` (the positions, or for
    dicts the keys, of the columns that are sums) within the tolerance, every other value exact.
    Without `sums` every float is approximated (approx_floats)."""

    def row_of(row: Any) -> Any:
        if sums is None:
            return approx_floats(row, rel=rel, abs=abs)
        if isinstance(row, dict):
            return {k: approx_floats(v, rel=rel, abs=abs) if k in sums else v for k, v in row.items()}
        items = [approx_floats(v, rel=rel, abs=abs) if i in sums else v for i, v in enumerate(row)]
        if isinstance(row, list):
            return items
        return type(row)(*items) if hasattr(row, "_fields") else tuple(items)

    return [row_of(row) for row in rows]
