"""Bad input anywhere in the API — JSON nested too deep, lone UTF-16 surrogates, NUL characters and
invalid UTF-8 in bodies, query parameters and paths — is a 4xx naming the problem, never a 500, and
nothing is written. (Observation ingest has its own rules: tests/metrics/test_ingest_limits.py.)"""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from drf_spectacular.generators import SchemaGenerator

from core.api.parsers import MAX_DEPTH
from freeze.models import FreezeEntry, FreezeException
from metrics.models import MetricDefinition
from tests.freeze.factories import exception_payload, freeze_setup
from tests.metrics.factories import definition_body

DEFINITIONS = "/api/v1/definitions/"
EXCEPTIONS = "/api/v1/freeze-exceptions/"
LONE = "\ud800"


def post_text(client, url: str, text: str | bytes):
    return client.post(url, text, content_type="application/json")


def post_escaped(client, url: str, body: dict):
    """json.dumps writes a lone surrogate as the escape "\\ud800"; the test client's encoder cannot."""
    return post_text(client, url, json.dumps(body))


def lists(depth: int) -> str:
    return "[" * depth + "]" * depth


def error_fields(response) -> list[str]:
    return [error["field"] for error in response.json()["errors"]]


@pytest.mark.django_db
@pytest.mark.parametrize(
    "text",
    [
        lists(2000),
        json.dumps(definition_body(name=None)).replace("null", lists(2000)),
        json.dumps(definition_body(name=None)).replace("null", '{"a":' * 2000 + "1" + "}" * 2000),
    ],
    ids=["whole-body", "list-in-a-field", "object-in-a-field"],
)
def test_a_body_nested_2000_deep_is_a_400_not_a_500(as_user, metric_owner, text):
    response = post_text(as_user(metric_owner), DEFINITIONS, text)
    assert response.status_code == 400, response.content
    assert "nested" in response.json()["detail"]
    assert not MetricDefinition.objects.exists()


@pytest.mark.django_db
def test_nesting_is_refused_past_the_limit_and_names_the_field(as_user, metric_owner):
    client = as_user(metric_owner)
    # The body object is one level: a field may hold MAX_DEPTH - 1 more.
    at_limit = post_text(
        client, DEFINITIONS, json.dumps(definition_body(name=None)).replace("null", lists(MAX_DEPTH - 1))
    )
    assert at_limit.status_code == 400
    assert at_limit.json()["errors"][0] == {"field": "name", "message": "Not a valid string."}
    beyond = post_text(
        client, DEFINITIONS, json.dumps(definition_body(name=None)).replace("null", lists(MAX_DEPTH))
    )
    assert beyond.status_code == 400
    assert beyond.json()["errors"] == [
        {"field": "name", "message": f"nested deeper than {MAX_DEPTH} levels."}
    ]


@pytest.mark.django_db
def test_deep_levels_for_a_freeze_window_are_a_400(as_user, lead):
    window = freeze_setup(lead)["window"]
    before = list(FreezeEntry.objects.values_list("component__key", "level"))
    body = '{"levels": ' + '{"trainer":' * 2000 + '"frozen"' + "}" * 2000 + "}"
    response = as_user(lead).post(
        f"/api/v1/freeze/windows/{window.pk}/levels/", body, content_type="application/json"
    )
    assert response.status_code == 400, response.content
    assert error_fields(response) == ["body"]  # beyond what the parsers read: where is unknown
    assert list(FreezeEntry.objects.values_list("component__key", "level")) == before


@pytest.mark.django_db
@pytest.mark.parametrize(
    "text",
    ["levels: " + lists(2000), 'levels:\n- component: "\\ud800"\n  level: frozen'],
    ids=["deep", "surrogate"],
)
def test_a_levels_file_nested_2000_deep_or_holding_a_surrogate_is_a_400(as_user, lead, text):
    """The YAML import (API and page) is a body entry point too: PyYAML recursed, and reads "\\ud800"."""
    window = freeze_setup(lead)["window"]
    before = list(FreezeEntry.objects.values_list("component__key", "level"))
    upload = SimpleUploadedFile("levels.yaml", text.encode())
    response = as_user(lead).post(f"/api/v1/freeze/windows/{window.pk}/levels/import/", {"file": upload})
    assert response.status_code == 400, response.content
    assert error_fields(response) == ["file"]
    assert list(FreezeEntry.objects.values_list("component__key", "level")) == before


@pytest.mark.django_db
@pytest.mark.parametrize("field", ["name", "unit", "key", "owner_team", "description", "start_event"])
def test_a_lone_surrogate_in_a_definition_field_is_a_400_naming_it(as_user, metric_owner, field):
    response = post_escaped(as_user(metric_owner), DEFINITIONS, definition_body(**{field: f"x{LONE}"}))
    assert response.status_code == 400, response.content
    assert error_fields(response) == [field]
    assert "surrogate" in response.json()["errors"][0]["message"].lower()
    assert not MetricDefinition.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize("field", ["title", "change", "justification", "rollback_plan", "component"])
def test_a_lone_surrogate_in_an_exception_field_is_a_400_naming_it(as_user, engineer, lead, field):
    freeze_setup(lead)
    response = post_escaped(as_user(engineer), EXCEPTIONS, exception_payload(**{field: LONE}))
    assert response.status_code == 400, response.content
    assert error_fields(response) == [field]
    assert not FreezeException.objects.exists()


@pytest.mark.django_db
def test_a_lone_surrogate_in_a_key_or_a_list_names_where(as_user, lead, metric_owner):
    window = freeze_setup(lead)["window"]
    levels = post_escaped(
        as_user(lead), f"/api/v1/freeze/windows/{window.pk}/levels/", {"levels": {LONE: "frozen"}}
    )
    assert levels.status_code == 400, levels.content
    assert error_fields(levels) == ["levels.\\ud800"]  # the key itself, escaped
    assert levels.json()["errors"][0]["message"].startswith(
        "a key contains a lone UTF-16 surrogate (\\ud800)"
    )
    includes = post_escaped(as_user(metric_owner), DEFINITIONS, definition_body(includes=["network", LONE]))
    assert error_fields(includes) == ["includes.1"]


@pytest.mark.django_db
def test_raw_surrogate_bytes_are_not_utf8(as_user, metric_owner):
    body = json.dumps(definition_body(name="PLACEHOLDER")).encode().replace(b"PLACEHOLDER", b"\xed\xa0\x80")
    response = post_text(as_user(metric_owner), DEFINITIONS, body)
    assert response.status_code == 400
    assert error_fields(response) == ["body"]
    assert not MetricDefinition.objects.exists()


@pytest.mark.django_db
def test_nan_and_broken_json_are_still_400(as_user, metric_owner):
    client = as_user(metric_owner)
    nan = post_text(client, DEFINITIONS, json.dumps(definition_body(min_value=None)).replace("null", "NaN"))
    assert nan.status_code == 400
    broken = post_text(client, DEFINITIONS, '{"key": ')
    assert broken.status_code == 400
    assert error_fields(broken) == ["body"]
    assert "not valid JSON" in broken.json()["detail"]
    assert not MetricDefinition.objects.exists()


@pytest.mark.django_db
def test_a_valid_surrogate_pair_is_just_text(as_user, metric_owner):
    response = as_user(metric_owner).post(
        DEFINITIONS, definition_body(name="Probe \U0001f680"), format="json"
    )
    assert response.status_code == 201, response.json()
    assert MetricDefinition.objects.get().name == "Probe \U0001f680"


# --- query parameters and paths ------------------------------------------------------------------------

# NUL, a lone surrogate, an encoded surrogate as UTF-8 bytes, and bytes that are not UTF-8 at all.
BAD_PARAMS = ["%00", "a%00b", "%5Cud800", "%ED%A0%80", "%FF"]
PAGES = [
    "/",
    "/metrics/",
    "/metrics/compare/",
    "/metrics/latency/",
    "/programs/",
    "/freeze/",
    "/freeze/queues/",
    "/notifications/",
]
PAGE_PARAMS = [
    "metric",
    "baseline",
    "candidate",
    "workload",
    "since",
    "until",
    "statistic",
    "status",
    "owner_team",
    "page",
]


@pytest.fixture
def signed_in(lead):
    from tests.metrics.factories import reference_data

    reference_data()
    client = Client(raise_request_exception=False)
    client.force_login(lead)
    return client


def list_operations() -> list[tuple[str, list[str]]]:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    return [
        (path, [p["name"] for p in ops["get"].get("parameters", []) if p["in"] == "query"])
        for path, ops in schema["paths"].items()
        if "get" in ops and "{" not in path
    ]


@pytest.mark.django_db
def test_bad_query_parameters_on_every_list_endpoint_and_page_are_never_a_500(signed_in):
    requests = [(path, name) for path, names in list_operations() for name in names]
    requests += [(page, name) for page in PAGES for name in PAGE_PARAMS]
    assert len(requests) > 50
    failures = [
        (path, name, bad, status)
        for path, name in requests
        for bad in BAD_PARAMS
        if (status := signed_in.get(f"{path}?{name}={bad}").status_code) >= 500
    ]
    assert failures == []


@pytest.mark.django_db
@pytest.mark.parametrize(
    "path", ["/api/v1/systems/{}/", "/api/v1/workloads/{}/", "/api/v1/definitions/{}/", "/metrics/{}/"]
)
@pytest.mark.parametrize("segment", ["%00", "a%00b", "%ED%A0%80", "%FF"])
def test_bad_path_segments_are_a_404(signed_in, path, segment):
    assert signed_in.get(path.format(segment)).status_code == 404


@pytest.mark.parametrize("body", [{"file": "x"}, ["file"]])
def test_a_levels_import_without_a_file_is_a_400_naming_it(as_user, lead, body):
    from freeze.models import FreezeWindow
    from tests.freeze.factories import freeze_setup

    freeze_setup(lead)
    window = FreezeWindow.objects.get()
    for fmt in ("json", "multipart"):
        if fmt == "multipart" and not isinstance(body, dict):
            continue
        response = as_user(lead).post(f"/api/v1/freeze/windows/{window.pk}/levels/import/", body, format=fmt)
        assert response.status_code == 400, (fmt, response.content)
        assert response.json()["errors"][0]["field"] == "file"
