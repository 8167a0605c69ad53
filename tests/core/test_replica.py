"""Read replicas (core/replica.py): the heavy pure-read views read the registry from the replica; writes,
auth and a browser that has just written stay on the primary.

The "replica" here is Django's test mirror of the primary (config/settings/test.py): a second connection
to the same database. The routing is what is under test, and its queries are captured on that alias's own
connection.
"""

from __future__ import annotations

import pytest
from django.db import connections
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from rest_framework.test import APIClient

from core.replica import PIN_COOKIE, REPLICA, ReplicaRouter, replica_reads
from metrics.models import MetricDefinition
from tests.conftest import api_token, make_user
from tests.metrics.factories import reference_data

# Committed rows, so that the replica's own connection sees them.
pytestmark = pytest.mark.django_db(transaction=True, databases=["default", REPLICA])


@pytest.fixture
def replica(settings):
    settings.REPLICA_READS = True
    yield connections[REPLICA]
    # The mirror keeps a pool of its own, which the test database's teardown does not know about.
    connections[REPLICA].close()
    connections[REPLICA].close_pool()


@pytest.fixture
def registry():
    return reference_data()


def _queries(captured: CaptureQueriesContext) -> list[str]:
    return [q["sql"] for q in captured.captured_queries]


def test_router_sends_registry_reads_to_the_replica_only_inside_the_block(replica, registry):
    router = ReplicaRouter()
    assert router.db_for_read(MetricDefinition) is None
    with replica_reads():
        assert router.db_for_read(MetricDefinition) == REPLICA
        # Users and tokens stay on the primary: a login made a moment ago must always work.
        from django.contrib.auth.models import User

        assert router.db_for_read(User) is None
    assert router.allow_migrate(REPLICA, "metrics") is False
    assert router.allow_migrate("default", "metrics") is True


def test_without_a_replica_the_block_changes_nothing(registry, settings):
    settings.REPLICA_READS = False
    with replica_reads():
        assert ReplicaRouter().db_for_read(MetricDefinition) is None


def test_metric_page_reads_the_registry_from_the_replica(replica, registry, client):
    client.force_login(make_user("reader", "viewer"))
    with CaptureQueriesContext(replica) as on_replica:
        response = client.get(reverse("metrics:detail", kwargs={"key": "latency"}))
    assert response.status_code == 200
    assert b"Latency" in response.content
    assert any('"metrics_metricdefinition"' in sql for sql in _queries(on_replica))
    # Sessions and users were read from the primary.
    assert not any('"django_session"' in sql or '"auth_user"' in sql for sql in _queries(on_replica))


def test_api_comparison_reads_from_the_replica_and_authenticates_on_the_primary(replica, registry):
    user = make_user("script", "viewer")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {api_token(user, 'read')}")
    with CaptureQueriesContext(replica) as on_replica:
        response = api.get(
            "/api/v1/comparisons/", {"metric": "latency", "baseline": "legacy", "candidate": "rebuilt"}
        )
    assert response.status_code == 200, response.content
    queries = _queries(on_replica)
    assert any('"metrics_metricdefinition"' in sql for sql in queries)
    assert not any('"core_apitoken"' in sql for sql in queries)


def test_a_browser_that_wrote_reads_from_the_primary_until_the_pin_expires(
    replica, registry, client, settings
):
    client.force_login(make_user("owner1", "metric_owner"))
    # Any write answered below 400 pins the browser; logging out is the simplest one every user may make.
    response = client.post(reverse("logout"))
    assert response.status_code < 400
    pin = response.cookies[PIN_COOKIE]
    assert pin.value == "1" and int(pin["max-age"]) == settings.REPLICA_PIN_SECONDS

    client.force_login(make_user("owner2", "metric_owner"))
    client.cookies[PIN_COOKIE] = "1"
    with CaptureQueriesContext(replica) as on_replica:
        assert client.get(reverse("metrics:detail", kwargs={"key": "latency"})).status_code == 200
    assert _queries(on_replica) == []


def test_views_not_listed_never_read_from_the_replica(replica, registry, client):
    client.force_login(make_user("reader2", "viewer"))
    with CaptureQueriesContext(replica) as on_replica:
        assert client.get(reverse("program:list")).status_code == 200
    assert _queries(on_replica) == []


def test_raw_sql_reads_of_the_listed_views_use_the_replica_too(replica, registry):
    from tests.metrics.factories import row

    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {api_token(make_user('lister', 'viewer'), 'read')}")
    ingest = APIClient()
    ingest.force_authenticate(make_user("pusher", perms=("metrics.add_observation",)))
    assert (
        ingest.post("/api/v1/observations/batch/", {"observations": [row(0)]}, format="json").status_code
        == 201
    )
    with CaptureQueriesContext(replica) as on_replica:
        response = api.get("/api/v1/observations/", {"metric": "latency", "page_size": 50})
    assert response.status_code == 200 and len(response.json()["results"]) == 1
    assert any(
        '"metrics_observation"' in sql or "metrics_observation " in sql for sql in _queries(on_replica)
    )
