"""Running the command-line client as a pipeline does: a subprocess with only its URL and token.

The client runs from its own source folder (PYTHONPATH = clients/rebuild-tracker-cli/src, as an
installed copy would import it), with an environment that holds no DATABASE_URL, no Django settings
and no proxy variables: whatever it knows, it learned over HTTP from the live server.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "clients" / "rebuild-tracker-cli"
CLIENT_SRC = CLIENT / "src"


def cli_env(url: str, token: str, **extra: str) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": str(CLIENT_SRC),
        "REBUILD_TRACKER_URL": url,
        "REBUILD_TRACKER_TOKEN": token,
        **extra,
    }


def run_cli(*args: str, url: str, token: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rebuild_tracker_cli", *args],
        env=cli_env(url, token),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
