"""{% overrides_panel %}: the break-glass panel the freeze list includes in one line."""

from typing import Any

from django import template
from django.template import Context

from freeze.pages.overrides import overrides_panel_context

register = template.Library()


@register.inclusion_tag("freeze/_overrides.html", takes_context=True)
def overrides_panel(context: Context) -> dict[str, Any]:
    # An inclusion tag renders in a fresh context: hand the CSRF token to the panel's forms.
    return {**overrides_panel_context(context["request"]), "csrf_token": context.get("csrf_token")}
