"""Showing a service's refusal on the page form that asked for it."""

from __future__ import annotations

from django import forms
from django.core.exceptions import PermissionDenied

from core.errors import ApplicationError

# What services raise when they say no; pages catch exactly these.
SERVICE_ERRORS = (ApplicationError, PermissionDenied)


def error_message(exc: Exception) -> str:
    return exc.message if isinstance(exc, ApplicationError) else str(exc)


def add_service_error(form: forms.Form, exc: Exception, *, fallback_field: str | None = None) -> None:
    """On the field the error names when the form has it; bad input (400) on `fallback_field`;
    anything else (permissions, conflicts) on the form as a whole."""
    field = None
    if isinstance(exc, ApplicationError):
        named = exc.errors[0].get("field") if exc.errors else None
        if named in form.fields:
            field = named
        elif exc.status == 400:
            field = fallback_field
    form.add_error(field, error_message(exc))
