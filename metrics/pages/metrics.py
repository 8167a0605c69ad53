from __future__ import annotations

from datetime import datetime
from typing import Any

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET
from rest_framework.exceptions import ValidationError

from core.api.errors import flatten_errors
from core.audit import transitions_for_many
from core.errors import ApplicationError
from core.pages.htmx import HtmxHttpRequest
from core.roles import METRIC_OWNERS, has_role
from metrics import selectors
from metrics.boundary import boundary_sentence, definition_changes
from metrics.models import MetricDefinition, PullSource, System, point_kind_fits
from metrics.pages.comparison_parts import badge_words, chart_pair, comparison_chart, previous_version_offer
from metrics.pages.comparison_slicing import group_cards, page_params, recent_tag_keys, tags_as_text
from metrics.pages.ingest import may_ingest
from metrics.pages.metrics_forms import ComparisonForm, RegistryFilterForm
from metrics.selectors.comparison.tags import tag_filters_text
from metrics.wording import comparison_sentence, method_described, method_parts


@require_GET
def registry(request: HtmxHttpRequest) -> HttpResponse:
    teams = sorted(set(MetricDefinition.objects.values_list("owner_team", flat=True)))
    form = RegistryFilterForm(request.GET or None, teams=teams)
    filters = form.cleaned_data if form.is_valid() else {}
    definitions = selectors.definitions_latest(
        owner_team=filters.get("owner_team"), status=filters.get("status")
    )
    rows = [(d, boundary_sentence(d)) for d in definitions]
    template = "metrics/_registry_rows.html" if request.htmx else "metrics/registry.html"
    context = {"rows": rows, "form": form, "can_register": has_role(request.user, METRIC_OWNERS)}
    return render(request, template, context)


@require_GET
def metric_detail(request: HttpRequest, key: str) -> HttpResponse:
    """`key`: the active version (else the newest); `key@N`: that version, whatever its status. Either
    way the page shows that version's own observations, and links every other version."""
    try:
        definition = (
            selectors.definition_resolve(key, field="key", in_path=True)
            if "@" in key
            else selectors.definition_get(key)
        )
    except ApplicationError as exc:
        raise Http404(exc.message) from exc
    versions = list(selectors.definition_versions(definition.key))
    history: list[dict[str, Any]] = []
    for newer, older in zip(versions, [*versions[1:], None], strict=True):
        history.append({"definition": newer, "changes": definition_changes(older, newer) if older else []})
    transitions = transitions_for_many(MetricDefinition, [v.pk for v in versions]).order_by("-at")
    series = selectors.series_daily(definition)
    charts = [
        {
            "workload": workload,
            "svg": chart_pair(
                [
                    (system, [(day, median) for day, median, _ in points])
                    for system, points in systems.items()
                ],
                unit=definition.unit,
                y_title=f"median per UTC day, {definition.unit}",
                wide_width=460,  # the width of a card in the page's grid: its text at its own size
            ),
            "counts": {system: sum(n for *_, n in points) for system, points in systems.items()},
        }
        for workload, systems in series.items()
    ]
    return render(
        request,
        "metrics/metric_detail.html",
        {
            "definition": definition,
            "boundary": boundary_sentence(definition),
            "history": history,
            "transitions": transitions,
            "charts": charts,
            "systems": System.objects.all(),
            "versions": versions,
            "pull_sources": _pull_sources(definition, versions),
            "can_manage": has_role(request.user, METRIC_OWNERS),
            "can_ingest": may_ingest(request.user),
            "compare_metric": definition.key if definition.status == "active" else definition.ref,
            "export_limit": f"{settings.OBSERVATION_EXPORT_MAX_ROWS:,}",
            "export_since": _export_since(series, settings.OBSERVATION_EXPORT_MAX_ROWS),
        },
    )


def _export_since(series: dict[str, dict[str, list[tuple[datetime, float, int]]]], limit: int) -> str:
    """Where the page's Download CSV starts: blank for the whole series while it fits the export's row
    limit, else the first UTC day of the newest days that fit, so the button downloads a file instead of
    the export's 400 (the rollups' day counts; the export itself still counts exactly)."""
    per_day: dict[datetime, int] = {}
    for systems in series.values():
        for points in systems.values():
            for day, _, n in points:
                per_day[day] = per_day.get(day, 0) + n
    if sum(per_day.values()) <= limit:
        return ""
    total, since = 0, None
    for day in sorted(per_day, reverse=True):
        total += per_day[day]
        if total > limit:
            break
        since = day
    return (since or max(per_day)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _pull_sources(definition: MetricDefinition, versions: list[MetricDefinition]) -> list[dict[str, Any]]:
    """This metric's Prometheus pull sources (any version: rows are pulled by key, into the active
    version), each saying whether its point kind fits the sampling of the version it feeds."""
    receiving = next((v for v in versions if v.status == MetricDefinition.Status.ACTIVE), definition)
    sources = PullSource.objects.filter(definition__key=definition.key).select_related("system")
    return [
        {
            "source": source,
            "fits": point_kind_fits(source.point_kind, receiving.sampling),
            "receiving": receiving,
        }
        for source in sources.order_by("system__key")
    ]


@require_GET
def comparison_page(request: HtmxHttpRequest) -> HttpResponse:
    data = request.GET.copy()
    if "tags" not in data and any(name.startswith("tags.") for name in data):
        data["tags"] = tags_as_text(request.GET)  # a link with the API's parameters, shown in the box
    metric = request.GET.get("metric")
    form = ComparisonForm(data or None, tag_keys=recent_tag_keys(metric) if metric else ())
    result = error = None
    queries: list[selectors.ComparisonQuery] = []  # the query as resolved: the chart reads its series
    if metric:
        try:
            # The same selector as GET /api/v1/comparisons/ (tests/metrics/test_comparison_callers.py).
            result = selectors.comparison_from_query(page_params(request.GET), resolved=queries.append)
        except ApplicationError as exc:
            # Tag parameters are named in the message's field: which one the page's text box made.
            field = exc.errors[0]["field"] if exc.errors else None
            error = f"{field}: {exc.message}" if field and field.startswith("tags") else exc.message
        except ValidationError as exc:  # from the query contract the API shares
            error = "; ".join(f"{e['field']}: {e['message']}" for e in flatten_errors(exc.detail))
    context: dict[str, Any] = {"form": form, "result": result, "error": error}
    if queries and result is not None:
        query = queries[0]
        context.update(
            chart=comparison_chart(query, result),
            badge=badge_words(result),
            sentence=comparison_sentence(
                statistic=result.statistic,
                direction=result.direction,
                baseline=result.baseline.value,
                candidate=result.candidate.value,
            ),
            method=method_described(result.method),
            method_parts=method_parts(result.method),
            confidence=f"{(1 - result.alpha) * 100:g}",
            sides=[(result.baseline, "baseline"), (result.candidate, "candidate")],
            groups=group_cards(result) if result.group_by else [],
            tags_text=tag_filters_text(result.tags),
            previous=previous_version_offer(query, result, request.GET, request.path),
            # The API's parameters (the tag box as `tags.<key>`): the download link and the API line.
            api_query=page_params(request.GET).urlencode(),
        )
    template = "metrics/_comparison_result.html" if request.htmx else "metrics/comparison.html"
    return render(request, template, context)
