"""The request a page sees: django-htmx's HtmxMiddleware sets `request.htmx` on every one.

HttpRequest's stubs cannot know a middleware's attribute, so views that read it take this subclass
(django-htmx's own typing recipe); at run time it is the same request object."""

from __future__ import annotations

from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails
