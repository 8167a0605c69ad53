"""A real Prometheus server (Debian package `prometheus`) and a prometheus_client exporter, for tests."""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from tests.system_packages import require_program


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def prometheus_binary() -> str:
    return require_program("prometheus", package="prometheus", path="/usr/bin/prometheus")


def wait_until(check: Callable[[], bool], timeout: float, what: str) -> None:
    """Poll `check` until it holds; the proof is the check, the interval only paces the polling."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.2)
    pytest.fail(f"timed out after {timeout}s waiting for {what}")


def start_prometheus(tmp_path: Path, target_port: int) -> tuple[subprocess.Popen, str]:
    """Prometheus on a free port scraping 127.0.0.1:target_port every second; returns (process, base URL)."""
    port = free_port()
    config = tmp_path / "prometheus.yml"
    config.write_text(
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
        "scrape_configs:\n  - job_name: exporter\n"
        f"    static_configs:\n      - targets: ['127.0.0.1:{target_port}']\n"
    )
    log = (tmp_path / "prometheus.log").open("w")
    process = subprocess.Popen(
        [
            prometheus_binary(),
            f"--config.file={config}",
            f"--storage.tsdb.path={tmp_path / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    return process, f"http://127.0.0.1:{port}"


def has_samples(base_url: str, promql: str) -> bool:
    try:
        body = httpx.get(f"{base_url}/api/v1/query", params={"query": promql}, timeout=2).json()
    except (httpx.HTTPError, ValueError):
        return False
    return body.get("status") == "success" and bool(body["data"]["result"])
