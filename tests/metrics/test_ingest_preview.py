"""observations_preview: the ingest page's preview is the batch's own check, written nowhere."""

from __future__ import annotations

import json

import pytest

from core.errors import ApplicationError
from metrics.ingest import observations_ingest, observations_preview
from metrics.models import IngestBatch, Observation
from tests.metrics.factories import row


def body(rows: list[dict]) -> bytes:
    return json.dumps({"observations": rows}).encode()


def test_the_preview_names_the_same_row_errors_as_the_refused_batch(ref, ingest_user):
    rows = [row(), row(value="fast", run_id="b"), row(workload="nowhere", unit="kg", run_id="c")]
    preview = observations_preview(body=body(rows), content_type="application/json")
    with pytest.raises(ApplicationError) as refused:
        observations_ingest(body=body(rows), content_type="application/json", actor=ingest_user)
    assert preview.errors == refused.value.errors
    assert (preview.received, preview.valid, preview.refused) == (3, 1, 2)
    assert [r["run_id"] for r in preview.first_rows] == [rows[0]["run_id"], "b", "c"]
    assert Observation.objects.count() == 0 and IngestBatch.objects.count() == 0


def test_a_clean_preview_writes_nothing(ref):
    preview = observations_preview(body=body([row()]), content_type="application/json", first=0)
    assert (preview.valid, preview.errors, preview.first_rows) == (1, [], [])
    assert Observation.objects.count() == 0


def test_an_empty_body_is_refused_as_the_batch_would_be(ref):
    with pytest.raises(ApplicationError) as refused:
        observations_preview(body=b"", content_type="text/csv")
    assert refused.value.status == 400 and refused.value.errors[0]["field"] == "observations"
