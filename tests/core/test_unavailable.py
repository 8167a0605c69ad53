"""A database or broker out of reach answers 503 with Retry-After — JSON on the API, a page elsewhere."""

from __future__ import annotations

import contextlib

import psycopg
import pytest
from django.db import InterfaceError, connection
from django.test import Client
from kombu.exceptions import OperationalError as BrokerOperationalError

from core.unavailable import RETRY_AFTER_SECONDS, UNAVAILABLE_MESSAGE, is_unavailable


def _refused_connection(execute, sql, params, many, context):
    """Every query meets a real "connection refused", raised and wrapped the way Django does."""
    with connection.wrap_database_errors:
        psycopg.connect("postgresql://postgres@127.0.0.1:1/none", connect_timeout=1)
    raise AssertionError("port 1 accepted a connection")


@contextlib.contextmanager
def database_unreachable():
    with connection.execute_wrapper(_refused_connection):
        yield


def _wrapped(error: Exception) -> Exception:
    """`error` as Django raises it from psycopg: a django.db error whose __cause__ carries the SQLSTATE."""
    try:
        with connection.wrap_database_errors:
            raise error
    except Exception as exc:
        return exc
    raise AssertionError("not raised")


@pytest.mark.django_db
def test_api_answers_503_with_retry_after_when_the_database_is_unreachable(as_user, viewer):
    client = as_user(viewer)
    with database_unreachable():
        response = client.get("/api/v1/programs/")
    assert response.status_code == 503
    assert response["Retry-After"] == str(RETRY_AFTER_SECONDS)
    assert response.json() == {"detail": UNAVAILABLE_MESSAGE, "code": "unavailable", "errors": []}

    assert client.get("/api/v1/programs/").status_code == 200


@pytest.mark.django_db
def test_page_answers_503_page_when_the_session_cannot_be_loaded(viewer):
    # The session and the user load in middleware, before any view: Django has already turned the
    # exception into a 500 by the time ServiceUnavailableMiddleware sees the response. (The test client
    # re-raises such exceptions by default; the real server does not, so neither does this client.)
    client = Client(raise_request_exception=False)
    client.force_login(viewer)
    with database_unreachable():
        response = client.get("/programs/")
    assert response.status_code == 503
    assert response["Retry-After"] == str(RETRY_AFTER_SECONDS)
    assert response["Content-Type"].startswith("text/html")
    assert UNAVAILABLE_MESSAGE in response.content.decode()

    assert client.get("/programs/").status_code == 200


@pytest.mark.django_db
def test_api_answers_503_when_the_failure_happens_in_middleware(viewer):
    # A session-authenticated POST: pghistory's middleware reads the user before DRF runs.
    client = Client(raise_request_exception=False)
    client.force_login(viewer)
    with database_unreachable():
        response = client.post("/api/v1/programs/", {}, content_type="application/json")
    assert response.status_code == 503
    assert response["Retry-After"] == str(RETRY_AFTER_SECONDS)
    assert response.json()["code"] == "unavailable"


@pytest.mark.django_db
def test_other_database_errors_are_not_disguised_as_unavailable():
    assert not is_unavailable(_wrapped(psycopg.errors.DeadlockDetected("deadlock detected")))
    assert not is_unavailable(_wrapped(psycopg.errors.ProgramLimitExceeded("index row size exceeds")))
    assert not is_unavailable(ValueError("unrelated"))


@pytest.mark.django_db
@pytest.mark.parametrize(
    "error",
    [
        psycopg.OperationalError("connection failed: FATAL:  sorry, too many clients already"),
        psycopg.errors.TooManyConnections("too many connections for role"),
        psycopg.errors.AdminShutdown("terminating connection due to administrator command"),
        psycopg.errors.CannotConnectNow("the database system is starting up"),
        psycopg.InterfaceError("the connection is closed"),
    ],
    ids=lambda error: type(error).__name__,
)
def test_connection_failures_count_as_unavailable(error):
    assert is_unavailable(_wrapped(error))


def test_django_and_broker_connection_errors_count_as_unavailable():
    assert is_unavailable(InterfaceError("connection already closed"))
    assert is_unavailable(BrokerOperationalError("Error 111 connecting to 127.0.0.1:6379"))


@pytest.mark.django_db
def test_unavailable_page_keeps_the_security_headers(viewer):
    client = Client(raise_request_exception=False)
    client.force_login(viewer)
    with database_unreachable():
        response = client.get("/programs/")
    assert response.status_code == 503
    assert response["X-Content-Type-Options"] == "nosniff"
