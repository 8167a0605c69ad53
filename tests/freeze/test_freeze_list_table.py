"""The freeze list is one table: components by layer × the windows in force, the same columns in
every row, the strictest level, open exceptions; upcoming windows are picked to see them."""

from __future__ import annotations

import re
from datetime import timedelta

from freeze import selectors, services
from freeze.models import Component
from tests.freeze.factories import freeze_setup, submitted_exception


def test_one_table_with_a_column_per_window_in_force(client, lead, engineer, viewer):
    ref = freeze_setup(lead)
    now = ref["now"]
    storage = services.window_create(
        actor=lead,
        program=ref["program"],
        name="Storage move",
        starts_at=now - timedelta(hours=2),
        ends_at=now + timedelta(days=1),
        default_level="open",
    )
    services.freeze_levels_set(actor=lead, window=storage, levels={"dashboards": "frozen"})
    Component.objects.create(key="object-store", name="Object store", layer="storage", owner_team="data")
    submitted_exception(engineer, ref["trainer"], now)
    client.force_login(viewer)
    page = client.get("/freeze/").content.decode()
    assert page.count("<table") == 1
    assert "Wave 2" in page and "Storage move" in page and "Strictest" in page
    # A layer header row each, then rows with the same cells: component + 2 windows + strictest + exceptions.
    assert re.findall(r'<th scope="rowgroup" colspan="(\d+)">', page) == ["5", "5"]
    layers = dict(selectors.freeze_list(selectors.windows_at(now), now))
    rows = {row.component.key: row for rows in layers.values() for row in rows}
    assert [(c.level, c.explicit) for c in rows["dashboards"].cells] == [("open", True), ("frozen", True)]
    assert rows["dashboards"].strictest == "frozen"
    assert [(c.level, c.explicit) for c in rows["trainer"].cells] == [("approval", False), ("open", False)]
    assert rows["trainer"].strictest == "approval"
    assert [e.title for e in rows["trainer"].open_exceptions] == ["t"]
    assert rows["object-store"].strictest == "approval"
    assert set(layers) == {"Training framework", "Storage"}


def test_an_upcoming_window_shows_the_list_as_it_will_be(client, lead, viewer):
    ref = freeze_setup(lead)
    later = services.window_create(
        actor=lead,
        program=ref["program"],
        name="Holiday freeze",
        starts_at=ref["now"] + timedelta(days=30),
        ends_at=ref["now"] + timedelta(days=40),
        default_level="frozen",
    )
    client.force_login(viewer)
    listing = client.get("/freeze/").content.decode()
    assert f'href="/freeze/windows/{later.pk}/">Holiday freeze</a>' in listing  # "Coming up"
    page = client.get(f"/freeze/windows/{later.pk}/").content.decode()
    assert "when <strong>Holiday freeze</strong> starts" in page
    assert "Wave 2</a>" not in page  # ended by then: not a column
    assert "upcoming" in page


def test_no_window_at_all(client, viewer):
    client.force_login(viewer)
    page = client.get("/freeze/").content.decode()
    assert "no freeze window is in force, everything may change" in page
