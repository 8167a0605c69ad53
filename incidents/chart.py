"""The MTTR chart: per bug class, old vs new system side by side (core.charts bars, server-rendered)."""

from __future__ import annotations

from django.utils.safestring import SafeString

from core.charts import compare_bars
from incidents.selectors import Speed


def mttr_chart(speeds: list[Speed], *, old: str, new: str) -> SafeString:
    """Median hours to resolve per bug class with resolved incidents on either system."""
    by_class: dict[str, dict[str, float | None]] = {}
    for speed in speeds:
        if speed.system in (old, new) and speed.mttr_p50_hours is not None:
            by_class.setdefault(speed.bug_class_name, {})[speed.system] = speed.mttr_p50_hours
    rows = [(name, sides.get(old), sides.get(new)) for name, sides in sorted(by_class.items())]
    # Long enough for "Performance regression" at the chart's 11 px labels.
    return compare_bars(rows, labels=(f"{old} (old)", f"{new} (new)"), width=460, label_width=140)
