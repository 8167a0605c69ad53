"""A window's history in words on the freeze page, its own page, and the API; constant queries."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from freeze import services
from freeze.history import window_history
from freeze.models import Component, FreezeWindow
from freeze.services.levels import windows_follow_phase
from program.models import Phase
from tests.freeze.factories import draft_exception, freeze_setup


@pytest.fixture
def ref(lead):
    lead.first_name = "Lena"
    lead.save()
    return freeze_setup(lead)


def history_url(window) -> str:
    return f"/api/v1/freeze/windows/{window.pk}/history/"


def test_api_lists_level_changes_newest_first(as_user, lead, viewer, ref):
    window = ref["window"]
    services.freeze_levels_set(actor=lead, window=window, levels={"trainer": "frozen"}, reason="incident 42")
    response = as_user(viewer).get(history_url(window))
    assert response.status_code == 200
    body = response.json()
    assert body["count"] == 3
    newest = body["results"][0]
    assert {k: newest[k] for k in ("actor", "action", "component", "from", "to", "reason")} == {
        "actor": "lead",
        "action": "level",
        "component": "trainer",
        "from": "approval",
        "to": "frozen",
        "reason": "incident 42",
    }
    assert newest["text"] == "Lena set trainer to frozen (was approval) in 'Wave 2'"
    assert newest["at"]


def test_api_pages_and_404s(as_user, lead, viewer, ref):
    window = ref["window"]
    for level in ("frozen", "open", "frozen", "open"):
        services.freeze_levels_set(actor=lead, window=window, levels={"trainer": level})
    first = as_user(viewer).get(history_url(window), {"page_size": 4}).json()
    assert first["count"] == 6 and len(first["results"]) == 4 and first["next"]
    assert (
        as_user(viewer)
        .get(history_url(window), {"page": 2, "page_size": 4})
        .json()["results"][-1]["component"]
        == "kernels"
    )
    assert as_user(viewer).get("/api/v1/freeze/windows/999999/history/").status_code == 404


def test_window_moved_with_its_phase_reads_in_words(lead, ref):
    program = ref["program"]
    frontier = services.window_for_frontier(program_id=program.pk) or FreezeWindow.objects.get(
        program=program, phase__kind="frontier"
    )
    phase = Phase.objects.get(pk=frontier.phase_id)
    Phase.objects.filter(pk=phase.pk).update(
        planned_start=phase.planned_start + timedelta(days=7),
        planned_end=phase.planned_end + timedelta(days=7),
    )
    assert windows_follow_phase(phase_id=phase.pk) == 1
    text = window_history(frontier).entries[0].text
    assert text.startswith(f"Window '{frontier.name}' moved to ")
    assert "(was " in text


def test_freeze_page_shows_the_selected_windows_history(client, lead, viewer, ref):
    window = ref["window"]
    services.freeze_levels_set(actor=lead, window=window, levels={"trainer": "frozen"}, reason="incident 42")
    client.force_login(viewer)
    page = client.get(f"/freeze/windows/{window.pk}/").content.decode()
    assert "Lena set trainer to frozen (was approval) in &#x27;Wave 2&#x27;" in page
    assert "<q>incident 42</q>" in page
    assert "All history of" not in page  # three entries: no more to see


def test_freeze_page_caps_the_history_and_links_to_all_of_it(client, lead, viewer, ref):
    window = ref["window"]
    for i in range(12):
        services.freeze_levels_set(actor=lead, window=window, levels={"trainer": ("frozen", "open")[i % 2]})
    client.force_login(viewer)
    page = client.get(f"/freeze/windows/{window.pk}/").content.decode()
    assert page.count("Lena set trainer") == 10
    assert f'href="/freeze/windows/{window.pk}/history/"' in page
    full = client.get(f"/freeze/windows/{window.pk}/history/").content.decode()
    assert full.count("Lena set trainer") == 12
    assert "Lena set kernels to frozen" in full


def count(client, path) -> int:
    client.get(path)  # warm process-wide caches
    with CaptureQueriesContext(connection) as context:
        response = client.get(path)
    assert response.status_code == 200
    return len(context.captured_queries)


def grow(ref, lead, engineer, size: int) -> None:
    """`size` more components with explicit levels, overlapping windows, exceptions and history."""
    now = ref["now"]
    for i in range(size):
        Component.objects.create(key=f"c{size}-{i}", name=f"c{i}", layer="storage", owner_team="storage")
        window = services.window_create(
            actor=lead,
            program=ref["program"],
            name=f"w{size}-{i}",
            starts_at=now - timedelta(hours=1),
            ends_at=now + timedelta(days=2),
        )
        services.freeze_levels_set(
            actor=lead, window=window, levels={f"c{size}-{i}": "frozen", "trainer": "open"}
        )
        services.freeze_levels_set(actor=lead, window=ref["window"], levels={f"c{size}-{i}": "open"})
        draft_exception(
            engineer, Component.objects.get(key="trainer"), now, window=ref["window"], title=f"e{i}"
        )


@pytest.mark.parametrize(
    "kind", ["freeze list", "window page", "window history page", "history api", "levels"]
)
def test_constant_queries(client, lead, engineer, ref, kind):
    client.force_login(lead)
    window = ref["window"]
    path = {
        "freeze list": "/freeze/",
        "window page": f"/freeze/windows/{window.pk}/",
        "window history page": f"/freeze/windows/{window.pk}/history/",
        "history api": history_url(window),
        "levels": f"/freeze/windows/{window.pk}/levels/",
    }[kind]
    few = count(client, path)
    grow(ref, lead, engineer, 6)
    assert count(client, path) == few
