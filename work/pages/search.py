"""The search page: the header's box sends its query here (GET /search/?q=); hits grouped by kind.

The page's own box asks again as one types (htmx), and gets just the results fragment back."""

from __future__ import annotations

from django import forms
from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from core.pages.htmx import HtmxHttpRequest
from work.selectors.search import KINDS, MAX_QUERY, MIN_QUERY, search


class SearchForm(forms.Form):
    q = forms.CharField(label="Search", required=False, max_length=MAX_QUERY, strip=True)
    kind = forms.ChoiceField(
        label="Only",
        required=False,
        choices=[("", "everything"), *((key, kind.label.lower()) for key, kind in KINDS.items())],
        widget=forms.Select(attrs={"id": "search-kind"}),
    )


@require_GET
def search_page(request: HtmxHttpRequest) -> HttpResponse:
    form = SearchForm(request.GET)
    valid = form.is_valid()
    query = form.cleaned_data.get("q", "") if valid else ""
    kind = form.cleaned_data.get("kind", "") if valid else ""
    groups = search(request.user, query, kind=kind) if valid else []
    context = {
        "form": form,
        "query": query,
        "kind": kind,
        "kind_label": KINDS[kind].label if kind else "",
        "groups": groups,
        "found": sum(group.total for group in groups),
        "too_short": valid and 0 < len(query) < MIN_QUERY,
        "min_query": MIN_QUERY,
    }
    template = "work/_search_results.html" if request.htmx else "work/search.html"
    return render(request, template, context, status=200 if valid else 400)
