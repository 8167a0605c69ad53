"""GET /version and the one version number: the package's (pyproject.toml) is the API schema's too."""

from __future__ import annotations

import subprocess
import sys
import tomllib

import pytest
import yaml
from django.conf import settings

from config import version as version_module

PROJECT_VERSION = tomllib.loads((settings.BASE_DIR / "pyproject.toml").read_text())["project"]["version"]


@pytest.fixture
def fresh_version(monkeypatch):
    """config.version caches its answers for the process; these tests change what it reads."""
    version_module.version.cache_clear()
    version_module.git_revision.cache_clear()
    yield
    version_module.version.cache_clear()
    version_module.git_revision.cache_clear()


@pytest.mark.django_db
def test_version_reports_the_package_version_and_the_revision_built_in(client, monkeypatch, fresh_version):
    monkeypatch.setenv("GIT_REVISION", "0123abcd")
    response = client.get("/version")
    assert response.status_code == 200
    assert response.json() == {"version": PROJECT_VERSION, "revision": "0123abcd"}


def test_without_a_build_revision_the_checkout_head_is_reported(monkeypatch, fresh_version):
    monkeypatch.delenv("GIT_REVISION", raising=False)
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=settings.BASE_DIR, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert version_module.git_revision() == head


def test_without_git_the_revision_is_unknown(monkeypatch, fresh_version):
    monkeypatch.delenv("GIT_REVISION", raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")
    assert version_module.git_revision() == "unknown"


def test_an_uninstalled_tree_reads_the_version_from_pyproject(monkeypatch, fresh_version):
    # The image runs the source tree without installing the package (docker/Dockerfile).
    def not_installed(name):
        raise version_module.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(version_module.metadata, "version", not_installed)
    assert version_module.version() == PROJECT_VERSION


def test_the_api_schema_carries_the_package_version():
    schema = subprocess.run(
        [sys.executable, "manage.py", "spectacular", "--format", "openapi"],
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert yaml.safe_load(schema)["info"]["version"] == PROJECT_VERSION
    assert settings.SPECTACULAR_SETTINGS["VERSION"] == PROJECT_VERSION
