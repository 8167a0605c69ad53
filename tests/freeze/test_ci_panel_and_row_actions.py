"""Issue 29, item 4: the component and exception pages say what CI sees (the freeze check's own
answer), and each freeze-list row offers a prefilled "request an exception" to those who may file."""

from __future__ import annotations

import html
import json
import re
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from freeze import services
from freeze.models import Component
from tests.freeze.factories import freeze_setup, submitted_exception

CHECK = "/api/v1/freeze/check/"


@pytest.fixture
def ref(db, lead):
    """trainer: approval (the window's default) · kernels: frozen · dashboards: open."""
    return freeze_setup(lead)


def panel(page: str) -> str:
    return page.split('data-testid="ci-sees"')[1].split("</section>")[0]


def answer(page: str) -> dict:
    return json.loads(html.unescape(panel(page).split('data-testid="ci-answer">')[1].split("</pre>")[0]))


@pytest.mark.parametrize(
    ("component", "decision"),
    [("dashboards", "allowed"), ("kernels", "forbidden"), ("trainer", "needs_approval")],
)
def test_component_page_shows_the_check_endpoints_answer(client, viewer, ref, component, decision):
    client.force_login(viewer)
    api = client.get(CHECK, {"component": component}).json()
    page = client.get(f"/freeze/components/{component}/").content.decode()
    shown = panel(page)
    assert api["decision"] == decision
    assert f'data-decision="{decision}"' in shown
    assert f'data-testid="ci-decision">{decision}</span>' in shown
    assert html.escape(api["reason"]) in shown
    body = answer(page)
    assert {k: v for k, v in body.items() if k != "at"} == {k: v for k, v in api.items() if k != "at"}
    assert (
        f"curl -fsS -H &quot;Authorization: Token $RT_TOKEN&quot; "
        f"&quot;http://testserver/api/v1/freeze/check/?component={component}&quot;"
    ) in shown


def test_component_page_answer_follows_an_approved_exception(client, viewer, engineer, ref, lead):
    now = timezone.now()
    exception = submitted_exception(
        engineer,
        ref["trainer"],
        now,
        change_starts_at=now - timedelta(minutes=30),
        change_ends_at=now + timedelta(hours=2),
    )
    services.exception_approve(actor=lead, exception=exception)
    client.force_login(viewer)
    page = client.get("/freeze/components/trainer/").content.decode()
    api = client.get(CHECK, {"component": "trainer"}).json()
    assert answer(page)["decision"] == api["decision"] == "allowed"
    assert answer(page)["exception"]["id"] == exception.pk


def test_exception_page_shows_what_ci_sees_when_the_change_starts(client, engineer, ref):
    exception = submitted_exception(engineer, ref["trainer"], timezone.now())
    client.force_login(engineer)
    page = client.get(f"/freeze/exceptions/{exception.pk}/").content.decode()
    shown = panel(page)
    at = answer(page)["at"]
    api = client.get(CHECK, {"component": "trainer", "at": at}).json()
    assert api["decision"] == "needs_approval"
    assert f'data-decision="{api["decision"]}"' in shown
    assert f"component=trainer&amp;at={at}" in shown  # the curl line asks for that moment
    assert "What CI sees on" in shown
    assert 'href="/freeze/components/trainer/"' in page


def test_matrix_rows_offer_a_prefilled_exception_to_engineers_only(client, engineer, viewer, ref):
    client.force_login(engineer)
    page = client.get("/freeze/").content.decode()
    window = ref["window"].pk
    links = re.findall(r'data-testid="request-exception" href="([^"]+)"', page)
    # Exceptions exist for `approval` only: the frozen and the open rows say why they offer none.
    assert links == [f"/freeze/exceptions/new/?component=trainer&amp;window={window}"]
    assert "frozen: no exception lifts it" in page and "open: no exception needed" in page
    form = client.get(html.unescape(links[0])).content.decode()
    assert re.search(rf'<option value="{window}" selected>', form)
    client.force_login(viewer)
    assert 'data-testid="request-exception"' not in client.get("/freeze/").content.decode()
    assert 'data-testid="request-exception"' not in client.get("/freeze/components/trainer/").content.decode()


def test_the_form_preselects_the_component_and_window_of_the_link(client, engineer, ref):
    client.force_login(engineer)
    form = client.get(
        "/freeze/exceptions/new/", {"component": "kernels", "window": ref["window"].pk}
    ).content.decode()
    assert re.search(r'<option value="kernels" selected>', form)
    assert re.search(rf'<option value="{ref["window"].pk}" selected>', form)


def test_matrix_is_cards_at_phone_width_with_the_strictest_cell_as_key(client, viewer, ref):
    client.force_login(viewer)
    page = client.get("/freeze/").content.decode()
    assert '<table class="freeze-table cards"' in page
    assert page.count('<td class="key strictest" data-label="In force">') == 3
    assert 'data-label="Wave 2"' in page and 'data-label="Open exceptions"' in page


def test_matrix_runs_the_same_queries_for_few_and_many_components(client, engineer, ref):
    client.force_login(engineer)
    client.get("/freeze/")

    def count() -> int:
        with CaptureQueriesContext(connection) as context:
            assert client.get("/freeze/").status_code == 200
        return len(context.captured_queries)

    few = count()
    for i in range(20):
        Component.objects.create(key=f"c{i}", name=f"c{i}", layer="storage", owner_team="data")
    assert count() == few


def test_component_page_prefills_the_window_only_where_an_exception_applies(client, engineer, ref):
    client.force_login(engineer)
    trainer = client.get("/freeze/components/trainer/").content.decode()
    assert f'href="/freeze/exceptions/new/?component=trainer&amp;window={ref["window"].pk}"' in trainer
    kernels = client.get("/freeze/components/kernels/").content.decode()
    assert 'href="/freeze/exceptions/new/?component=kernels"' in kernels  # frozen: the form says why
