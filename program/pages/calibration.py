"""The gate page's "Calibration" disclosure: loaded by htmx when opened, so the gate page itself
runs the same queries as before whatever the number of criteria."""

from __future__ import annotations

from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from core.pages.htmx import HtmxHttpRequest
from program import policies
from program.calibration import calibration_criterion_get, criterion_calibration
from program.calibration_reading import calibration_reading, enough_samples, straddles
from program.calibration_svg import calibration_svg
from program.models import Criterion


@require_GET
def criterion_calibration_panel(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    try:
        criterion = calibration_criterion_get(pk)
    except Criterion.DoesNotExist:
        raise Http404(f"No criterion {pk}.") from None
    if not policies.may_read(request.user, criterion.gate.phase.program):
        raise Http404(f"No criterion {pk}.")
    calibration = criterion_calibration(criterion)
    judged = [p for p in calibration.points if enough_samples(p, criterion)]
    # The gate page's disclosure gets the fragment; a link followed without JavaScript, a page.
    template = "program/_calibration.html" if request.htmx else "program/calibration_page.html"
    return render(
        request,
        template,
        {
            "criterion": criterion,
            "calibration": calibration,
            "reading": calibration_reading(calibration),
            "chart": calibration_svg(calibration),
            "hollow": any(p.value is None for p in calibration.points),
            # Newest first: the table answers "what would it have said last month?".
            "rows": [
                {"point": p, "straddles": straddles(p, calibration.threshold)} for p in reversed(judged)
            ],
        },
    )
