"""core.api.renderers.FastJSONRenderer writes DRF's JSONRenderer's bytes: orjson for answers of JSON's own
types, DRF's renderer for anything else (datetimes, Decimals, lazy strings, serializer data) and for
indented answers."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime
from decimal import Decimal

import pytest
from django.utils.translation import gettext_lazy
from rest_framework.renderers import JSONRenderer
from rest_framework.utils.serializer_helpers import ReturnDict

from core.api.renderers import FastJSONRenderer

PLAIN = [
    {"ok": True, "user": "lead"},
    {"next": None, "previous": "http://x/?cursor=cD0y", "results": [{"value": 0.14285714285714285, "n": 3}]},
    {"name": 'überall 日本 "quoted" \\ back', "tags": {"gpu": "h100", "n": 8}, "empty": {}, "list": []},
    {"line": "a\u2028b\u2029c", "big": 2**53, "negative": -1.5, "zero": 0.0, "tiny": 1.5e-300},
    [1, 2.5, "x", None, False],
]
NOT_PLAIN = [
    {"at": datetime(2026, 11, 30, 12, 0, 0, 500, tzinfo=UTC)},
    {"amount": Decimal("1.10")},
    {"label": gettext_lazy("Open")},
    ReturnDict({"a": 1}, serializer=None),
]


@pytest.mark.parametrize("data", PLAIN + NOT_PLAIN)
def test_the_bytes_are_drfs(data):
    assert FastJSONRenderer().render(data) == JSONRenderer().render(data)


def test_plain_answers_are_written_by_orjson_and_the_rest_by_drf(monkeypatch):
    calls = []
    original = JSONRenderer.render

    def counted(self, *args, **kwargs):
        calls.append(args[0])
        return original(self, *args, **kwargs)

    monkeypatch.setattr(JSONRenderer, "render", counted)
    for data in PLAIN:
        FastJSONRenderer().render(data)
    assert calls == []
    for data in NOT_PLAIN:
        FastJSONRenderer().render(data)
    assert calls == NOT_PLAIN


def test_an_indented_answer_is_drfs():
    data = {"a": [1, 2]}
    indented = FastJSONRenderer().render(data, "application/json; indent=2")
    assert indented == JSONRenderer().render(data, "application/json; indent=2")
    assert b"\n" in indented


def test_none_is_an_empty_body():
    assert FastJSONRenderer().render(None) == b""


def test_the_api_answers_through_it(as_user, viewer):
    response = as_user(viewer).get("/api/v1/observations/")
    assert response.status_code == 200
    assert type(response.accepted_renderer) is FastJSONRenderer


def test_options_asked_for_as_csv_is_one_row_of_the_description(as_user, viewer):
    response = as_user(viewer).options("/api/v1/observations/?format=csv")
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/csv")
    header, row = list(csv.reader(io.StringIO(response.content.decode())))
    assert header[:2] == ["name", "description"]
    assert row[0] == "Observation List"
