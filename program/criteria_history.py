"""Criteria changes in the gate's history, in words: "edited “Throughput”: threshold 0.8 → 0.95"."""

from __future__ import annotations

from core.models import Transition


def _value(value: object) -> str:
    if isinstance(value, list):  # an every-metric criterion's exclusions: "key (reason)"
        shown = [f"{v['metric']} ({v['reason']})" if isinstance(v, dict) else str(v) for v in value]
        return ", ".join(shown) or "none"
    return "—" if value in (None, "") else str(value)


def criteria_change_sentence(record: Transition) -> str:
    """The sentence for a criteria change (criterion_added/edited/deleted, repinned); "" for others."""
    data = record.data or {}
    name = f"“{data.get('criterion', '')}”"
    if record.action == "criterion_added":
        return f"added criterion {name}"
    if record.action == "criterion_deleted":
        return f"deleted criterion {name}"
    if record.action == "criterion_edited":
        changes = ", ".join(
            f"{field.replace('_', ' ')} {_value(old)} → {_value(new)}"
            for field, (old, new) in data.get("changes", {}).items()
        )
        withdrawn = "; its attestation was withdrawn" if data.get("attestation_withdrawn") else ""
        return f"edited criterion {name}: {changes}{withdrawn}"
    if record.action == "repinned":
        moved = data.get("moved", [])
        if not moved:
            return "cleared the stale flag (nothing left to re-pin)"
        return "re-pinned " + "; ".join(f"“{m['criterion']}” {m['from']} → {m['to']}" for m in moved)
    return ""
