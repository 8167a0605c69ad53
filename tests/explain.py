"""Reading PostgreSQL's `EXPLAIN (FORMAT JSON)` in tests."""

from __future__ import annotations

import re
from typing import Any


def plan_nodes_of(explained: Any) -> list[dict]:
    """Every node of an `EXPLAIN (FORMAT JSON)` answer, the top one first. On Citus, the plans each
    task ran on a worker ("Distributed Query" → "Job" → "Tasks" → "Remote Plan") are nodes too."""
    top = explained[0] if isinstance(explained, list) else explained
    nodes, todo = [], [top["Plan"]]
    while todo:
        node = todo.pop()
        nodes.append(node)
        todo.extend(node.get("Plans", []))
        for task in node.get("Distributed Query", {}).get("Job", {}).get("Tasks", []):
            todo.extend(_unsharded(remote[0]["Plan"]) for remote in task.get("Remote Plan", []))
    return nodes


def unsharded_name(name: str) -> str:
    """A Citus shard's table or index name without its shard id (…_y2031m09_102210 is a shard of
    …_y2031m09), so a test names what it names on PostgreSQL."""
    return re.sub(r"_[0-9]+$", "", name)


def _unsharded(plan: dict) -> dict:
    """A worker's plan with the shard ids taken off its relation and index names."""
    plan = dict(plan)
    for name in ("Relation Name", "Index Name", "Alias"):
        if name in plan:
            plan[name] = unsharded_name(plan[name])
    plan["Plans"] = [_unsharded(child) for child in plan.get("Plans", [])]
    return plan


def rows_read(node: dict) -> float:
    """Rows an `EXPLAIN ANALYZE` node read over all its loops, those its filter threw away included:
    a scan that filters every row out returns none, yet may have read the whole table."""
    per_loop = node["Actual Rows"] + node.get("Rows Removed by Filter", 0)
    return per_loop * node["Actual Loops"]


def task_counts(sql: str, params: Any) -> list[int]:
    """On Citus, the task count of every distributed job in the plan of one query (its subplans'
    included): 1 where a query reads one shard."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (FORMAT JSON) {sql}", params)
        (plan,) = cursor.fetchone()
    counts, todo = [], [plan]
    while todo:
        item = todo.pop()
        if isinstance(item, dict):
            if "Task Count" in item:
                counts.append(item["Task Count"])
            todo.extend(item.values())
        elif isinstance(item, list):
            todo.extend(item)
    return counts
