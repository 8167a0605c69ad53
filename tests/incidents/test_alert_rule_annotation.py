"""The README's Prometheus rule that sets `failure_began_at`: real promtool evaluates its template to
an RFC 3339 time, the form test_alerts sends and the incident opens at."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from tests.system_packages import require_program

README = Path(__file__).resolve().parents[2] / "README.md"
EXPECTED = "1970-01-01T00:02:00Z"  # the counter last moved at 120 s
UNIT_TEST = f"""
rule_files: [rules.yml]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: nccl_last_progress_timestamp_seconds{{job="train"}}
        values: '0 60 120 120x30'
    alert_rule_test:
      - eval_time: 20m
        alertname: NcclAllReduceHang
        exp_alerts:
          - exp_labels: {{team: training-platform, job: train}}
            exp_annotations: {{summary: All-reduce stuck, failure_began_at: "{EXPECTED}"}}
"""


def readme_rule() -> str:
    blocks = re.findall(r"```yaml\n(.*?)```", README.read_text(), re.S)
    return next(block for block in blocks if "failure_began_at" in block)


def test_the_readme_rule_writes_when_the_failure_began_as_rfc_3339(tmp_path):
    promtool = require_program("promtool", package="prometheus", path="/usr/bin/promtool")
    (tmp_path / "rules.yml").write_text(readme_rule())
    (tmp_path / "test.yml").write_text(UNIT_TEST)
    run = subprocess.run(
        [promtool, "test", "rules", "test.yml"], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stdout + run.stderr
