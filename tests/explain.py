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
