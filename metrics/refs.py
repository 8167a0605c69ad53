"""The one parser of a metric reference: `key` (the active version) or `key@N` (version N).

Every reader of a reference — the registry's `definition_resolve`, the ingest batch's lookups, the API's
`MetricRefField` — splits it here, so `key@`, `key@x` or `@3` are refused with the same words everywhere.
"""

from __future__ import annotations


class MetricRefError(ValueError):
    """A reference that is not `key` or `key@N`; the message says what is wrong, for the user."""

    def __init__(self, ref: str, problem: str) -> None:
        self.ref = ref
        self.problem = problem
        self.message = f"'{ref}': {problem}"
        super().__init__(self.message)


def metric_ref_parse(ref: str) -> tuple[str, int | None]:
    """`"latency"` → ("latency", None); `"latency@2"` → ("latency", 2). MetricRefError when the key is
    empty or what follows @ is not a whole number (ASCII digits: int() would also take "²" or "٣")."""
    key, at, version = ref.partition("@")
    if not key:
        raise MetricRefError(ref, "a metric key is required, as 'key' or 'key@N'.")
    if not at:
        return key, None
    if not (version.isascii() and version.isdigit()):
        raise MetricRefError(ref, "the version after @ must be a number.")
    return key, int(version)
