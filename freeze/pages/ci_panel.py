"""The "what CI sees" panel of the component and exception pages: the freeze check's own answer
(selectors.freeze_check, as GET /api/v1/freeze/check/ computes it, in the JSON that endpoint sends),
and the curl line CI runs to get it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlencode

from django.http import HttpRequest
from django.urls import reverse

from core.api.plain_json import iso, plain
from freeze import selectors
from freeze.api.check import check_as_dict
from freeze.models import Component
from program.models import Program

# The decision in words, beside the value CI reads.
DECISION_WORDS = {
    "allowed": "may change",
    "needs_approval": "needs an approved exception",
    "forbidden": "may not change",
}


@dataclass(frozen=True)
class CiPanel:
    check: selectors.FreezeCheck
    words: str
    curl: str
    answer: str  # the endpoint's JSON body
    at_now: bool


def ci_panel(
    request: HttpRequest,
    component: Component,
    *,
    at: datetime,
    now: datetime,
    program: Program | None = None,
) -> CiPanel:
    """What the check answers for `component` at `at` (now, unless a later moment matters)."""
    check = selectors.freeze_check(component, at, program)
    query = {"component": component.key}
    if at != now:
        query["at"] = iso(at)
    if program is not None:
        query["program"] = program.slug
    url = f"{request.build_absolute_uri(reverse('freeze-check'))}?{urlencode(query, safe=':')}"
    curl = f'curl -fsS -H "Authorization: Token $RT_TOKEN" "{url}"'
    answer = json.dumps(plain(check_as_dict(check)), indent=2)
    return CiPanel(check, DECISION_WORDS[check.decision], curl, answer, at_now=at == now)
