"""A newest-first page of observations without sorting the table: read it in time bands.

No index orders every metric's rows by time (a B-tree on observed_at cost ingest 12–19 % more
PostgreSQL CPU), so `ORDER BY observed_at DESC … LIMIT 50` over all metrics sorted every row. The
page instead asks for one statement of disjoint time bands, nearest the anchor first — the cursor's
moment, else `until`, else now — each 8 times wider than the one before (an hour, 8 hours, 64
hours, … and finally everything beyond), each sorted and cut to the page by itself:

    (SELECT … WHERE observed_at >= anchor - 1h ORDER BY … LIMIT n)
    UNION ALL (SELECT … WHERE observed_at >= anchor - 8h AND observed_at < anchor - 1h …)
    …
    LIMIT n OFFSET k

The bands partition time and follow the page's order, so the rows come out in the page's order, and
PostgreSQL's Append pulls a band only while the page still needs rows: a page of recent rows reads
the first band or two and never touches the rest. Each band finds its rows through the BRIN index on
observed_at (migration 0011: a few pages, nearly free at ingest; the unsummarised newest block ranges
are always read, and they hold the newest rows) and the months' partitions its bounds prune to. The
first band has no bound on the far side of the anchor, so rows after it (a clock ahead, `until`
absent) are still first. The answer is the plain ORDER BY query's, whatever the data's spread; only
its cost depends on it.
"""

from __future__ import annotations

from datetime import datetime, timedelta

FIRST_BAND = timedelta(hours=1)
GROWTH = 8
BANDS = 7  # 1 h … 8**5 h (3.7 years), then the rest of time


# Distances from the anchor at which one band ends and the next begins.
EDGES = tuple(FIRST_BAND * GROWTH**n for n in range(BANDS - 1))


def banded(select: str, where: str, params: list, order: str, *, descending: bool, anchor: datetime,
           offset: int, limit: int) -> tuple[str, list]:  # fmt: skip
    """One statement reading `select … WHERE where ORDER BY order` band by band away from `anchor`
    (backwards in time when `descending`), its rows and `LIMIT limit OFFSET offset` those of the
    plain query."""
    edges = [anchor - edge if descending else anchor + edge for edge in EDGES]
    near, far = (">=", "<") if descending else ("<", ">=")
    parts, all_params = [], []
    for index in range(len(edges) + 1):
        bounds, bound_params = [], []
        if index < len(edges):  # the band's far edge
            bounds.append(f"observed_at {near} %s")
            bound_params.append(edges[index])
        if index > 0:  # its near edge: where the band before it ended
            bounds.append(f"observed_at {far} %s")
            bound_params.append(edges[index - 1])
        parts.append(f"({select} WHERE {where} AND {' AND '.join(bounds)} ORDER BY {order} LIMIT %s)")
        all_params.extend([*params, *bound_params, offset + limit])
    sql = f"SELECT * FROM ({' UNION ALL '.join(parts)}) AS page LIMIT %s OFFSET %s"
    return sql, [*all_params, limit, offset]
