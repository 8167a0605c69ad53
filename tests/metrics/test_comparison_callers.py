"""The comparison page and GET /api/v1/comparisons/ answer from the same selector."""

from __future__ import annotations

import ast
import inspect
from unittest import mock

import metrics.pages.metrics
from metrics import selectors


def test_page_module_does_not_import_the_api():
    tree = ast.parse(inspect.getsource(metrics.pages.metrics))
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    imported |= {
        alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names
    }
    assert not {name for name in imported if name == "metrics.api" or name.startswith("metrics.api.")}


def test_page_and_api_call_the_same_selector(client, viewer, ref):
    client.force_login(viewer)
    query = {"metric": "latency", "baseline": "legacy", "candidate": "rebuilt"}
    with mock.patch.object(
        selectors, "comparison_from_query", wraps=selectors.comparison_from_query
    ) as select:
        page = client.get("/metrics/compare/", query)
        api = client.get("/api/v1/comparisons/", query)
    assert page.status_code == 200 and api.status_code == 200
    assert select.call_count == 2
    assert [dict(call.args[0].items()) for call in select.call_args_list] == [query, query]
