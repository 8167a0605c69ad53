"""My API tokens page (/account/tokens/): make one (its secret shown once, with a copy button), list
them, revoke one. Each person sees and revokes only their own (someone else's is a 404).

The forms post through htmx and get the panel back; without JavaScript they post normally and get the
whole page. A new secret is rendered into that one answer and never again: it is not stored."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from core.errors import ApplicationError
from core.models import ApiToken
from core.pages.form_submit import form_submit
from core.pages.htmx import HtmxHttpRequest
from core.pages.tokens_forms import TokenForm
from core.roles import acting_user
from core.services.api_tokens import IssuedToken, api_token_create, api_token_revoke


def _render(
    request: HtmxHttpRequest, form: TokenForm, *, issued: IssuedToken | None = None, status: int = 200
) -> HttpResponse:
    context: dict[str, Any] = {
        "form": form,
        "issued": issued,
        "tokens": ApiToken.objects.filter(user=acting_user(request)).order_by("-created_at", "-pk"),
    }
    template = "core/_tokens_panel.html" if request.htmx else "core/tokens.html"
    return render(request, template, context, status=status)


@never_cache  # the answer to a creation shows the new secret
@require_http_methods(["GET", "POST"])
def tokens_page(request: HtmxHttpRequest) -> HttpResponse:
    if request.method != "POST":
        return _render(request, TokenForm())
    form = TokenForm(request.POST)
    sent = form_submit(form, lambda data: api_token_create(actor=acting_user(request), **data))
    if not sent.ok:
        return _render(request, form, status=sent.status)
    made = sent.value
    messages.success(request, f"Token “{made.token.name}” created. Copy it now: it is not shown again.")
    return _render(request, TokenForm(), issued=made)


@require_POST
def token_revoke(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    token = get_object_or_404(ApiToken, pk=pk, user=acting_user(request))
    try:
        api_token_revoke(actor=acting_user(request), token=token, reason="revoked on the tokens page")
        messages.success(request, f"Token “{token.name}” ({token.prefix}…) revoked: it works no more.")
        status = 200
    except ApplicationError as exc:
        messages.info(request, f"Token “{token.name}”: {exc.message}")
        status = exc.status
    if request.htmx:
        return _render(request, TokenForm(), status=status)
    return redirect("account-tokens")
