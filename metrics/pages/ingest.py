"""The ingest page of a metric: upload a file or paste rows → preview → confirm.

Only users the batch API lets push observations (its write rule, metrics.add_observation) open it or
post to it; anyone else gets the styled 403, before any input is read. The preview and the write are
the ingest service's (metrics.ingest), so a row passes here exactly when it passes the API. The
preview writes nothing; it makes an Idempotency-Key that the confirmation carries, so a confirmation
sent twice (a reload, a double click) is the service's replay, not a second batch."""

from __future__ import annotations

import uuid
from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse

from core.errors import ApplicationError
from core.roles import acting_user
from metrics import ingest, selectors
from metrics.api.write_rules import WRITE_RULES
from metrics.models import MetricDefinition, System, Workload
from metrics.pages.ingest_forms import IngestConfirmForm, IngestPreviewForm, content_type
from metrics.pages.ingest_snippets import example_csv, ingest_ref, push_snippets

INGEST_RULE = WRITE_RULES["observations_ingest"]
SOURCE = "ingest page"
# A page lists this many row problems; the count says how many more there are.
ERRORS_SHOWN = 200
MSG_LOST = "The confirmation lost its rows: preview them again."
COLUMNS = ("metric", "system", "workload", "value", "unit", "observed_at", "run_id")


def may_ingest(user: Any) -> bool:
    return INGEST_RULE.allows(user)


def _definition(key: str) -> MetricDefinition:
    try:
        if "@" in key:
            return selectors.definition_resolve(key, field="key", in_path=True)
        return selectors.definition_get(key)
    except ApplicationError as exc:
        raise Http404(exc.message) from exc


def _row_cells(row: Any) -> list[tuple[str, str]] | None:
    """A read row's (column, text) pairs, or None for a line that is not an object."""
    if not isinstance(row, dict):
        return None
    return [(name, "" if row.get(name) is None else str(row.get(name))) for name in COLUMNS]


def _preview_context(preview: ingest.IngestPreview) -> dict[str, Any]:
    by_row: dict[int, list[dict[str, Any]]] = {}
    for error in preview.errors:
        by_row.setdefault(error["index"], []).append(error)
    return {
        "preview": preview,
        "errors": [{**error, "row": error["index"] + 1} for error in preview.errors[:ERRORS_SHOWN]],
        "errors_more": max(0, len(preview.errors) - ERRORS_SHOWN),
        "first_rows": [
            {"row": index + 1, "cells": _row_cells(row), "problems": len(by_row.get(index, []))}
            for index, row in enumerate(preview.first_rows)
        ],
    }


def ingest_page(request: HttpRequest, key: str) -> HttpResponse:
    if not may_ingest(request.user):
        raise PermissionDenied(INGEST_RULE.refusal)
    definition = _definition(key)
    context: dict[str, Any] = {"definition": definition, "ref": ingest_ref(definition), "columns": COLUMNS}
    form = IngestPreviewForm()
    status = 200
    if request.method == "POST" and "confirm" in request.POST:
        confirm = IngestConfirmForm(request.POST)
        if not confirm.is_valid():
            context["refusal_message"] = MSG_LOST
            return _render(request, definition, form, context, status=400)
        data = confirm.cleaned_data
        try:
            result = ingest.observations_ingest(
                body=data["text"].encode(),
                content_type=content_type(data["format"]),
                actor=acting_user(request),
                source=SOURCE,
                idempotency_key=data["key"],
            )
        except ApplicationError as exc:
            # The rows changed meaning since the preview (a version deprecated in between): show why.
            form = IngestPreviewForm(initial={"text": data["text"], "format": data["format"]})
            context["refusal_message"] = exc.message
            context["refusal"] = [{**e, "row": e["index"] + 1} for e in exc.errors if "index" in e]
            status = exc.status
        else:
            _say_stored(request, result)
            return redirect(reverse("metrics:detail", kwargs={"key": definition.ref}))
    elif request.method == "POST":
        form = IngestPreviewForm(request.POST, request.FILES)
        if form.is_valid():
            text, fmt = form.cleaned_data["text"], form.cleaned_data["format"]
            try:
                preview = ingest.observations_preview(body=text.encode(), content_type=content_type(fmt))
            except ApplicationError as exc:
                form.add_error(None, exc.message)
                status = exc.status
            else:
                context.update(_preview_context(preview))
                # The text goes back into the box, to fix a row there and preview again.
                form = IngestPreviewForm(initial={"text": text, "format": fmt})
                if not preview.errors:
                    context["confirm"] = IngestConfirmForm(
                        initial={"text": text, "format": fmt, "key": f"page-{uuid.uuid4()}"}
                    )
        else:
            status = 400
    return _render(request, definition, form, context, status=status)


def _render(
    request: HttpRequest,
    definition: MetricDefinition,
    form: IngestPreviewForm,
    context: dict[str, Any],
    *,
    status: int,
) -> HttpResponse:
    # The example rows name real systems and workloads, so a copied line passes as it is.
    system = System.objects.order_by("-key").values_list("key", flat=True).first() or "SYSTEM"
    workload = Workload.objects.order_by("key").values_list("key", flat=True).first() or "WORKLOAD"
    context.update(
        {
            "form": form,
            "snippets": push_snippets(request, definition, system=system, workload=workload),
            "example": example_csv(definition, system, workload),
            "has_observations": definition.observations.exists(),
        }
    )
    return render(request, "metrics/ingest.html", context, status=status)


def _say_stored(request: HttpRequest, result: ingest.IngestResult) -> None:
    if result.replayed:
        messages.info(
            request,
            f"These rows were already stored (batch #{result.batch_id}): nothing was written again.",
        )
        return
    duplicates = f"; {result.duplicates} were already there" if result.duplicates else ""
    messages.success(
        request,
        f"Stored {result.inserted} of {result.received} observations (batch #{result.batch_id}){duplicates}.",
    )
