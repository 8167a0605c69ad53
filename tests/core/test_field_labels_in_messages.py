"""A service message as the page says it (issue 29): field names become the form's labels; the
ApplicationError itself, and so the API's body, keeps the names."""

from __future__ import annotations

from django import forms

from core.errors import ApplicationError
from core.pages.form_submit import form_submit, in_labels

LABELS = {"opened_at": "Opened at", "detected_at": "Detected at", "link": "URL", "title": "Title"}


def test_names_become_labels_capitalised_only_where_a_sentence_starts():
    assert in_labels("detected_at must not be before opened_at.", LABELS) == (
        "Detected at must not be before opened at."
    )
    assert in_labels("Times out of order: detected_at.", LABELS) == "Times out of order: Detected at."


def test_one_word_names_are_left_as_words():
    assert in_labels("Give the incident a title.", LABELS) == "Give the incident a title."
    assert in_labels("reopened_at_x is not opened_at", LABELS) == "reopened_at_x is not opened at"


class TimesForm(forms.Form):
    other_field_labels = {"opened_at": "Opened at"}
    detected_at = forms.DateTimeField(label="Detected at")


def test_the_page_form_gets_the_labels_and_the_error_keeps_the_names():
    error = ApplicationError(
        "detected_at must not be before opened_at.",
        status=400,
        errors=[{"field": "detected_at", "message": "detected_at must not be before opened_at."}],
    )

    def refuse(data):
        raise error

    form = TimesForm({"detected_at": "2026-05-02T09:00"})
    sent = form_submit(form, refuse)
    assert sent.status == 400
    assert form.errors["detected_at"] == ["Detected at must not be before opened at."]
    assert error.errors[0]["message"] == "detected_at must not be before opened_at."
