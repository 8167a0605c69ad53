"""The client is a package of its own: it builds as a wheel with the venv's setuptools, installs with a
working `rebuild-tracker` command, depends on httpx only, and imports nothing of the tracker (so it
can never reach the database: all it knows comes over HTTP)."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import zipfile

from tests.clients.cli import CLIENT, CLIENT_SRC


def build_wheel(tmp_path):
    """From a copy: setuptools writes build/ and *.egg-info beside the sources it builds."""
    source = tmp_path / "source"
    shutil.copytree(CLIENT, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path), str(source)],
        check=True,
        capture_output=True,
        timeout=300,
    )  # fmt: skip
    (wheel,) = tmp_path.glob("rebuild_tracker_cli-*.whl")
    return wheel


def test_the_client_builds_as_a_wheel_with_a_console_script_and_only_httpx(tmp_path):
    wheel = build_wheel(tmp_path / "dist")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = archive.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
        entry_points = archive.read(
            next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
        ).decode()
    assert "rebuild_tracker_cli/cli.py" in names and "rebuild_tracker_cli/py.typed" in names
    assert not any(name.startswith(("core/", "freeze/", "metrics/")) for name in names)
    requires = [line for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    assert len(requires) == 1 and requires[0].startswith("Requires-Dist: httpx")
    assert "rebuild-tracker = rebuild_tracker_cli.cli:main" in entry_points


def test_the_installed_command_runs(tmp_path):
    wheel = build_wheel(tmp_path / "dist")
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "-q", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
        timeout=300,
    )  # fmt: skip
    done = subprocess.run(
        [str(target / "bin" / "rebuild-tracker"), "--version"],
        env={"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "rebuild-tracker 0.1.0"


def imported_top_level_modules() -> set[str]:
    found = set()
    for path in CLIENT_SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                found |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return found


def test_the_client_imports_only_the_standard_library_and_httpx():
    modules = imported_top_level_modules()
    assert {"httpx", "argparse", "rebuild_tracker_cli"} <= modules  # the reader sees imports at all
    assert modules - set(sys.stdlib_module_names) == {"httpx", "rebuild_tracker_cli"}
