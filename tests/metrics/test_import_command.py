import io
import json

import pytest
from django.core.management import CommandError, call_command

from metrics.models import Observation
from tests.metrics.factories import reference_data, row


@pytest.fixture
def ref(db, ingest_user):
    return reference_data()


def test_imports_ndjson_in_batches_and_summarises(tmp_path, ref):
    path = tmp_path / "obs.ndjson"
    path.write_text("\n".join(json.dumps(row(i)) for i in range(25)))
    out = io.StringIO()
    call_command("import_observations", str(path), "--batch-size", "10", stdout=out, verbosity=0)
    assert Observation.objects.count() == 25
    assert "25 rows in 3 batch(es): 25 new, 0 already present" in out.getvalue()
    again = io.StringIO()
    call_command("import_observations", str(path), stdout=again, verbosity=0)
    assert "0 new, 25 already present" in again.getvalue()


def test_bad_rows_stop_the_import_with_row_numbers(tmp_path, ref):
    path = tmp_path / "obs.json"
    path.write_text(json.dumps({"observations": [row(0), row(1, value="nan")]}))
    err = io.StringIO()
    with pytest.raises(CommandError, match="refused"):
        call_command("import_observations", str(path), stderr=err, verbosity=0)
    assert "row 1: value" in err.getvalue()
    assert Observation.objects.count() == 0


def test_unknown_extension_and_missing_file(tmp_path, ref):
    with pytest.raises(CommandError, match="does not exist"):
        call_command("import_observations", str(tmp_path / "nope.csv"))
    odd = tmp_path / "obs.xml"
    odd.write_text("<x/>")
    with pytest.raises(CommandError, match=r"use \.json"):
        call_command("import_observations", str(odd))
