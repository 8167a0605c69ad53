"""One error summary on every page form (issue 29, templates/_form_errors.html): at the top of the
refused form, each error linked to its field and named by its label."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from tests.freeze.factories import freeze_setup
from tests.metrics.test_definition_pages import REGISTER
from tests.program.factories import metrics_for_template


def summary_of(html: str) -> str:
    start = html.index('data-testid="error-summary"')
    return html[start : html.index("</div>", start)]


def links(summary: str) -> dict[str, str]:
    return dict(re.findall(r'<a href="#([^"]+)">([^<]+)</a>', summary))


def test_the_exception_form(client, engineer, lead):
    freeze_setup(lead)
    client.force_login(engineer)
    start = timezone.now() + timedelta(days=1)
    data = {
        "component": "trainer",
        "title": "t",
        "change": "c",
        "justification": "j",
        "risk": "low",
        "rollback_plan": "r",
        "change_starts_at_0": f"{start:%Y-%m-%d}",
        "change_starts_at_1": "10:00",
        "change_ends_at_0": f"{start:%Y-%m-%d}",
        "change_ends_at_1": "09:00",
    }
    html = client.post("/freeze/exceptions/new/", data).content.decode()
    found = links(summary_of(html))
    assert found == {
        "id_change_ends_at_0": "Change ends (UTC): The change end must be after the change start."
    }
    assert 'id="id_change_ends_at_0"' in html  # the link's target: the split widget's date input
    assert html.index('data-testid="error-summary"') < html.index('name="title"')


def test_the_program_form(client, lead, db):
    metrics_for_template()
    client.force_login(lead)
    response = client.post("/programs/new/", {"template": "rebuild-14m"})
    assert response.status_code == 400
    found = links(summary_of(response.content.decode()))
    assert found["id_name"] == "Name: This field is required."


@pytest.mark.parametrize(
    ("change", "anchor", "text"),
    [
        ({"unit": "bananas"}, "id_unit", "Unit: "),
        (
            {"min_value": "10", "max_value": "5"},
            "id_max_value",
            "Max value: Max value must not be below min value.",
        ),
    ],
)
def test_the_metric_definition_form(client, metric_owner, db, change, anchor, text):
    client.force_login(metric_owner)
    response = client.post("/metrics/new/", {**REGISTER, **change})
    assert response.status_code == 400
    found = links(summary_of(response.content.decode()))
    assert found[anchor].startswith(text)
