"""Who may write, per action: refused with 403 before the body is read (core.api.permissions)."""

from __future__ import annotations

from core.api.permissions import WriteRule
from core.roles import METRIC_OWNERS, PROGRAM_LEADS

WRITE_RULES = {
    "reference_write": WriteRule("change systems and workloads", (METRIC_OWNERS, PROGRAM_LEADS)),
    "definition_register": WriteRule("register metric definitions", (METRIC_OWNERS,)),
    "definition_version_create": WriteRule("create metric versions", (METRIC_OWNERS,)),
    "definition_update": WriteRule("edit metric definitions", (METRIC_OWNERS,)),
    "definition_activate": WriteRule("activate metric definitions", (METRIC_OWNERS,)),
    "definition_deprecate": WriteRule("deprecate metric definitions", (METRIC_OWNERS,)),
    "pull_source_write": WriteRule("manage Prometheus pull sources", (METRIC_OWNERS,)),
    "observations_ingest": WriteRule("push observations", permission="metrics.add_observation"),
    "observations_ingest_otlp": WriteRule("push OTLP metrics", permission="metrics.add_observation"),
}
