"""Small server-rendered SVG charts: no JavaScript library, nothing fetched, readable in any browser."""

from __future__ import annotations

from datetime import datetime
from html import escape

from django.utils.safestring import SafeString, mark_safe

# legacy/baseline in slate, rebuilt/candidate in blue; more series cycle through the rest.
PALETTE = ("#7b8794", "#2f5bd3", "#d97706", "#0f9d58", "#b83280")


def _fmt(value: float) -> str:
    if value == 0:
        return "0"
    magnitude = abs(value)
    if magnitude >= 1000:
        return f"{value:,.0f}"
    if magnitude >= 10:
        return f"{value:.1f}"
    if magnitude >= 0.1:
        return f"{value:.2f}"
    return f"{value:.3g}"


def line_chart(
    series: dict[str, list[tuple[datetime, float]]], *, unit: str = "", width: int = 560, height: int = 200
) -> SafeString:
    """One line per series over time, with min/max y labels and first/last date labels."""
    points = [point for values in series.values() for point in values]
    if not points:
        return mark_safe('<p class="muted small">No observations yet.</p>')
    # A header row above the plot holds the unit and the legend, so neither overlaps the lines.
    left, right, top, bottom = 56, 10, 28, 26
    xs = [p[0].timestamp() for p in points]
    ys = [p[1] for p in points]
    x_lo, x_hi = min(xs), max(xs)
    y_lo, y_hi = min(ys), max(ys)
    pad = (y_hi - y_lo) * 0.08 or abs(y_hi) * 0.05 or 1
    y_lo, y_hi = y_lo - pad, y_hi + pad
    span_x = (x_hi - x_lo) or 1

    def sx(x: float) -> float:
        return left + (x - x_lo) / span_x * (width - left - right)

    def sy(y: float) -> float:
        return top + (1 - (y - y_lo) / (y_hi - y_lo)) * (height - top - bottom)

    parts = [
        f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" aria-label="chart">',
        f'<line x1="{left}" y1="{height - bottom}" x2="{width - right}" y2="{height - bottom}" stroke="#d0d5dd"/>',
        f'<text x="{left - 6}" y="{sy(y_hi - pad) + 4:.1f}" text-anchor="end" font-size="10" fill="#667085">'
        f"{_fmt(y_hi - pad)}</text>",
        f'<text x="{left - 6}" y="{sy(y_lo + pad) + 4:.1f}" text-anchor="end" font-size="10" fill="#667085">'
        f"{_fmt(y_lo + pad)}</text>",
        f'<text x="{left}" y="{height - 8}" font-size="10" fill="#667085">'
        f"{datetime.fromtimestamp(x_lo):%d %b}</text>",
        f'<text x="{width - right}" y="{height - 8}" text-anchor="end" font-size="10" fill="#667085">'
        f"{datetime.fromtimestamp(x_hi):%d %b}</text>",
    ]
    legend_x = left
    if unit:
        parts.append(f'<text x="4" y="12" font-size="10" fill="#667085">{escape(unit)}</text>')
        legend_x = max(left, 4 + 6 * len(unit) + 16)
    for index, (label, values) in enumerate(series.items()):
        color = PALETTE[index % len(PALETTE)]
        path = " ".join(f"{sx(x.timestamp()):.1f},{sy(y):.1f}" for x, y in values)
        parts.append(f'<polyline fill="none" stroke="{color}" stroke-width="1.8" points="{path}"/>')
        parts.append(
            f'<rect x="{legend_x}" y="3" width="10" height="10" rx="2" fill="{color}"/>'
            f'<text x="{legend_x + 14}" y="12" font-size="11" fill="#1d2330">{escape(label)}</text>'
        )
        legend_x += 24 + 7 * len(label)
    parts.append("</svg>")
    return mark_safe("".join(parts))


def compare_bars(
    rows: list[tuple[str, float | None, float | None]], *, labels: tuple[str, str], width: int = 560
) -> SafeString:
    """Side-by-side bars of baseline and candidate per statistic (e.g. p50, p95, p99)."""
    present = [v for _, a, b in rows for v in (a, b) if v is not None]
    if not present:
        return mark_safe('<p class="muted small">No observations yet.</p>')
    top = max(present) or 1
    bar_h, gap, label_w = 14, 10, 56
    height = len(rows) * (2 * bar_h + gap) + 24
    parts = [f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" aria-label="comparison">']
    y = 4
    for name, base, cand in rows:
        parts.append(f'<text x="0" y="{y + bar_h + 4}" font-size="11" fill="#667085">{escape(name)}</text>')
        for offset, value, color in ((0, base, PALETTE[0]), (bar_h, cand, PALETTE[1])):
            if value is None:
                continue
            length = max(1.0, value / top * (width - label_w - 70))
            parts.append(
                f'<rect x="{label_w}" y="{y + offset}" width="{length:.1f}" height="{bar_h - 2}" rx="2" fill="{color}"/>'
                f'<text x="{label_w + length + 4:.1f}" y="{y + offset + 10}" font-size="10" fill="#1d2330">'
                f"{_fmt(value)}</text>"
            )
        y += 2 * bar_h + gap
    parts.append(
        f'<rect x="{label_w}" y="{height - 14}" width="10" height="10" fill="{PALETTE[0]}"/>'
        f'<text x="{label_w + 14}" y="{height - 5}" font-size="11">{escape(labels[0])}</text>'
        f'<rect x="{label_w + 110}" y="{height - 14}" width="10" height="10" fill="{PALETTE[1]}"/>'
        f'<text x="{label_w + 124}" y="{height - 5}" font-size="11">{escape(labels[1])}</text>'
    )
    parts.append("</svg>")
    return mark_safe("".join(parts))
