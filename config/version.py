"""The one version number (the package's, from pyproject.toml) and the git revision running.

The API schema (SPECTACULAR_SETTINGS) and GET /version both read these, so they cannot disagree.
"""

from __future__ import annotations

import os
import subprocess
import tomllib
from functools import cache
from importlib import metadata
from pathlib import Path

PACKAGE = "rebuild-tracker"
ROOT = Path(__file__).resolve().parent.parent


@cache
def version() -> str:
    """The installed package's version; the image runs from its source tree without installing the
    package (docker/Dockerfile), so there it is read from the pyproject.toml that metadata comes from."""
    try:
        return metadata.version(PACKAGE)
    except metadata.PackageNotFoundError:
        with (ROOT / "pyproject.toml").open("rb") as file:
            return str(tomllib.load(file)["project"]["version"])


@cache
def git_revision() -> str:
    """GIT_REVISION as the image build set it (the image has no .git), else the checkout's HEAD."""
    if revision := os.environ.get("GIT_REVISION", "").strip():
        return revision
    try:
        result = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, timeout=5, check=True
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return result.stdout.strip() or "unknown"
