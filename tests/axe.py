"""axe-core in the browser tests: run the vendored copy on a page and say what it found, readably.

The copy is tests/vendor/axe-core/axe.min.js (its README says the version and where it came from):
nothing is fetched at run time. It is evaluated through Playwright's own channel, which the page's
Content-Security-Policy does not govern, so the page under test keeps its real CSP (a <script> tag
would be refused by `script-src 'self'`).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

AXE_SOURCE = Path(__file__).resolve().parent / "vendor" / "axe-core" / "axe.min.js"
SERIOUS = ("serious", "critical")
# The nodes shown per rule: enough to find the element, short enough to read a failure of many pages.
NODES_SHOWN = 5

_RUN = """async () => {
  const results = await axe.run(document, {resultTypes: ["violations"]});
  return results.violations.map((v) => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.map((n) => ({target: n.target.join(" "), summary: n.failureSummary || ""})),
  }));
}"""


@cache
def _axe_source() -> str:
    return AXE_SOURCE.read_text(encoding="utf-8")


def axe_run(page: Any) -> list[dict[str, Any]]:
    """Every violation axe finds on the page as it stands (each with id, impact, help and nodes)."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate(_axe_source())
    violations: list[dict[str, Any]] = page.evaluate(_RUN)
    return violations


def axe_violations(page: Any, impacts: tuple[str, ...] = SERIOUS) -> list[str]:
    """The violations of the given impacts on the page, one readable line each (empty when clean):
    "<url> <rule> (<impact>, N nodes): <help> — <selector>: <why>; …"."""
    lines = []
    for violation in axe_run(page):
        if violation["impact"] not in impacts:
            continue
        nodes = violation["nodes"]
        shown = "; ".join(
            f"{node['target']}: {' '.join(node['summary'].split())}" for node in nodes[:NODES_SHOWN]
        )
        more = f"; and {len(nodes) - NODES_SHOWN} more" if len(nodes) > NODES_SHOWN else ""
        lines.append(
            f"{page.url} {violation['id']} ({violation['impact']}, {len(nodes)} nodes): "
            f"{violation['help']} — {shown}{more}"
        )
    return lines
