"""The search page (work.pages.search) over the demo: hits per kind, each linking to its page; the
private serving program (led by lead3 alone) and what is filed under it hidden from everyone else; a
fixed number of queries however many hits; help for an empty query and for no hits."""

from __future__ import annotations

import io
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.utils import timezone

from freeze.models import Component, FreezeException, FreezeWindow
from incidents.models import Incident
from program.demo import SERVING_SLUG
from program.models import Gate, Program
from program.services.memberships import membership_grant
from tests.core.matrix_world import built_once
from tests.freeze.factories import draft_exception

PRIVATE_EXCEPTION = "Vendor deal router canary"


@pytest.fixture(scope="module")
def world(django_db_setup, django_db_blocker):
    """The demo, loaded once for the module, plus a freeze window and an exception of the private
    program (the demo files none there), filed by the engineer made a member of it for this."""
    with built_once(django_db_blocker):
        call_command("load_demo", stdout=io.StringIO())
        serving = Program.objects.get(slug=SERVING_SLUG)
        users = {user.username: user for user in User.objects.all()}
        membership_grant(actor=users["lead3"], program=serving, user=users["engineer"], role="engineer")
        now = timezone.now()
        window = FreezeWindow.objects.create(
            program=serving,
            name="Vendor deal freeze",
            starts_at=now - timedelta(days=1),
            ends_at=now + timedelta(days=5),
        )
        exception = draft_exception(
            users["engineer"],
            Component.objects.get(key="serving-router"),
            now,
            window=window,
            title=PRIVATE_EXCEPTION,
        )
        yield {"serving": serving, "exception": exception}


def search_as(client, username: str, query: str, **params):
    client.force_login(User.objects.get(username=username))
    return client.get("/search/", {"q": query, **params})


def hits(response, kind: str) -> str:
    """The HTML of one kind's group of hits ('' when the page shows none of that kind)."""
    html = response.content.decode()
    start = html.find(f'data-testid="search-group-{kind}"')
    if start < 0:
        return ""
    end = html.find("</section>", start)
    return html[start:end]


def test_anonymous_is_sent_to_sign_in(client):
    response = client.get("/search/", {"q": "kernels"})
    assert response.status_code == 302
    assert response["Location"].startswith("/login/")


# Ids come from sequences that earlier tests' rolled-back rows advanced: each link is looked up.
KIND_CASES = {
    "programs": ("frontier training", lambda: "/programs/frontier-rebuild/", "lead Lena Lead"),
    "gates": (
        "checkpoint save within",
        lambda: f"/programs/gates/{Gate.objects.get(name__startswith='Checkpoint save within').pk}/",
        "Frontier training stack rebuild",
    ),
    "metrics": ("step-time", lambda: "/metrics/step-time/", "step-time@2"),
    "components": ("kernels", lambda: "/freeze/components/kernels/", "owned by"),
    "exceptions": (
        "softmax",
        lambda: f"/freeze/exceptions/{FreezeException.objects.get(title__contains='softmax').pk}/",
        "kernels",
    ),
    "incidents": (
        "Loss diverges",
        lambda: f"/incidents/{Incident.objects.filter(title__startswith='Loss diverges').first().pk}/",
        "opened",
    ),
}


@pytest.mark.parametrize("kind", KIND_CASES)
def test_each_kind_is_found_and_links_to_its_page(client, world, kind):
    query, link_of, context = KIND_CASES[kind]
    link = link_of()
    response = search_as(client, "viewer", query)
    assert response.status_code == 200
    group = hits(response, kind)
    assert f'href="{link}"' in group
    assert context in group
    assert 'data-testid="search-count"' in group


def test_a_metric_with_several_versions_is_one_hit_for_its_active_version(client, world):
    group = hits(search_as(client, "viewer", "training step time"), "metrics")
    assert group.count('data-testid="search-hit"') == 1
    assert "step-time@2" in group and ">active<" in group


def test_a_number_finds_the_incident_with_that_id(client, world):
    pk = Incident.objects.order_by("pk").last().pk
    assert f'href="/incidents/{pk}/"' in hits(search_as(client, "viewer", f"#{pk}"), "incidents")


def test_the_viewer_does_not_find_the_private_program_or_what_is_filed_under_it(client, world):
    serving = world["serving"]
    private_gates = Gate.objects.filter(phase__program=serving).values_list("pk", flat=True)
    page = search_as(client, "viewer", "serving").content.decode()
    assert f"/programs/{SERVING_SLUG}/" not in page
    assert "Serving stack rebuild" not in page
    gates = hits(search_as(client, "viewer", "key hypothesis"), "gates")
    assert gates.count('data-testid="search-hit"') == 2  # the frontier's and the data platform's
    assert not any(f'href="/programs/gates/{pk}/"' in gates for pk in private_gates)
    response = search_as(client, "viewer", "vendor deal")
    assert PRIVATE_EXCEPTION not in response.content.decode()
    assert 'data-testid="search-none"' in response.content.decode()


def test_the_private_programs_lead_finds_it_and_what_is_filed_under_it(client, world):
    serving = world["serving"]
    programs = hits(search_as(client, "lead3", "serving"), "programs")
    assert f'href="/programs/{SERVING_SLUG}/"' in programs and "private" in programs
    gates = hits(search_as(client, "lead3", "key hypothesis"), "gates")
    serving_gate = Gate.objects.get(phase__program=serving, name="Key hypothesis proven")
    assert f'href="/programs/gates/{serving_gate.pk}/"' in gates
    exceptions = hits(search_as(client, "lead3", "vendor deal"), "exceptions")
    assert f'href="/freeze/exceptions/{world["exception"].pk}/"' in exceptions


@pytest.mark.parametrize("query", ["kernels", "in", "step"])
def test_the_page_runs_a_fixed_number_of_queries_however_many_hits(
    client, world, django_assert_max_num_queries, query
):
    client.force_login(User.objects.get(username="lead"))
    client.get("/search/", {"q": "warm"})  # the session and the site's caches, read once
    # Session, user, groups, memberships and the unread count; then, for each of the 6 kinds, a page of
    # hits and (when that page is full) a count.
    with django_assert_max_num_queries(5 + 2 * 6):
        response = client.get("/search/", {"q": query})
    assert response.status_code == 200


def test_many_hits_show_a_few_per_kind_with_a_link_to_all(client, world):
    response = search_as(client, "viewer", "step time")
    incidents = hits(response, "incidents")
    assert incidents.count('data-testid="search-hit"') == 5
    assert 'href="/search/?q=step%20time&amp;kind=incidents"' in incidents
    alone = search_as(client, "viewer", "step time", kind="incidents")
    assert hits(alone, "incidents").count('data-testid="search-hit"') > 5
    assert hits(alone, "gates") == ""


def test_an_empty_query_explains_what_search_finds(client, world):
    response = search_as(client, "viewer", "")
    page = response.content.decode()
    assert response.status_code == 200
    assert 'data-testid="search-empty"' in page
    assert "Search by name or key" in page and "<kbd>/</kbd>" in page


def test_a_one_letter_query_asks_for_more(client, world):
    page = search_as(client, "viewer", "x").content.decode()
    assert "Type at least 2 characters" in page
    assert 'data-testid="search-hit"' not in page


def test_no_hits_say_so_and_suggest_what_to_try(client, world):
    page = search_as(client, "viewer", "zzzz-nothing").content.decode()
    assert "Nothing matches “zzzz-nothing”" in page
    assert "Try fewer words" in page


def test_too_long_a_query_is_refused_naming_the_field(client, world):
    response = search_as(client, "viewer", "x" * 101)
    assert response.status_code == 400
    assert (
        "<strong>Search:</strong> Ensure this value has at most 100 characters" in response.content.decode()
    )


def test_an_unknown_kind_is_refused_naming_the_field(client, world):
    response = search_as(client, "viewer", "kernels", kind="secrets")
    assert response.status_code == 400
    assert "<strong>Only:</strong>" in response.content.decode()


def test_typing_on_the_page_gets_only_the_results_back(client, world):
    client.force_login(User.objects.get(username="viewer"))
    response = client.get("/search/", {"q": "kernels"}, headers={"HX-Request": "true"})
    page = response.content.decode()
    assert 'data-testid="search-group-components"' in page
    assert "<html" not in page


def test_every_page_has_the_search_box_in_its_header(client, world):
    client.force_login(User.objects.get(username="viewer"))
    page = client.get("/programs/").content.decode()
    assert 'class="site-search" role="search" method="get" action="/search/"' in page
    assert 'aria-keyshortcuts="/"' in page
    assert 'src="/static/js/shortcuts.js"' in page
