"""The calibration chart: the judged number over time, its interval as a band, the threshold as a
dashed line, and each moment's dot in its outcome's colour. Server-rendered SVG (core.charts style)."""

from __future__ import annotations

from datetime import datetime
from html import escape

from django.utils.safestring import SafeString, mark_safe

from core.charts import INK, MUTED, PALETTE, THRESHOLD, _fmt
from program.calibration import Calibration, CalibrationPoint
from program.models import Criterion

# The badge colours of app.css (--pass, --fail, --warn).
OUTCOME_COLOURS = {"pass": "#1f8a4c", "fail": "#c0392b", "inconclusive": "#b7791f"}
BAND = "#c9d6f5"


def _runs(points: list[CalibrationPoint]) -> list[list[tuple[datetime, tuple[float, float]]]]:
    """Consecutive points that have an interval (moment, interval): one band each, so a gap is not
    drawn over."""
    runs: list[list[tuple[datetime, tuple[float, float]]]] = [[]]
    for point in points:
        if point.value_ci:
            runs[-1].append((point.at, point.value_ci))
        elif runs[-1]:
            runs.append([])
    return [run for run in runs if run]


def calibration_svg(calibration: Calibration, *, width: int = 560, height: int = 220) -> SafeString:
    points = calibration.points
    valued = [(p.at, p.value) for p in points if p.value is not None]
    if not valued:
        return mark_safe('<p class="muted small">No point had enough samples for a number yet.</p>')
    left, right, top, bottom = 56, 12, 26, 34
    ys = [value for _, value in valued] + [
        b for p in points if p.value is not None and p.value_ci for b in p.value_ci
    ]
    if calibration.threshold is not None:
        ys.append(calibration.threshold)
    y_lo, y_hi = min(ys), max(ys)
    pad = (y_hi - y_lo) * 0.08 or abs(y_hi) * 0.05 or 1
    y_lo, y_hi = y_lo - pad, y_hi + pad
    x_lo, x_hi = points[0].at.timestamp(), points[-1].at.timestamp()
    span_x = (x_hi - x_lo) or 1

    def sx(moment: datetime) -> float:
        return left + (moment.timestamp() - x_lo) / span_x * (width - left - right)

    def sy(value: float) -> float:
        return top + (1 - (value - y_lo) / (y_hi - y_lo)) * (height - top - bottom)

    base = height - bottom
    label = escape(calibration.label)
    parts = [
        f'<svg class="chart calibration-chart" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{label} at each earlier moment, with its interval and the threshold">',
        f'<line x1="{left}" y1="{base}" x2="{width - right}" y2="{base}" stroke="#d0d5dd"/>',
    ]
    for value in (y_hi - pad, y_lo + pad):
        parts.append(
            f'<text x="{left - 6}" y="{sy(value) + 4:.1f}" text-anchor="end" font-size="10" fill="{MUTED}">'
            f"{_fmt(value)}</text>"
        )
    parts.append(
        f'<text x="{left}" y="{base + 14}" font-size="10" fill="{MUTED}">{points[0].at:%-d %b %Y}</text>'
        f'<text x="{width - right}" y="{base + 14}" text-anchor="end" font-size="10" fill="{MUTED}">'
        f"{points[-1].at:%-d %b %Y}</text>"
    )
    for run in _runs(points):
        upper = " ".join(f"{sx(at):.1f},{sy(ci[1]):.1f}" for at, ci in run)
        lower = " ".join(f"{sx(at):.1f},{sy(ci[0]):.1f}" for at, ci in reversed(run))
        parts.append(f'<polygon points="{upper} {lower}" fill="{BAND}" stroke="{BAND}" stroke-width="3"/>')
    if calibration.threshold is not None:
        y = sy(calibration.threshold)
        parts.append(
            f'<line x1="{left}" y1="{y:.1f}" x2="{width - right}" y2="{y:.1f}" stroke="{THRESHOLD}" '
            f'stroke-width="1.5" stroke-dasharray="5 3"/>'
        )
    line = " ".join(f"{sx(at):.1f},{sy(value):.1f}" for at, value in valued)
    parts.append(f'<polyline points="{line}" fill="none" stroke="{PALETTE[1]}" stroke-width="1.6"/>')
    for p in points:
        colour = OUTCOME_COLOURS.get(p.outcome, MUTED)
        interval = f", interval {_fmt(p.value_ci[0])} – {_fmt(p.value_ci[1])}" if p.value_ci else ""
        title = escape(
            f"{p.at:%-d %b %Y}: {p.outcome}"
            + (f", {calibration.label} {_fmt(p.value)}{interval}" if p.value is not None else "")
            + f" (n = {p.n_baseline} / {p.n_candidate})"
        )
        if p.value is None:  # too few samples or no number: a hollow mark on the axis
            parts.append(
                f'<circle class="point {p.outcome}" cx="{sx(p.at):.1f}" cy="{base}" r="3" fill="#fff" '
                f'stroke="{colour}" stroke-width="1.4"><title>{title}</title></circle>'
            )
            continue
        parts.append(
            f'<circle class="point {p.outcome}" cx="{sx(p.at):.1f}" cy="{sy(p.value):.1f}" r="4.5" '
            f'fill="{colour}" stroke="#fff" stroke-width="1.2"><title>{title}</title></circle>'
        )
    parts.append(_legend(calibration, width=width, height=height))
    parts.append("</svg>")
    return mark_safe("".join(parts))


def _legend(calibration: Calibration, *, width: int, height: int) -> str:
    """A header row: what the line is, the band, the threshold, then the outcome colours."""
    y = 12
    items = [
        f'<rect x="4" y="{y - 9}" width="14" height="10" fill="{BAND}"/>'
        f'<text x="22" y="{y}" font-size="10" fill="{INK}">{escape(calibration.label)} and interval</text>'
    ]
    x = 22 + round(5.5 * (len(calibration.label) + 13)) + 14
    if calibration.threshold is not None:
        items.append(
            f'<line x1="{x}" y1="{y - 4}" x2="{x + 16}" y2="{y - 4}" stroke="{THRESHOLD}" stroke-width="1.5" '
            f'stroke-dasharray="5 3"/><text x="{x + 20}" y="{y}" font-size="10" fill="{INK}">'
            f"threshold {escape(Criterion.Operator(calibration.operator).label)} {_fmt(calibration.threshold)}</text>"
        )
        x += 40 + round(5.5 * len(_fmt(calibration.threshold))) + 72
    for outcome, colour in OUTCOME_COLOURS.items():
        items.append(
            f'<circle cx="{x + 4}" cy="{y - 4}" r="4" fill="{colour}"/>'
            f'<text x="{x + 11}" y="{y}" font-size="10" fill="{INK}">{outcome}</text>'
        )
        x += 24 + round(5.5 * len(outcome))
    return "".join(items)
