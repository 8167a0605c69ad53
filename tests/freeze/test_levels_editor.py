"""The levels editor writes only the rows that change (service, API, page), has a plain title, and
the import service decodes uploads with 400s naming `file`."""

from __future__ import annotations

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from core.errors import ApplicationError
from core.models import Transition
from freeze import services
from freeze.models import FreezeEntry
from tests.freeze.factories import freeze_setup

# freeze_setup: window "Wave 2", default approval; kernels frozen and dashboards open (explicit),
# trainer at the default.


@pytest.fixture
def ref(lead):
    return freeze_setup(lead)


def explicit(window) -> dict[str, str]:
    return dict(FreezeEntry.objects.filter(window=window).values_list("component__key", "level"))


def test_service_writes_only_the_row_that_changes(lead, ref):
    window = ref["window"]
    before = Transition.objects.filter(action="level").count()
    everything = {"trainer": "approval", "kernels": "open", "dashboards": "open"}
    assert services.freeze_levels_set(actor=lead, window=window, levels=everything) == 1
    assert explicit(window) == {"kernels": "open", "dashboards": "open"}  # trainer stays default
    assert Transition.objects.filter(action="level").count() == before + 1


def test_service_leaves_defaults_default(lead, ref):
    window = ref["window"]
    unchanged = {"trainer": "approval", "kernels": "frozen", "dashboards": "open"}
    assert services.freeze_levels_set(actor=lead, window=window, levels=unchanged) == 0
    assert "trainer" not in explicit(window)


def test_back_to_the_default_removes_the_explicit_entry(lead, ref):
    window = ref["window"]
    entry = FreezeEntry.objects.get(window=window, component__key="kernels")
    assert services.freeze_levels_set(actor=lead, window=window, levels={"kernels": "approval"}) == 1
    assert explicit(window) == {"dashboards": "open"}
    # pghistory keeps the removal too, not only the row's earlier versions.
    assert entry.events.filter(pgh_label="delete").count() == 1
    record = Transition.objects.filter(action="level").latest("id")
    assert (record.from_state, record.to_state) == ("frozen", "approval")
    assert record.data == {"component": "kernels", "explicit": False}


def test_api_writes_only_the_row_that_changes(as_user, lead, ref):
    window = ref["window"]
    url = f"/api/v1/freeze/windows/{window.pk}/levels/"
    rows = as_user(lead).get(url).json()
    levels = {row["component"]: row["level"] for row in rows}
    levels["dashboards"] = "frozen"
    answer = as_user(lead).post(url, {"levels": levels, "reason": "incident"}, format="json")
    assert answer.status_code == 200
    shown = {row["component"]: (row["level"], row["explicit"]) for row in answer.json()}
    assert shown["trainer"] == ("approval", False)
    assert shown["dashboards"] == ("frozen", True)
    assert explicit(window) == {"kernels": "frozen", "dashboards": "frozen"}


def test_page_changes_one_level_and_says_so(client, lead, ref):
    window = ref["window"]
    client.force_login(lead)
    data = {"trainer": "approval", "kernels": "frozen", "dashboards": "approval", "reason": "tidy"}
    response = client.post(f"/freeze/windows/{window.pk}/levels/", data, follow=True)
    assert response.status_code == 200
    assert "1 level changed in &#x27;Wave 2&#x27;." in response.content.decode()
    # dashboards went back to the default; trainer stayed at it without an entry of its own.
    assert explicit(window) == {"kernels": "frozen"}
    response = client.post(f"/freeze/windows/{window.pk}/levels/", data, follow=True)
    assert "No level changed" in response.content.decode()


def test_levels_page_title_is_a_title(client, lead, ref):
    client.force_login(lead)
    page = client.get(f"/freeze/windows/{ref['window'].pk}/levels/").content.decode()
    title = re.search(r"<title>(.*?)</title>", page, re.S).group(1)
    assert title == "Edit levels · Wave 2 · Rebuild Tracker"
    assert "(window default)" in page  # the default is marked in every select


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("levels.csv", "component,level\nkernels,ouvert\u00e9\n".encode("latin-1"), "not UTF-8"),
        ("levels.csv", b"\x89PNG\r\n\x1a\n\x00\x00", "not UTF-8"),
        ("levels.csv", b"component,level\n\x00kernels,open\n", "binary"),
        ("levels.csv", b"", "lists no levels"),
        ("levels.csv", b"name,state\nkernels,open\n", "needs 'component' and 'level'"),
        ("levels.yaml", b"levels: [1, 2]", "needs 'component' and 'level'"),
        ("levels.yaml", b"levels: [\n", "not valid YAML"),
        ("levels.csv", b"component,level\ntrainer,open\nkernels,op\ren\n", "cannot be read at line 3"),
    ],
)
def test_api_import_refuses_a_bad_file_naming_file(as_user, lead, ref, name, content, message):
    url = f"/api/v1/freeze/windows/{ref['window'].pk}/levels/import/"
    response = as_user(lead).post(url, {"file": SimpleUploadedFile(name, content)})
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["errors"][0]["field"] == "file"
    assert message in body["errors"][0]["message"]
    assert explicit(ref["window"]) == {"kernels": "frozen", "dashboards": "open"}


def test_import_service_reads_bytes_and_writes_only_changes(lead, ref):
    window = ref["window"]
    text = b"\xef\xbb\xbfcomponent,level\ntrainer,approval\nkernels,open\ndashboards,open\n"
    assert services.freeze_levels_import(actor=lead, window=window, file=text) == 1
    assert explicit(window) == {"kernels": "open", "dashboards": "open"}
    with pytest.raises(ApplicationError) as refused:
        services.freeze_levels_import(actor=lead, window=window, file=b"\xff\xfe")
    assert refused.value.status == 400 and refused.value.errors[0]["field"] == "file"


def test_page_import_shows_the_refusal_by_the_file_input(client, lead, ref):
    client.force_login(lead)
    url = f"/freeze/windows/{ref['window'].pk}/levels/import/"
    response = client.post(url, {"file": SimpleUploadedFile("l.csv", "\u00e9".encode("latin-1"))})
    assert response.status_code == 400
    assert "The file is not UTF-8 text" in response.content.decode()
    ok = client.post(
        url, {"file": SimpleUploadedFile("l.csv", b"component,level\ntrainer,frozen\n")}, follow=True
    )
    assert "Imported: 1 level changed" in ok.content.decode()
    assert explicit(ref["window"])["trainer"] == "frozen"


def test_a_key_postgresql_cannot_hold_is_an_unknown_component(as_user, lead, ref):
    url = f"/api/v1/freeze/windows/{ref['window'].pk}/levels/"
    response = as_user(lead).post(url, {"levels": {"\x00trainer": "open"}}, format="json")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "levels.\x00trainer"
