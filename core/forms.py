"""Showing a service's refusal on the page form that asked for it.

A refusal never looks like success: the page answers with the service's status (400 for bad input,
409 when someone else changed the object first) and the bound form keeps what the person typed.
Permission refusals (PermissionDenied) are not caught here: they reach the styled 403 page."""

from __future__ import annotations

from django import forms

from core.errors import ApplicationError


def add_service_error(form: forms.Form, exc: ApplicationError, *, fallback_field: str | None = None) -> int:
    """Put each error on the field it names when the form has that field; otherwise the message goes
    on `fallback_field` for bad input (400) or on the form as a whole (conflicts). A refusal of several
    rows also keeps its summary on the form. Returns the status the page answers with."""
    named = [error for error in exc.errors if error.get("field") in form.fields]
    for error in named:
        form.add_error(error["field"], error["message"])
    if not named:
        form.add_error(fallback_field if exc.status == 400 else None, exc.message)
    elif len(exc.errors) > 1:
        form.add_error(None, exc.message)
    return exc.status
