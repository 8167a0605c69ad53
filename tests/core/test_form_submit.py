"""core.pages.form_submit.form_submit: the page form's flow around one service call."""

import pytest
from django import forms

from core.errors import ApplicationError
from core.pages.form_submit import form_submit


class NameForm(forms.Form):
    name = forms.CharField(max_length=10)


def test_a_valid_form_runs_the_action_and_hands_back_its_value():
    sent = form_submit(NameForm({"name": "ada"}), lambda data: data["name"].upper())

    assert (sent.ok, sent.status, sent.value) == (True, 200, "ADA")


def test_an_invalid_form_answers_400_without_running_the_action():
    ran = []
    sent = form_submit(NameForm({"name": "x" * 11}), ran.append)

    assert (sent.ok, sent.status, ran) == (False, 400, [])


def test_a_refusal_lands_on_the_named_field_with_the_services_status():
    def refuse(data):
        raise ApplicationError("taken", status=409, errors=[{"field": "name", "message": "Already taken."}])

    form = NameForm({"name": "ada"})
    sent = form_submit(form, refuse)

    assert (sent.ok, sent.status) == (False, 409)
    assert form.errors["name"] == ["Already taken."]
    with pytest.raises(ValueError, match="refused submission"):
        sent.value  # noqa: B018 — asking a refused submission for its value is a bug in the view
