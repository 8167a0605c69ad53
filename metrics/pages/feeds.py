"""The feeds page: for each metric, when values last arrived per system and source, and which are stale."""

from __future__ import annotations

from itertools import groupby
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from metrics.models import MetricDefinition
from metrics.selectors.feeds import STALE_AFTER_INTERVALS, Feed, feed_interval, feeds_list, interval_words


@require_GET
def feeds_page(request: HttpRequest) -> HttpResponse:
    feeds = feeds_list()
    by_metric = {metric: list(rows) for metric, rows in groupby(feeds, key=lambda f: f.metric)}
    # Active definitions without a single value yet are listed too: a feed that never started.
    active = MetricDefinition.objects.filter(status=MetricDefinition.Status.ACTIVE).order_by("key")
    sections = [_section(d, by_metric.pop(d.ref, [])) for d in active]
    # Older versions still holding values come after the active ones.
    older = {f.definition_id for rows in by_metric.values() for f in rows}
    for definition in MetricDefinition.objects.filter(pk__in=older).order_by("key", "-version"):
        sections.append(_section(definition, by_metric[definition.ref]))
    return render(
        request,
        "metrics/feeds.html",
        {
            "sections": sections,
            "stale_count": sum(f.stale for f in feeds),
            "feed_count": len(feeds),
            "stale_after": STALE_AFTER_INTERVALS,
        },
    )


def _section(definition: MetricDefinition, feeds: list[Feed]) -> dict[str, Any]:
    return {"definition": definition, "interval": interval_words(feed_interval(definition)), "feeds": feeds}
