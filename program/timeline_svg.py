"""The program timeline as one server-rendered SVG: a month axis (M1… and calendar months), per phase
its planned bar, what actually happened and the slip, numbered gate markers coloured by status, and
today's line. Colours are SVG attributes and classes (the CSP forbids inline styles); the page wraps
it in a scrolling box so it keeps its size on a phone."""

from __future__ import annotations

from html import escape

from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe

from program.selectors import Timeline

WIDTH, LABEL_W, RIGHT_PAD = 980, 190, 14
AXIS_H, ROW_H = 44, 58
INK, MUTED, GRID, PLANNED = "#1d2330", "#667085", "#e3e6eb", "#c5ccd8"
TODAY = "#c0392b"
ACTUAL = {"completed": "#1f8a4c", "active": "#2f5bd3"}
GATE = {
    "passed": "#1f8a4c",
    "failed": "#c0392b",
    "waived": "#b7791f",
    "ready": "#b7791f",
    "open": "#8a94a6",
    "closed": "#5b6b86",
}
# Text colours, as app.css's --fail, --pass and --muted: at least 4.5:1 on the white plot.
SLIP = {"late": "#b03224", "early": "#17743f", "even": "#5c6677"}


def _x(percent: float) -> float:
    return LABEL_W + percent / 100 * (WIDTH - LABEL_W - RIGHT_PAD)


def _text(
    x: float, y: float, body: str, *, size: int = 11, fill: str = MUTED, anchor: str = "start", cls: str = ""
) -> str:
    klass = f' class="{cls}"' if cls else ""
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" fill="{fill}" text-anchor="{anchor}"{klass}>'
        f"{escape(body)}</text>"
    )


def _axis(timeline: Timeline, bottom: float) -> list[str]:
    parts = []
    for index, tick in enumerate(timeline.ticks):
        x0, x1 = _x(tick.left), _x(tick.left + tick.width)
        if index % 2:
            parts.append(
                f'<rect x="{x0:.1f}" y="0" width="{x1 - x0:.1f}" height="{bottom:.1f}" fill="#f6f7f9"/>'
            )
        parts.append(f'<line x1="{x0:.1f}" y1="0" x2="{x0:.1f}" y2="{bottom:.1f}" stroke="{GRID}"/>')
        middle = (x0 + x1) / 2
        parts.append(_text(middle, 15, f"M{tick.number}", size=11, fill=INK, anchor="middle", cls="tl-month"))
        parts.append(_text(middle, 30, tick.calendar, size=10, anchor="middle", cls="tl-calendar"))
    return parts


def _slip_colour(days: int | None, status: str) -> str:
    if days is None or status == "planned":
        return SLIP["even"]
    return SLIP["late"] if days > 0 else SLIP["early"] if days < 0 and status == "completed" else SLIP["even"]


def timeline_svg(timeline: Timeline) -> SafeString:
    height = AXIS_H + ROW_H * len(timeline.bars) + 8
    bottom = height - 4
    # role group, not img: an image's children are presentational, and the gate markers are links.
    parts = [
        f'<svg class="timeline-chart" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" '
        f'role="group" aria-labelledby="timeline-title">',
        '<title id="timeline-title">Phases planned against what happened, with gates and today</title>',
        *_axis(timeline, bottom),
    ]
    for row, bar in enumerate(timeline.bars):
        top = AXIS_H + row * ROW_H
        phase = bar.phase
        parts.append(f'<line x1="0" y1="{top:.1f}" x2="{WIDTH}" y2="{top:.1f}" stroke="{GRID}"/>')
        parts.append(_text(4, top + 17, phase.name, size=13, fill=INK, cls="tl-phase"))
        parts.append(_text(4, top + 34, phase.status, size=10, cls="tl-status"))
        parts.append(
            _text(
                4,
                top + 49,
                bar.slip_text,
                size=11,
                fill=_slip_colour(bar.slip_days, phase.status),
                cls="tl-slip",
            )
        )
        x, w = _x(bar.planned[0]), _x(bar.planned[0] + bar.planned[1]) - _x(bar.planned[0])
        parts.append(
            f'<rect class="tl-planned" x="{x:.1f}" y="{top + 8:.1f}" width="{max(w, 1):.1f}" height="8" rx="3" '
            f'fill="{PLANNED}"><title>planned {phase.planned_start:%-d %b %Y} – {phase.planned_end:%-d %b %Y}'
            f"</title></rect>"
        )
        if bar.actual:
            x, w = _x(bar.actual[0]), _x(bar.actual[0] + bar.actual[1]) - _x(bar.actual[0])
            finish = f"{phase.actual_end:%-d %b %Y}" if phase.actual_end else "now"
            parts.append(
                f'<rect class="tl-actual {phase.status}" x="{x:.1f}" y="{top + 19:.1f}" width="{max(w, 2):.1f}" '
                f'height="12" rx="3" fill="{ACTUAL.get(phase.status, INK)}">'
                f"<title>actual {phase.actual_start:%-d %b %Y} – {finish}</title></rect>"
            )
    marks = timeline.gate_marks
    for index, mark in enumerate(marks):
        x, y = _x(mark.left), AXIS_H + mark.row * ROW_H + 44
        colour = GATE.get(mark.gate.status, MUTED)
        # A marker close before the next one on its row gets its number on the left, so both read.
        crowded = any(other.row == mark.row and 0 <= _x(other.left) - x < 26 for other in marks[index + 1 :])
        label_x, anchor = (x - 9, "end") if crowded else (x + 9, "start")
        href = reverse("program:gate", args=[mark.gate.pk])
        parts.append(
            f'<a class="tl-gate {mark.gate.status}" href="{href}">'
            f"<title>{mark.number}. {escape(mark.gate.name)} — {mark.gate.status}, due "
            f"{mark.gate.due_date:%-d %b %Y}</title>"
            f'<path d="M{x:.1f},{y - 7:.1f}l7,7l-7,7l-7,-7z" fill="{colour}" stroke="#fff" stroke-width="1"/>'
            f"{_text(label_x, y + 4, str(mark.number), size=10, fill=colour, anchor=anchor)}</a>"
        )
    if timeline.today_left is not None:
        x = _x(timeline.today_left)
        parts.append(
            f'<line class="tl-today" x1="{x:.1f}" y1="{AXIS_H - 6}" x2="{x:.1f}" y2="{bottom:.1f}" '
            f'stroke="{TODAY}" stroke-width="2" stroke-dasharray="5 4"/>'
        )
        anchor = "end" if timeline.today_left > 85 else "start"
        offset = -4 if anchor == "end" else 4
        parts.append(
            _text(
                x + offset, AXIS_H - 4, f"today {timeline.today:%-d %b}", size=10, fill=TODAY, anchor=anchor
            )
        )
    parts.append("</svg>")
    return mark_safe("".join(parts))
