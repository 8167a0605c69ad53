"""core.csv_input.csv_records, the reader of every CSV import (each import's own test posts a bare CR to
its endpoint: tests/metrics/test_observations_ingest.py, tests/incidents/test_api.py,
tests/freeze/test_levels_editor.py)."""

from __future__ import annotations

import csv

import pytest

from core.csv_input import REASON_BARE_CR, csv_records
from core.errors import ApplicationError


def test_lf_and_crlf_lines_and_quoted_line_breaks_are_read():
    text = 'a,b\r\n1,"two\rlines"\n3,"x\r\ny"\r\n'
    assert csv_records(text, field="body") == [
        {"a": "1", "b": "two\rlines"},
        {"a": "3", "b": "x\r\ny"},
    ]


@pytest.mark.parametrize(
    ("text", "line"),
    [("a,b\n1,2\r3,4\n", 2), ("a,b\n1,2\n3,x\ry\n", 3), ("a,b\r1,2\r", 1)],
    ids=["ending-a-row", "inside-a-cell", "old-mac-line-ends"],
)
def test_a_bare_cr_outside_quotes_is_a_400_naming_the_field_and_line(text, line):
    with pytest.raises(ApplicationError) as refused:
        csv_records(text, field="file")
    assert refused.value.status == 400
    assert refused.value.errors == [{"field": "file", "message": refused.value.message}]
    assert REASON_BARE_CR in refused.value.message
    assert f"at line {line}:" in refused.value.message


def test_any_other_csv_error_is_a_400_too():
    huge = "a\n" + "x" * (csv.field_size_limit() + 1) + "\n"
    with pytest.raises(ApplicationError) as refused:
        csv_records(huge, field="body")
    assert refused.value.status == 400
    assert "field larger than field limit" in refused.value.message
