"""Small server-rendered SVG charts: no JavaScript library, nothing fetched, readable in any browser."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
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
        f"{datetime.fromtimestamp(x_lo, tz=UTC):%d %b}</text>",
        f'<text x="{width - right}" y="{height - 8}" text-anchor="end" font-size="10" fill="#667085">'
        f"{datetime.fromtimestamp(x_hi, tz=UTC):%d %b}</text>",
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


Interval = tuple[float, float] | None
INK, MUTED, THRESHOLD = "#1d2330", "#667085", "#d97706"


def compare_bars(
    rows: list[tuple[str, float | None, float | None]],
    *,
    labels: tuple[str, str],
    intervals: dict[str, tuple[Interval, Interval]] | None = None,
    threshold: float | None = None,
    width: int = 560,
    label_width: int = 56,
) -> SafeString:
    """Side-by-side bars of baseline and candidate per statistic (e.g. p50, p95, p99).

    ``intervals`` maps a statistic to each side's interval, drawn as a whisker over the bar;
    ``threshold`` (in the bars' unit) is drawn as a dashed vertical line."""
    intervals = intervals or {}
    present = [v for _, a, b in rows for v in (a, b) if v is not None]
    if not present:
        return mark_safe('<p class="muted small">No observations yet.</p>')
    bounds = [bound for pair in intervals.values() for ci in pair if ci for bound in ci]
    top = max([*present, *bounds, *([threshold] if threshold is not None else [])]) or 1
    bar_h, gap, label_w = 14, 10, label_width
    span = width - label_w - 70
    height = len(rows) * (2 * bar_h + gap) + 24 + (14 if threshold is not None else 0)
    parts = [f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" aria-label="comparison">']
    y = 4
    for name, base, cand in rows:
        parts.append(f'<text x="0" y="{y + bar_h + 4}" font-size="11" fill="{MUTED}">{escape(name)}</text>')
        cis = intervals.get(name, (None, None))
        for offset, value, color, ci in ((0, base, PALETTE[0], cis[0]), (bar_h, cand, PALETTE[1], cis[1])):
            if value is None:
                continue
            length = max(1.0, value / top * span)
            end = length
            parts.append(
                f'<rect x="{label_w}" y="{y + offset}" width="{length:.1f}" height="{bar_h - 2}" rx="2" fill="{color}"/>'
            )
            if ci:
                low, high = (label_w + max(0.0, bound) / top * span for bound in ci)
                mid = y + offset + (bar_h - 2) / 2
                parts.append(
                    f'<path d="M{low:.1f},{mid - 4:.1f}V{mid + 4:.1f}M{low:.1f},{mid:.1f}H{high:.1f}'
                    f'M{high:.1f},{mid - 4:.1f}V{mid + 4:.1f}" stroke="{INK}" stroke-width="1.4" fill="none">'
                    f"<title>interval {_fmt(ci[0])} – {_fmt(ci[1])}</title></path>"
                )
                end = max(end, high - label_w)
            parts.append(
                f'<text x="{label_w + end + 4:.1f}" y="{y + offset + 10}" font-size="10" fill="{INK}">'
                f"{_fmt(value)}</text>"
            )
        y += 2 * bar_h + gap
    if threshold is not None:
        x = label_w + max(0.0, threshold) / top * span
        parts.append(
            f'<line x1="{x:.1f}" y1="0" x2="{x:.1f}" y2="{y - gap + 2}" stroke="{THRESHOLD}" '
            f'stroke-width="1.5" stroke-dasharray="4 3"/>'
            f'<text x="{x:.1f}" y="{y + 8}" text-anchor="middle" font-size="10" fill="{THRESHOLD}">'
            f"threshold {_fmt(threshold)}</text>"
        )
    parts.append(
        f'<rect x="{label_w}" y="{height - 14}" width="10" height="10" fill="{PALETTE[0]}"/>'
        f'<text x="{label_w + 14}" y="{height - 5}" font-size="11">{escape(labels[0])}</text>'
        f'<rect x="{label_w + 110}" y="{height - 14}" width="10" height="10" fill="{PALETTE[1]}"/>'
        f'<text x="{label_w + 124}" y="{height - 5}" font-size="11">{escape(labels[1])}</text>'
    )
    if intervals:
        parts.append(
            f'<path d="M{label_w + 230},{height - 13}V{height - 5}M{label_w + 230},{height - 9}H{label_w + 246}'
            f'M{label_w + 246},{height - 13}V{height - 5}" stroke="{INK}" stroke-width="1.4" fill="none"/>'
            f'<text x="{label_w + 252}" y="{height - 5}" font-size="11">interval</text>'
        )
    parts.append("</svg>")
    return mark_safe("".join(parts))


def interval_chart(
    *,
    estimate: float,
    ci: Interval,
    threshold: float | None,
    reference: float,
    label: str,
    width: int = 560,
) -> SafeString:
    """One estimate and its interval on a number line, against the threshold and the no-change
    reference (1× for a ratio, 0 % for an improvement): what a significance-required criterion reads."""
    values: list[float] = [estimate, reference, *(ci or ()), *([threshold] if threshold is not None else [])]
    lo, hi = min(values), max(values)
    pad = (hi - lo) * 0.12 or abs(hi) * 0.1 or 1
    lo, hi = lo - pad, hi + pad
    left, right, height = 12, 12, 64

    def sx(v: float) -> float:
        return left + (v - lo) / (hi - lo) * (width - left - right)

    mid = 30
    parts = [
        f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" aria-label="{escape(label)} and its interval">',
        f'<line x1="{left}" y1="{mid}" x2="{width - right}" y2="{mid}" stroke="#d0d5dd"/>',
        f'<line x1="{sx(reference):.1f}" y1="{mid - 16}" x2="{sx(reference):.1f}" y2="{mid + 16}" stroke="{MUTED}"/>',
        f'<text x="{sx(reference):.1f}" y="{height - 4}" text-anchor="middle" font-size="10" fill="{MUTED}">'
        f"no change {_fmt(reference)}</text>",
    ]
    if threshold is not None:
        parts.append(
            f'<line x1="{sx(threshold):.1f}" y1="{mid - 20}" x2="{sx(threshold):.1f}" y2="{mid + 16}" '
            f'stroke="{THRESHOLD}" stroke-width="1.5" stroke-dasharray="4 3"/>'
            f'<text x="{sx(threshold):.1f}" y="10" text-anchor="middle" font-size="10" fill="{THRESHOLD}">'
            f"threshold {_fmt(threshold)}</text>"
        )
    if ci:
        parts.append(
            f'<line x1="{sx(ci[0]):.1f}" y1="{mid}" x2="{sx(ci[1]):.1f}" y2="{mid}" stroke="{PALETTE[1]}" '
            f'stroke-width="6" stroke-linecap="round"><title>interval {_fmt(ci[0])} – {_fmt(ci[1])}</title></line>'
        )
    parts.append(
        f'<circle cx="{sx(estimate):.1f}" cy="{mid}" r="5" fill="#fff" stroke="{INK}" stroke-width="2">'
        f"<title>{escape(label)} {_fmt(estimate)}</title></circle>"
    )
    parts.append("</svg>")
    return mark_safe("".join(parts))


# --- time series with axes (issue 29): nice ticks, gridlines, axis titles and a legend -----------------

GRID, AXIS = "#e3e6eb", "#98a2b3"
HOUR, DAY = 3600, 86400
# Steps a time axis may take, in seconds: hours that divide a day, then days, weeks and ~months.
HOUR_STEPS = (HOUR, 2 * HOUR, 3 * HOUR, 4 * HOUR, 6 * HOUR, 12 * HOUR)
TIME_STEPS = (*HOUR_STEPS, DAY, 2 * DAY, 3 * DAY, 7 * DAY, 14 * DAY, 30 * DAY, 91 * DAY)


def nice_step(span: float, count: int = 5) -> float:
    """The 1-2-2.5-5 × 10ⁿ step that cuts `span` into at most about `count` pieces."""
    if span <= 0 or not math.isfinite(span):
        return 1.0
    raw = span / max(1, count)
    magnitude = 10.0 ** math.floor(math.log10(raw))
    for factor in (1, 2, 2.5, 5, 10):
        if raw <= factor * magnitude * (1 + 1e-9):
            return factor * magnitude
    return 10 * magnitude


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values that cover [low, high]: the first ≤ low, the last ≥ high, evenly stepped.

    A flat series (low == high) gets a small range around its value, so its line sits mid-chart."""
    if high < low:
        low, high = high, low
    if high == low:
        pad = abs(low) * 0.1 or 1.0
        low, high = low - pad, high + pad
    step = nice_step(high - low, count)
    first, last = math.floor(low / step + 1e-9), math.ceil(high / step - 1e-9)
    digits = max(0, -math.floor(math.log10(step)) + 1)
    return [round(i * step, digits) for i in range(first, last + 1)]


def tick_text(value: float, step: float, unit: str = "") -> str:
    """A tick's value with just the decimals its step needs, thousands grouped, then the unit."""
    decimals = 0
    while decimals < 6 and abs(step * 10**decimals - round(step * 10**decimals)) > 1e-6 * max(1.0, step):
        decimals += 1
    text = f"{value:,.{decimals}f}"
    if text.startswith("-") and float(value) == 0:
        text = text[1:]
    return f"{text} {unit}".strip()


def time_ticks(low: datetime, high: datetime, count: int = 5) -> list[tuple[datetime, str]]:
    """Ticks on whole UTC hours or days between `low` and `high`, at most about `count`, each with its
    label: "06:00" on the hour and "3 Dec" at midnight, or the day alone for day steps."""
    start, end = low.timestamp(), high.timestamp()
    span = max(end - start, HOUR)
    step = next((s for s in TIME_STEPS if span / s <= count), TIME_STEPS[-1])
    first = math.ceil(start / step) * step
    ticks = []
    moment = first
    while moment <= end + 1e-6:
        at = datetime.fromtimestamp(moment, tz=UTC)
        on_the_hour = step < DAY and (at.hour or at.minute)
        ticks.append((at, f"{at:%H:%M}" if on_the_hour else f"{at.day} {at:%b}"))
        moment += step
    return ticks


def time_series_chart(
    series: list[tuple[str, list[tuple[datetime, float]]]],
    *,
    unit: str,
    y_title: str,
    x_title: str,
    width: int = 640,
    height: int = 260,
    y_count: int = 5,
    x_count: int = 6,
    font: int = 11,
    labels_inside: bool = False,
) -> SafeString:
    """Lines over time with a y axis (round ticks with the unit, gridlines), a time axis (hours or
    days), both axis titles and a legend naming each series. Series are drawn in PALETTE order, the
    first dashed so the two read apart without colour; each point carries its value as a tooltip.

    `labels_inside` writes the y ticks just above their gridlines, inside the plot, so a phone-width
    drawing gives the whole width to the lines instead of to a column of labels."""
    points = [point for _, values in series for point in values]
    if not points:
        return mark_safe('<p class="muted small">No observations in this window to chart.</p>')
    y_ticks = nice_ticks(min(p[1] for p in points), max(p[1] for p in points), y_count)
    y_step = y_ticks[1] - y_ticks[0] if len(y_ticks) > 1 else 1.0
    y_labels = [tick_text(v, y_step, unit) for v in y_ticks]
    x_lo, x_hi = min(p[0] for p in points), max(p[0] for p in points)
    if x_lo == x_hi:  # one moment: a day (or an hour) either side, so the point has room
        pad = timedelta(hours=1) if x_lo.minute or x_lo.hour else timedelta(days=1)
        x_lo, x_hi = x_lo - pad, x_hi + pad
    x_ticks = time_ticks(x_lo, x_hi, x_count)
    char = font * 0.6
    legend_h = font + 8
    left = 2 if labels_inside else int(max(len(label) for label in y_labels) * char) + 10
    # room on the right for half of a centred date label at the last tick
    right, top, bottom = int(3 * char) + 4, 2 * legend_h + 6 + (font if labels_inside else 0), 2 * font + 16
    plot_w, plot_h = width - left - right, height - top - bottom
    y_lo, y_hi = y_ticks[0], y_ticks[-1]
    t_lo, t_span = x_lo.timestamp(), (x_hi.timestamp() - x_lo.timestamp()) or 1.0

    def sx(moment: datetime) -> float:
        return left + (moment.timestamp() - t_lo) / t_span * plot_w

    def sy(value: float) -> float:
        return top + (1 - (value - y_lo) / ((y_hi - y_lo) or 1)) * plot_h

    names = " and ".join(label for label, _ in series)
    parts = [
        f'<svg class="chart time-series" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{escape(y_title)} over time: {escape(names)}" font-size="{font}">',
        f'<text class="axis-title" x="1" y="{font}" fill="{MUTED}">{escape(y_title)}</text>',
    ]
    legend_x = 1.0
    for index, (label, _) in enumerate(series):
        color = PALETTE[index % len(PALETTE)]
        dash = ' stroke-dasharray="5 3"' if index == 0 and len(series) > 1 else ""
        baseline_y = legend_h + font + 2
        parts.append(
            f'<g class="legend-item"><line x1="{legend_x:.1f}" y1="{baseline_y - font / 3:.1f}" '
            f'x2="{legend_x + 18:.1f}" y2="{baseline_y - font / 3:.1f}" stroke="{color}" stroke-width="2.5"{dash}/>'
            f'<text x="{legend_x + 23:.1f}" y="{baseline_y}" fill="{INK}">{escape(label)}</text></g>'
        )
        legend_x += 23 + char * len(label) + 16
    overlay: list[str] = []
    for value, text in zip(y_ticks, y_labels, strict=True):
        y = sy(value)
        label = (
            f'<text class="tick inside" x="{left + 3}" y="{y - 3:.1f}" fill="{MUTED}" stroke="#fff" '
            f'stroke-width="3" paint-order="stroke">{escape(text)}</text>'
            if labels_inside
            else f'<text class="tick" x="{left - 6}" y="{y + font / 3:.1f}" text-anchor="end" fill="{MUTED}">'
            f"{escape(text)}</text>"
        )
        parts.append(
            f'<line class="grid" x1="{left}" y1="{y:.1f}" x2="{width - right}" y2="{y:.1f}" stroke="{GRID}"/>'
        )
        (overlay if labels_inside else parts).append(label)  # inside the plot: over the lines
    for moment, text in x_ticks:
        x = sx(moment)
        # A label that would run off either edge is anchored to its tick from the inside instead.
        half = len(text) * char / 2
        anchor = "start" if x - half < 1 else "end" if x + half > width - 1 else "middle"
        parts.append(
            f'<line class="grid" x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{top + plot_h}" stroke="{GRID}"/>'
            f'<text class="tick" x="{max(1.0, x):.1f}" y="{top + plot_h + font + 4}" text-anchor="{anchor}" '
            f'fill="{MUTED}">{escape(text)}</text>'
        )
    parts.append(
        f'<path class="axis" d="M{left},{top}V{top + plot_h}H{width - right}" stroke="{AXIS}" fill="none"/>'
        f'<text class="axis-title" x="{left + plot_w / 2:.1f}" y="{height - 3}" text-anchor="middle" '
        f'fill="{MUTED}">{escape(x_title)}</text>'
    )
    for index, (label, values) in enumerate(series):
        color = PALETTE[index % len(PALETTE)]
        dash = ' stroke-dasharray="5 3"' if index == 0 and len(series) > 1 else ""
        path = " ".join(f"{sx(at):.1f},{sy(v):.1f}" for at, v in values)
        parts.append(
            f'<polyline class="series" fill="none" stroke="{color}" stroke-width="2"{dash} points="{path}"/>'
        )
        if len(values) <= 120:  # a dot per bucket while they stay apart, each with its value
            parts.extend(
                f'<circle cx="{sx(at):.1f}" cy="{sy(v):.1f}" r="2.6" fill="{color}">'
                f"<title>{escape(label)}, {at:%d %b %H:%M} UTC: {escape(tick_text(v, y_step / 100, unit))}"
                "</title></circle>"
                for at, v in values
            )
    parts.extend(overlay)
    parts.append("</svg>")
    return mark_safe("".join(parts))
