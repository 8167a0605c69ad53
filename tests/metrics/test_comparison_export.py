"""GET /api/v1/comparisons/export/: the comparison's answer and its sides as CSV, the same numbers as
GET /api/v1/comparisons/, and the comparison page's "Download CSV" link is that view (issue 30, item 6)."""

from __future__ import annotations

import csv
import io
import random
from datetime import timedelta
from html import unescape

import pytest
from django.utils import timezone

from metrics.api.comparisons import ANSWER_COLUMNS, COMPARISON_CSV_COLUMNS, ComparisonCoreOutput
from metrics.models import Observation
from tests.conftest import api_token

URL = "/api/v1/comparisons/"
EXPORT = "/api/v1/comparisons/export/"
QUERY = {"metric": "latency", "baseline": "legacy", "candidate": "rebuilt", "statistic": "p50"}
NUMBERS = ("n", "mean", "p50", "p90", "p95", "p99", "min", "max", "value")


@pytest.fixture
def stored(ref):
    """120 rows a side, the candidate faster; half of each side tagged host=a, half host=b."""
    rng = random.Random(3)
    start = timezone.now() - timedelta(days=1)
    Observation.objects.bulk_create(
        Observation(
            definition=ref["latency"],
            system=ref[system],
            workload=ref["medium"],
            value=rng.lognormvariate(mu, 0.2),
            unit="s",
            observed_at=start + timedelta(seconds=i),
            run_id=f"{system}-{i}",
            tags={"host": "ab"[i % 2]},
        )
        for system, mu in (("legacy", 0.0), ("rebuilt", -0.3))
        for i in range(120)
    )
    return ref


def rows_of(response) -> list[dict]:
    assert response.status_code == 200, response.content
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    text = response.content.decode()
    assert text.splitlines()[0] == ",".join(COMPARISON_CSV_COLUMNS)
    return list(csv.DictReader(io.StringIO(text)))


def cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def test_the_csv_has_the_answer_and_a_row_per_side_with_the_apis_numbers(as_user, viewer, stored):
    client = as_user(viewer)
    answer = client.get(URL, QUERY).json()
    response = client.get(EXPORT, QUERY)
    baseline, candidate = rows_of(response)

    assert (baseline["side"], candidate["side"]) == ("baseline", "candidate")
    assert (baseline["system"], candidate["system"]) == ("legacy", "rebuilt")
    for row in (baseline, candidate):
        for column in ("metric", "unit", "statistic", "verdict", "method", "approximate", "alpha", "p_value"):
            assert row[column] == cell(answer[column]), column
        assert row["relative_performance"] == cell(answer["relative_performance"])
        low, high = answer["relative_performance_ci"]
        assert (row["relative_performance_ci_low"], row["relative_performance_ci_high"]) == (
            str(low),
            str(high),
        )
        assert row["group"] == "" and row["unit"] == "s"
    for row, side in ((baseline, answer["baseline"]), (candidate, answer["candidate"])):
        assert [row[k] for k in NUMBERS] == [cell(side[k]) for k in NUMBERS]
        assert (row["ci_low"], row["ci_high"]) == tuple(str(bound) for bound in side["ci"])
    assert answer["verdict"] == "better" and baseline["n"] == candidate["n"] == "120"
    today = f"{timezone.now():%Y-%m-%d}"
    assert response["Content-Disposition"] == (
        f'attachment; filename="comparison_latency@1_legacy-vs-rebuilt_start_{today}.csv"'
    )


def test_a_grouped_comparison_adds_a_row_per_side_of_each_group(as_user, viewer, stored):
    client = as_user(viewer)
    query = {**QUERY, "group_by": "host", "since": "2026-01-01T00:00:00Z"}
    answer = client.get(URL, query).json()
    rows = rows_of(client.get(EXPORT, query))

    assert [(r["group"], r["side"]) for r in rows] == [
        ("", "baseline"),
        ("", "candidate"),
        ("a", "baseline"),
        ("a", "candidate"),
        ("b", "baseline"),
        ("b", "candidate"),
    ]
    assert {r["group_by"] for r in rows} == {"host"}
    by_group = {g["value"]: g["comparison"] for g in answer["groups"]}
    assert [r["n"] for r in rows[2:]] == [
        str(by_group[g][side]["n"]) for g in "ab" for side in ("baseline", "candidate")
    ]
    assert rows[2]["verdict"] == by_group["a"]["verdict"]
    assert client.get(EXPORT, query)["Content-Disposition"].endswith(
        f'_2026-01-01_{timezone.now():%Y-%m-%d}.csv"'
    )


def test_too_little_data_still_exports_with_empty_intervals(as_user, viewer, ref):
    rows = rows_of(as_user(viewer).get(EXPORT, QUERY))

    assert [r["verdict"] for r in rows] == ["insufficient_data"] * 2
    assert [r["n"] for r in rows] == ["0", "0"] and rows[0]["ci_low"] == "" and rows[0]["reason"]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({**QUERY, "metric": "nope"}, "metric"),
        ({**QUERY, "baseline": "nope"}, "baseline"),
        ({**QUERY, "statistic": "p42"}, "statistic"),
        ({"metric": "latency"}, "baseline"),
    ],
)
def test_bad_parameters_are_the_comparisons_400_naming_them(as_user, viewer, ref, params, field):
    client = as_user(viewer)
    response = client.get(EXPORT, params)

    assert response.status_code == 400
    assert field in [e["field"] for e in response.json()["errors"]]
    assert client.get(URL, params).status_code == 400


def test_any_reader_with_a_read_token_exports_and_nobody_else(api, viewer, ingest_user, stored):
    assert api.get(EXPORT, QUERY).status_code == 401
    api.credentials(HTTP_AUTHORIZATION=f"Token {api_token(viewer, 'read')}")
    assert api.get(EXPORT, QUERY).status_code == 200
    api.credentials(HTTP_AUTHORIZATION=f"Token {api_token(ingest_user, 'ingest')}")
    assert api.get(EXPORT, QUERY).status_code == 403


def test_the_comparison_pages_download_link_is_the_export_of_what_it_shows(client, viewer, stored):
    """The page's tag box (`host=a`) becomes the API's `tags.host=a` in the link: the same comparison."""
    client.force_login(viewer)
    page = client.get("/metrics/compare/", {**QUERY, "tags": "host=a"}).content.decode()

    marker = 'data-testid="comparison-csv"'
    assert marker in page and "Download CSV" in page
    anchor = page[: page.index(marker)]
    href = unescape(anchor[anchor.rindex('href="') + 6 :].split('"')[0])
    assert href.startswith(EXPORT) and "tags.host=a" in href
    downloaded = rows_of(client.get(href))
    api = client.get(URL, {**QUERY, "tags.host": "a"}).json()
    assert (
        [r["n"] for r in downloaded]
        == [str(api["baseline"]["n"]), str(api["candidate"]["n"])]
        == ["60", "60"]
    )
    assert downloaded[0]["tags"] == '{"host":["a"]}'


@pytest.mark.parametrize("asked", [{"HTTP_ACCEPT": "text/csv"}, {"format": "csv"}])
def test_the_export_answers_csv_however_it_is_asked_for(as_user, viewer, stored, asked):
    headers = {k: v for k, v in asked.items() if k.startswith("HTTP_")}
    params = {**QUERY, **{k: v for k, v in asked.items() if not k.startswith("HTTP_")}}

    assert len(rows_of(as_user(viewer).get(EXPORT, params, **headers))) == 2


def test_every_field_of_the_answer_has_a_column():
    """ANSWER_COLUMNS is written out for the file's order; a field added to the answer must join it."""
    sides_and_pair = {"baseline", "candidate", "relative_performance_ci"}  # written as their own columns
    assert set(ComparisonCoreOutput().fields) - sides_and_pair <= set(ANSWER_COLUMNS)
