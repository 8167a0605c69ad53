"""The comparison page's slicing: its tag-filter text, the group-by choices and the small multiples.

The page takes the API's own parameters (`tags.<key>`, `group_by`), so a link from either works on
both; its text box `tags` ("severity=sev1,sev2; cluster=a") is turned into those parameters first.
The small multiples put every group's relative performance and interval on one shared scale, so the
cards can be compared at a glance.
"""

from __future__ import annotations

import re
from html import escape
from typing import Any

from django.http import QueryDict
from django.utils.safestring import SafeString, mark_safe

from core.charts import INK, MUTED, PALETTE, _fmt
from core.replica import read_connection
from metrics.selectors.comparison import Comparison
from metrics.selectors.comparison.tags import PREFIX, tag_filters_from_text
from metrics.wording import verdict_words

TAGS_FIELD = "tags"
METRIC_REF = re.compile(r"[-a-zA-Z0-9_]{1,100}(@[0-9]{1,9})?")
# Tag keys to offer for group_by: those of the metric's newest rows (the time index, newest first).
RECENT_KEYS_SQL = """
SELECT DISTINCT key FROM (
    SELECT o.tags FROM metrics_observation o
    WHERE o.definition_id IN (SELECT id FROM metrics_metricdefinition WHERE key = %s)
    ORDER BY o.observed_at DESC LIMIT 2000
) recent, jsonb_object_keys(recent.tags) AS key
ORDER BY key LIMIT 50
"""
COLOURS = {"better": PALETTE[3], "worse": "#c2410c", "no_difference": PALETTE[0], "insufficient_data": MUTED}


def tags_as_text(params: QueryDict) -> str:
    """The `tags.<key>` parameters of a link, shown back in the text box."""
    parts = []
    for name in params:
        if name.startswith(PREFIX):
            parts.append(f"{name[len(PREFIX) :]}={','.join(params.getlist(name))}")
    return "; ".join(parts)


def page_params(get: QueryDict) -> QueryDict:
    """The API's parameters from the page's: empty fields dropped, the text box as `tags.<key>`."""
    params = QueryDict(mutable=True)
    for name in get:
        if name == TAGS_FIELD:
            continue
        values = [v for v in get.getlist(name) if v]
        if values:
            params.setlist(name, values)
    for key, values in tag_filters_from_text(get.get(TAGS_FIELD, ""), field=TAGS_FIELD).items():
        params.setlist(PREFIX + key, [*params.getlist(PREFIX + key), *values])
    return params


def recent_tag_keys(metric: str) -> list[str]:
    """One query: the tag keys of the metric's newest rows (any version of the key). Not a metric
    reference (key or key@N): none, and no query; the comparison names what is wrong."""
    if not METRIC_REF.fullmatch(metric):
        return []
    key = metric.split("@", 1)[0]
    with read_connection().cursor() as cursor:
        cursor.execute(RECENT_KEYS_SQL, [key])
        return [row[0] for row in cursor.fetchall()]


def group_cards(result: Comparison, *, width: int = 260) -> list[dict[str, Any]]:
    """Per group: its comparison and a strip of its relative performance and interval, on a scale
    shared by every group (and 1×, no change)."""
    values = [1.0]
    for group in result.groups:
        c = group.comparison
        values += [v for v in [c.relative_performance, *(c.relative_performance_ci or ())] if v is not None]
    lo, hi = min(values), max(values)
    pad = (hi - lo) * 0.1 or 0.1
    lo, hi = lo - pad, hi + pad
    return [
        {
            "value": g.value,
            "comparison": g.comparison,
            "svg": _strip(g.value, g.comparison, lo, hi, width),
            "badge": verdict_words(
                verdict=g.comparison.verdict,
                statistic=g.comparison.statistic,
                baseline_n=g.comparison.baseline.n,
                candidate_n=g.comparison.candidate.n,
                alpha=g.comparison.alpha,
                min_samples=g.comparison.min_samples,
            ),
        }
        for g in result.groups
    ]


def _strip(name: str, comparison: Comparison, lo: float, hi: float, width: int) -> SafeString:
    left = right = 10
    height, mid = 46, 20

    def sx(v: float) -> float:
        return left + (v - lo) / (hi - lo) * (width - left - right)

    ratio, ci = comparison.relative_performance, comparison.relative_performance_ci
    colour = COLOURS.get(comparison.verdict, INK)
    label = f"{name}: relative performance {_fmt(ratio) if ratio is not None else 'none'}"
    parts = [
        f'<svg class="chart strip" viewBox="0 0 {width} {height}" role="img" aria-label="{escape(label)}">',
        f'<line x1="{left}" y1="{mid}" x2="{width - right}" y2="{mid}" stroke="#d0d5dd"/>',
        f'<line x1="{sx(1):.1f}" y1="{mid - 12}" x2="{sx(1):.1f}" y2="{mid + 12}" stroke="{MUTED}"/>',
        f'<text x="{sx(1):.1f}" y="{height - 2}" text-anchor="middle" font-size="10" fill="{MUTED}">1×</text>',
        f'<text x="{left}" y="{height - 2}" font-size="10" fill="{MUTED}">{_fmt(lo)}×</text>',
        f'<text x="{width - right}" y="{height - 2}" text-anchor="end" font-size="10" fill="{MUTED}">'
        f"{_fmt(hi)}×</text>",
    ]
    if ci:
        parts.append(
            f'<line x1="{sx(ci[0]):.1f}" y1="{mid}" x2="{sx(ci[1]):.1f}" y2="{mid}" stroke="{colour}" '
            f'stroke-width="6" stroke-linecap="round" opacity=".55"><title>interval {_fmt(ci[0])} – '
            f"{_fmt(ci[1])}</title></line>"
        )
    if ratio is not None:
        parts.append(
            f'<circle cx="{sx(ratio):.1f}" cy="{mid}" r="5" fill="#fff" stroke="{colour}" stroke-width="2.5">'
            f"<title>{escape(label)}</title></circle>"
        )
    parts.append("</svg>")
    return mark_safe("".join(parts))
