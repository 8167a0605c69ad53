"""Reading PostgreSQL's `EXPLAIN (FORMAT JSON)` in tests."""

from __future__ import annotations

from typing import Any


def plan_nodes_of(explained: Any) -> list[dict]:
    """Every node of an `EXPLAIN (FORMAT JSON)` answer, the top one first."""
    top = explained[0] if isinstance(explained, list) else explained
    nodes, todo = [], [top["Plan"]]
    while todo:
        node = todo.pop()
        nodes.append(node)
        todo.extend(node.get("Plans", []))
    return nodes


def rows_read(node: dict) -> float:
    """Rows an `EXPLAIN ANALYZE` node read over all its loops, those its filter threw away included:
    a scan that filters every row out returns none, yet may have read the whole table."""
    per_loop = node["Actual Rows"] + node.get("Rows Removed by Filter", 0)
    return per_loop * node["Actual Loops"]
