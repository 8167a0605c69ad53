"""Styled 403/404/500 pages for people; the JSON error shape for every /api/ path, DEBUG or not.

This module is also the URLconf of the tests marked `urls`: the real one plus views that fail."""

from __future__ import annotations

import io
import logging

import pytest
from django.core.exceptions import PermissionDenied
from django.test import Client, RequestFactory
from django.urls import path

from config import urls as real_urls
from core.pages.site import server_error


def boom(request):
    raise RuntimeError("a bug")


def forbidden(request):
    raise PermissionDenied("Only a program lead may do this.")


urlpatterns = [
    path("boom/", boom),
    path("api/v1/boom/", boom),
    path("api/v1/plain-forbidden/", forbidden),
    path("forbidden/", forbidden),
    *real_urls.urlpatterns,
]
handler403 = real_urls.handler403
handler404 = real_urls.handler404
handler500 = real_urls.handler500

ERROR_SHAPE_KEYS = {"detail", "code", "errors"}


def test_unknown_page_is_the_styled_404(client, viewer):
    client.force_login(viewer)
    response = client.get("/programs/gates/999999/")
    assert response.status_code == 404
    html = response.content.decode()
    assert "There is nothing here" in html and 'class="topbar"' in html and "Sign out" in html


@pytest.mark.parametrize("debug", [False, True])
@pytest.mark.parametrize("method", ["get", "post", "delete"])
def test_unknown_api_path_is_json_even_with_debug_on(settings, viewer, debug, method):
    settings.DEBUG = debug
    client = Client(enforce_csrf_checks=True)  # an API client sends no CSRF token
    client.force_login(viewer)
    response = getattr(client, method)("/api/v1/no-such-thing/")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert response.json() == {"detail": "Not found.", "code": "not_found", "errors": []}


def test_anonymous_unknown_api_path_is_json_not_a_login_redirect(client, db):
    response = client.get("/api/nope")
    assert response.status_code == 404 and set(response.json()) == ERROR_SHAPE_KEYS


@pytest.mark.urls("tests.core.test_error_pages")
def test_page_500_is_styled(viewer):
    client = Client(raise_request_exception=False)
    client.force_login(viewer)
    response = client.get("/boom/")
    assert response.status_code == 500
    html = response.content.decode()
    assert "Something went wrong on our side" in html and 'class="topbar"' in html
    assert "a bug" not in html


@pytest.mark.urls("tests.core.test_error_pages")
def test_api_500_is_the_json_shape(viewer):
    client = Client(raise_request_exception=False)
    client.force_login(viewer)
    response = client.get("/api/v1/boom/")
    assert response.status_code == 500
    assert response.json() == {"detail": "Server error.", "code": "server_error", "errors": []}


@pytest.mark.urls("tests.core.test_error_pages")
def test_403_outside_drf_under_api_is_the_json_shape(client, viewer):
    client.force_login(viewer)
    response = client.get("/api/v1/plain-forbidden/")
    assert response.status_code == 403
    assert response.json()["detail"] == "Only a program lead may do this."


def test_500_page_needs_no_database(django_assert_num_queries, db):
    """The database may be what failed: rendering the page must not touch it."""
    with django_assert_num_queries(0):
        response = server_error(RequestFactory().get("/anything/"))
    assert response.status_code == 500 and b"Something went wrong" in response.content


def test_a_stale_csrf_token_gets_the_styled_page_and_saves_nothing(lead):
    client = Client(enforce_csrf_checks=True)
    client.force_login(lead)
    response = client.post("/programs/new/", {"slug": "x"})
    assert response.status_code == 403
    html = response.content.decode()
    assert "This form is out of date" in html and 'class="topbar"' in html


@pytest.fixture
def web_log():
    """What the configured console handler (settings.LOGGING) writes, as the web process's log would show."""
    handler = next(h for h in logging.getLogger().handlers if h.get_name() == "console")
    stream = io.StringIO()
    previous = handler.setStream(stream)
    yield stream
    handler.setStream(previous)


@pytest.mark.urls("tests.core.test_error_pages")
def test_a_refused_page_is_one_log_line_and_a_500_keeps_its_traceback(viewer, web_log):
    client = Client(raise_request_exception=False)
    client.force_login(viewer)

    assert client.get("/forbidden/").status_code == 403
    assert client.get("/programs/gates/999999/").status_code == 404
    refused = web_log.getvalue()
    assert (
        "Forbidden (Permission denied): /forbidden/" in refused and "Not Found: /programs/gates/" in refused
    )
    assert "Traceback" not in refused

    assert client.get("/boom/").status_code == 500
    assert "Traceback" in web_log.getvalue() and "RuntimeError: a bug" in web_log.getvalue()
