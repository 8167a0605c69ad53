"""The ingest page (/metrics/key/ingest/): upload or paste rows → preview (nothing written) → confirm
(written once, through the ingest service and its Idempotency-Key), for ingest-permitted users only."""

from __future__ import annotations

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from metrics.models import IngestBatch, Observation
from tests.conftest import make_user

URL = "/metrics/latency/ingest/"
GOOD = (
    "metric,system,workload,value,unit,observed_at,run_id\n"
    "latency,rebuilt,pretrain,1.5,s,2026-01-01T10:00:00Z,r1\n"
    "latency,legacy,pretrain,1800,ms,2026-01-01T10:00:00Z,r1\n"
)
BAD = GOOD + "latency,rebuilt,nowhere,abc,s,2026-01-01T11:00:00Z,r2\n"


@pytest.fixture
def pusher(db):
    """A metric owner who may also push observations (the batch API's write rule)."""
    return make_user("pusher", "metric-owners", perms=("metrics.add_observation",))


def preview(client, text: str, fmt: str = "csv"):
    return client.post(URL, {"preview": "1", "text": text, "format": fmt})


def confirm_fields(page: str) -> dict[str, str]:
    form = page.split('data-testid="confirm-form"')[1].split("</form>")[0]
    fields = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', form))
    # The hidden text is HTML-escaped in the page; a browser sends it unescaped.
    fields = {
        k: v.replace("&quot;", '"').replace("&#x27;", "'").replace("&amp;", "&") for k, v in fields.items()
    }
    return {**fields, "confirm": "1"}


def test_preview_lists_row_errors_with_row_and_field_and_writes_nothing(client, ref, pusher):
    client.force_login(pusher)
    response = preview(client, BAD)
    assert response.status_code == 200
    page = response.content.decode()
    assert "2 of 3 rows valid" in page
    errors = page.split('data-testid="row-errors"')[1].split("</table>")[0]
    assert '<td data-label="Row" class="key mono">3</td>' in errors
    assert "unknown workload &#x27;nowhere&#x27;." in errors
    assert '<td data-label="Field" class="mono">value</td>' in errors
    first_rows = page.split('data-testid="first-rows"')[1].split("</table>")[0]
    assert first_rows.count("<tr>") == 4  # the header and three rows, as read
    assert "1800" in first_rows and "2 problems" in first_rows
    assert 'data-testid="confirm-form"' not in page  # all or nothing: no confirm while a row fails
    assert Observation.objects.count() == 0 and IngestBatch.objects.count() == 0


def test_a_valid_preview_writes_nothing_and_offers_confirm(client, ref, pusher):
    client.force_login(pusher)
    page = preview(client, GOOD).content.decode()
    assert "2 of 2 rows valid" in page and "Store 2 observations" in page
    assert Observation.objects.count() == 0


def test_an_uploaded_file_takes_its_format_from_the_extension(client, ref, pusher):
    client.force_login(pusher)
    ndjson = (
        b'{"metric": "latency", "system": "rebuilt", "workload": "pretrain", "value": 2, '
        b'"observed_at": "2026-01-01T10:00:00Z"}\n'
    )
    upload = SimpleUploadedFile("rows.ndjson", ndjson, content_type="application/octet-stream")
    page = client.post(URL, {"preview": "1", "file": upload, "format": "csv"}).content.decode()
    assert "1 of 1 row valid" in page


def test_confirm_writes_the_previewed_rows_once_and_a_reload_does_not_write_again(client, ref, pusher):
    client.force_login(pusher)
    fields = confirm_fields(preview(client, GOOD).content.decode())
    assert fields["key"].startswith("page-")
    response = client.post(URL, fields, follow=True)
    assert response.redirect_chain[-1][0] == "/metrics/latency@1/"
    assert "Stored 2 of 2 observations" in response.content.decode()
    assert Observation.objects.count() == 2 and IngestBatch.objects.count() == 1
    # The browser sends the confirmation again (a reload, back and resubmit): the service replays it.
    again = client.post(URL, fields, follow=True)
    assert "already stored" in again.content.decode()
    assert Observation.objects.count() == 2 and IngestBatch.objects.count() == 1
    batch = IngestBatch.objects.get()
    assert batch.submitted_by == pusher and batch.source == "ingest page"


def test_the_page_calls_the_same_service_as_the_api(client, ref, pusher, monkeypatch):
    from metrics import ingest

    seen = {}
    real = ingest.observations_ingest

    def spy(**kwargs):
        seen.update(kwargs)
        return real(**kwargs)

    monkeypatch.setattr(ingest, "observations_ingest", spy)
    client.force_login(pusher)
    client.post(URL, confirm_fields(preview(client, GOOD).content.decode()))
    assert seen["content_type"] == "text/csv" and seen["idempotency_key"].startswith("page-")


@pytest.mark.parametrize("method", ["get", "post"])
def test_a_viewer_gets_403_and_no_form(client, ref, viewer, method):
    client.force_login(viewer)
    response = getattr(client, method)(URL, {"preview": "1", "text": GOOD} if method == "post" else None)
    assert response.status_code == 403
    assert 'data-testid="ingest-form"' not in response.content.decode()
    assert Observation.objects.count() == 0


def test_a_metric_owner_without_the_ingest_permission_gets_403(client, ref, metric_owner):
    client.force_login(metric_owner)
    assert client.get(URL).status_code == 403


def test_metric_page_links_the_ingest_page_only_for_users_who_may_ingest(client, ref, pusher, viewer):
    client.force_login(viewer)
    assert "Upload observations" not in client.get("/metrics/latency/").content.decode()
    client.force_login(pusher)
    page = client.get("/metrics/latency/").content.decode()
    assert f'href="{URL.replace("latency", "latency@1")}"' in page and "Upload observations" in page


def test_empty_state_snippets_carry_the_real_metric_and_urls(client, ref, pusher):
    client.force_login(pusher)
    page = client.get(URL).content.decode()
    assert 'data-testid="ingest-empty"' in page
    assert "latency,rebuilt,finetune,1.0,s," in page  # the example CSV names this metric's rows
    curl = page.split('data-testid="snippet-curl-csv">')[1].split("</pre>")[0]
    assert "http://testserver/api/v1/observations/batch/" in curl and "Idempotency-Key" in curl
    json_line = page.split('data-testid="snippet-curl-json">')[1].split("</pre>")[0]
    assert "&quot;metric&quot;: &quot;latency&quot;" in json_line
    otlp = page.split('data-testid="snippet-otlp">')[1].split("</pre>")[0]
    assert "http://testserver/otlp/v1/metrics" in otlp and "&#x27;latency&#x27;" in otlp
    assert "manage.py import_observations" in page
    assert page.count('data-copy="#snippet-') == 5  # each snippet and the example has a copy button
    assert "<script>" not in page  # the copy buttons are app.js's, under the CSP


def test_a_draft_version_is_named_key_at_n_and_gets_no_otlp_line(client, ref, pusher):
    from tests.metrics.factories import definition

    definition(key="latency", version=2, status="draft", excludes=["queueing"])
    client.force_login(pusher)
    page = client.get("/metrics/latency@2/ingest/").content.decode()
    assert "latency@2,rebuilt,finetune" in page
    assert 'data-testid="snippet-otlp"' not in page and "no OTLP line for latency@2" in page


def test_unreadable_csv_is_an_error_on_the_page_not_a_500(client, ref, pusher):
    client.force_login(pusher)
    response = preview(client, "metric,value\r1,2\rx")
    assert response.status_code == 400
    assert "The CSV cannot be read" in response.content.decode()


def test_registering_a_metric_links_the_ingest_page_instead_of_saying_push(client, ref, pusher):
    from metrics.pages.definitions import _registered_message
    from tests.metrics.factories import definition

    class Request:
        user = pusher

    draft = definition(key="probe", status="draft")
    message = _registered_message(Request(), draft)  # type: ignore[arg-type]
    assert '<a href="/metrics/probe@1/ingest/">Upload observations</a>' in message
    assert "Push observations to" not in message


def test_a_confirmation_refused_since_the_preview_stores_nothing_and_says_why(client, ref, pusher):
    client.force_login(pusher)
    fields = confirm_fields(preview(client, GOOD).content.decode())
    ref["latency"].status = "deprecated"  # between the preview and the confirmation
    ref["latency"].save(update_fields=["status"])
    response = client.post(URL.replace("latency", "latency@1"), fields)
    assert response.status_code == 422
    page = response.content.decode()
    assert 'data-testid="confirm-refused"' in page and "Nothing was stored" in page
    assert Observation.objects.count() == 0


def test_a_confirmation_without_its_rows_is_a_400_naming_it(client, ref, pusher):
    client.force_login(pusher)
    response = client.post(URL, {"confirm": "1"})
    assert response.status_code == 400
    assert "The confirmation lost its rows: preview them again." in response.content.decode()
