"""A test that needs a program no Python package ships is skipped naming the package to install, the run's
summary counts those skips per package, and under REQUIRE_SERVICES=1 (CI) the test fails instead."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.system_packages import require_program

ROOT = Path(__file__).resolve().parents[1]

NEEDS_TWO_PROGRAMS = """
from tests.system_packages import require_program

def test_drives_a_browser():
    require_program("no-such-browser", package="chromium")

def test_drives_it_again():
    require_program("no-such-browser", package="chromium")

def test_scrapes():
    require_program("no-such-prometheus", package="prometheus")

def test_needs_nothing():
    assert require_program("sh", package="dash").endswith("/sh")
"""


def test_a_present_program_is_found_on_the_path_or_at_its_path():
    assert require_program("sh", package="dash").endswith("/sh")
    assert require_program("no-such-sh", package="dash", path="/bin/sh") == "/bin/sh"


def test_a_missing_program_fails_under_require_services(monkeypatch):
    monkeypatch.setenv("REQUIRE_SERVICES", "1")
    with pytest.raises(pytest.fail.Exception, match=r"REQUIRE_SERVICES=1 .*apt-get install prometheus"):
        require_program("no-such-prometheus", package="prometheus", path="/nonexistent/prometheus")


def test_the_summary_counts_each_missing_package_and_says_how_to_install_it(pytester, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    monkeypatch.delenv("REQUIRE_SERVICES", raising=False)
    pytester.makepyfile(test_needs=NEEDS_TWO_PROGRAMS)

    result = pytester.runpytest_subprocess("-p", "tests.system_packages", "-p", "no:django")

    result.assert_outcomes(passed=1, skipped=3)
    result.stdout.fnmatch_lines(
        [
            "*skipped for want of a system package*",
            "2 skipped: no-such-browser (apt-get install chromium)",
            "1 skipped: no-such-prometheus (apt-get install prometheus)",
        ]
    )
    result.stdout.no_fnmatch_line("*another reason*")


def test_under_require_services_any_skip_fails_the_run(pytester, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    monkeypatch.setenv("REQUIRE_SERVICES", "1")
    pytester.makepyfile(test_skips="import pytest\n\ndef test_skips():\n    pytest.skip('no reason')\n")

    result = pytester.runpytest_subprocess("-p", "tests.system_packages", "-p", "no:django")

    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*skipped for another reason (not expected)*", "*test_skips: no reason"])
