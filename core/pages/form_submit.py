"""Showing a service's refusal on the page form that asked for it.

A refusal never looks like success: the page answers with the service's status (400 for bad input,
409 when someone else changed the object first) and the bound form keeps what the person typed.
Permission refusals (PermissionDenied) are not caught here: they reach the styled 403 page."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any, Generic, TypeVar, cast

from django import forms
from django.forms.utils import pretty_name

from core.errors import ApplicationError


def field_labels(form: forms.Form) -> dict[str, str]:
    """Each field's name → the label the page shows, plus the labels of fields the service checks
    against but the form does not have (a form's `other_field_labels`, e.g. the incident's detected
    time on the resolve form)."""
    labels = {name: str(field.label or pretty_name(name)) for name, field in form.fields.items()}
    return {**getattr(form, "other_field_labels", {}), **labels}


def in_labels(message: str, labels: Mapping[str, str]) -> str:
    """A service message as the page says it: each field name in it ("detected_at must not be before
    opened_at.") becomes the field's label ("Detected at must not be before opened at."). The API keeps
    the names, its fields' JSON names. Only snake_case names are replaced: a one-word name ("title")
    is also an ordinary word of the sentence."""
    for name in sorted((n for n in labels if "_" in n), key=len, reverse=True):
        message = re.sub(rf"\b{re.escape(name)}\b", partial(_said, label=labels[name]), message)
    return message


def _said(match: re.Match[str], label: str) -> str:
    """The label as a sentence has it: capitalised where a sentence starts, else in lower case (but an
    acronym label, "URL", stays)."""
    before = match.string[: match.start()].rstrip()
    starts = not before or before.endswith((".", ":"))
    return label if starts or label[:2].isupper() else label[0].lower() + label[1:]


def add_service_error(form: forms.Form, exc: ApplicationError, *, fallback_field: str | None = None) -> int:
    """Put each error on the field it names when the form has that field; otherwise the message goes
    on `fallback_field` for bad input (400) or on the form as a whole (conflicts). A refusal of several
    rows also keeps its summary on the form. Messages name fields by their labels (in_labels). Returns
    the status the page answers with."""
    labels = field_labels(form)
    named = [error for error in exc.errors if error.get("field") in form.fields]
    for error in named:
        form.add_error(error["field"], in_labels(error["message"], labels))
    if not named:
        form.add_error(fallback_field if exc.status == 400 else None, in_labels(exc.message, labels))
    elif len(exc.errors) > 1:
        form.add_error(None, in_labels(exc.message, labels))
    return exc.status


Result = TypeVar("Result")


@dataclass(frozen=True)
class Submission(Generic[Result]):
    """What became of a page form: `ok` with the service's result (`value`), or the `status` to answer with."""

    ok: bool
    status: int
    result: Result | None = None

    @property
    def value(self) -> Result:
        """The service's result, typed as present: only an `ok` submission has one, so asking a refused
        one is a bug in the view, not a state to handle."""
        if not self.ok:
            raise ValueError(f"a refused submission ({self.status}) has no result")
        return cast(Result, self.result)


def form_submit(
    form: forms.Form,
    action: Callable[[dict[str, Any]], Result],
    *,
    fallback_field: str | None = None,
) -> Submission[Result]:
    """The page form's flow: an invalid form answers 400; a valid one runs `action` (the service call)
    on its cleaned data, and a refusal lands on the form (`add_service_error`) with the service's status."""
    if not form.is_valid():
        return Submission(ok=False, status=400)
    try:
        result = action(form.cleaned_data)
    except ApplicationError as exc:
        return Submission(ok=False, status=add_service_error(form, exc, fallback_field=fallback_field))
    return Submission(ok=True, status=200, result=result)
