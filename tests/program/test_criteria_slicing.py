"""Criteria with tag filters and group_by: the API, the evaluation (worst group decides), shadows."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from metrics.models import Observation
from metrics.selectors import comparison_compute
from metrics.selectors.comparison import SidesRequest, sides_fetch_many
from program import services
from program.evaluation import criterion_judge
from program.models import Criterion, Gate
from tests.metrics.factories import definition
from tests.program.factories import make_program, metrics_for_template, spread
from tests.program.versioning import next_version

# Hours to repair, per severity: the rebuilt stack repairs sev1/sev2 faster, sev3 slower.
HOURS = {"legacy": {"sev1": 10, "sev2": 8, "sev3": 4}, "rebuilt": {"sev1": 6, "sev2": 5, "sev3": 6}}


@pytest.fixture
def ref(db, lead):
    ref = metrics_for_template()
    ref["program"] = make_program(lead)
    ref["mttr"] = definition(key="mttr", unit="h", direction="lower_is_better", statistic="mean")
    start = timezone.now() - timedelta(days=2)
    for system, per_severity in HOURS.items():
        Observation.objects.bulk_create(
            Observation(
                definition=ref["mttr"],
                system=ref[system],
                workload=ref["large"],
                value=value,
                unit="h",
                observed_at=start + timedelta(seconds=i),
                run_id=f"{system}-{severity}-{i}",
                tags={"severity": severity, "bug_class": "communication-hang"},
            )
            for severity, hours in per_severity.items()
            for i, value in enumerate(spread(hours, 40))
        )
    return ref


def gate() -> Gate:
    return Gate.objects.get(phase__kind="canary", kind="exit")


def add(client, **fields):
    body = {
        "name": "MTTR no worse",
        "kind": "relative",
        "metric": "mttr",
        "operator": "gte",
        "threshold": 1.0,
        "require_significant": True,
        **fields,
    }
    return client.post(f"/api/v1/gates/{gate().pk}/criteria/", body, format="json")


def judge(criterion: Criterion, ref):
    return criterion_judge(criterion, baseline=ref["legacy"], candidate=ref["rebuilt"])


def test_tag_filters_decide_pass_and_fail(as_user, lead, ref):
    client = as_user(lead)
    severe = add(client, tag_filters={"severity": ["sev1", "sev2"]})
    assert severe.status_code == 201, severe.json()
    assert severe.json()["tag_filters"] == {"severity": ["sev1", "sev2"]}
    minor = add(client, name="MTTR sev3", tag_filters={"severity": ["sev3"]}).json()
    passing = judge(Criterion.objects.get(pk=severe.json()["id"]), ref)
    failing = judge(Criterion.objects.get(pk=minor["id"]), ref)
    assert passing.outcome == "pass", passing.reason
    assert passing.evidence["baseline"]["n"] == 80 and passing.evidence["tags"] == {
        "severity": ["sev1", "sev2"]
    }
    assert failing.outcome == "fail", failing.reason
    # Unfiltered the same criterion reads every row.
    unfiltered = add(client, name="MTTR all").json()
    assert judge(Criterion.objects.get(pk=unfiltered["id"]), ref).evidence["baseline"]["n"] == 120


def test_grouped_criterion_fails_on_its_worst_group_and_lists_each(as_user, lead, ref):
    created = add(as_user(lead), group_by="severity").json()
    judgement = judge(Criterion.objects.get(pk=created["id"]), ref)
    assert judgement.outcome == "fail"
    assert "2 of 3 groups of severity pass" in judgement.reason and "severity = sev3" in judgement.reason
    groups = {g["value"]: g for g in judgement.evidence["groups"]}
    assert {v: g["outcome"] for v, g in groups.items()} == {"sev1": "pass", "sev2": "pass", "sev3": "fail"}
    assert groups["sev3"]["estimate"] == pytest.approx(judgement.value)
    # Each group's number is that of the filtered comparison alone.
    alone = comparison_compute(
        definition=ref["mttr"],
        baseline=ref["legacy"],
        candidate=ref["rebuilt"],
        tag_filters={"severity": ["sev1"]},
    )
    assert groups["sev1"]["estimate"] == alone.relative_performance


def test_grouped_criterion_passes_when_every_group_passes(as_user, lead, ref):
    created = add(as_user(lead), group_by="severity", tag_filters={"severity": ["sev1", "sev2"]}).json()
    judgement = judge(Criterion.objects.get(pk=created["id"]), ref)
    assert judgement.outcome == "pass", judgement.reason
    assert [g["value"] for g in judgement.evidence["groups"]] == ["sev1", "sev2"]


def test_grouped_criterion_without_groups_is_inconclusive(as_user, lead, ref):
    created = add(as_user(lead), group_by="cluster").json()
    judgement = judge(Criterion.objects.get(pk=created["id"]), ref)
    assert judgement.outcome == "inconclusive"
    assert "no value of cluster" in judgement.reason


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"tag_filters": ["sev1"]}, "tag_filters"),
        ({"tag_filters": {"severity": []}}, "tag_filters"),
        ({"tag_filters": {"severity": ["x" * 300]}}, "tag_filters"),
        ({"tag_filters": {"k" * 65: ["v"]}}, "tag_filters"),
        ({"group_by": "g" * 65}, "group_by"),
    ],
)
def test_bad_slicing_is_a_400_naming_the_field(as_user, lead, ref, fields, field):
    response = add(as_user(lead), **fields)
    assert response.status_code == 400
    assert {e["field"] for e in response.json()["errors"]} == {field}
    assert not Criterion.objects.filter(name="MTTR no worse").exists()


def test_edit_sets_and_clears_filters_with_an_audit_row(as_user, lead, ref):
    client = as_user(lead)
    created = add(client).json()
    response = client.patch(
        f"/api/v1/criteria/{created['id']}/",
        {"tag_filters": {"severity": ["sev3"]}, "group_by": "bug_class"},
        format="json",
    )
    assert response.status_code == 200, response.json()
    criterion = Criterion.objects.get(pk=created["id"])
    assert (criterion.tag_filters, criterion.group_by) == ({"severity": ["sev3"]}, "bug_class")
    response = client.patch(f"/api/v1/criteria/{created['id']}/", {"tag_filters": {}}, format="json")
    assert Criterion.objects.get(pk=created["id"]).tag_filters == {}


def test_gate_evaluation_stores_the_grouped_result(as_user, lead, ref):
    created = add(as_user(lead), group_by="severity").json()
    evaluation = services.gate_evaluate(gate=gate())
    result = evaluation.results.get(criterion_id=created["id"])
    assert result.outcome == "fail"
    assert [g["value"] for g in result.evidence["groups"]] == ["sev1", "sev2", "sev3"]


def test_batched_sliced_sides_judge_as_the_single_read(as_user, lead, ref):
    created = add(as_user(lead), group_by="severity", tag_filters={"bug_class": ["communication-hang"]})
    criterion = Criterion.objects.get(pk=created.json()["id"])
    plain = SidesRequest(definition_id=ref["mttr"].pk)
    sliced = SidesRequest(
        definition_id=ref["mttr"].pk, tag_filters=criterion.tag_filters, group_by=criterion.group_by
    )
    pair, slices = sides_fetch_many([plain, sliced], baseline=ref["legacy"], candidate=ref["rebuilt"])
    assert pair[0].stats.n == 120
    batched = criterion_judge(criterion, baseline=ref["legacy"], candidate=ref["rebuilt"], sides=slices)
    single = judge(criterion, ref)
    assert (batched.outcome, batched.value, batched.reason) == (single.outcome, single.value, single.reason)
    assert batched.evidence["groups"] == single.evidence["groups"]


def form_post(client, **fields):
    body = {
        "new-name": "MTTR sev1-2 no worse",
        "new-kind": "relative",
        "new-metric": "mttr",
        "new-operator": "gte",
        "new-threshold": "1.0",
        "new-min_samples": "30",
        "new-required": "on",
        "new-require_significant": "on",
        **{f"new-{k}": v for k, v in fields.items()},
    }
    return client.post(f"/programs/gates/{gate().pk}/criteria/", body, follow=True)


def test_the_gate_page_form_adds_filters_and_the_page_shows_each_group(client, lead, ref):
    client.force_login(lead)
    response = form_post(client, tag_filters="severity=sev1,sev2", group_by="severity")
    html = response.content.decode()
    added = Criterion.objects.get(name="MTTR sev1-2 no worse")
    assert (added.tag_filters, added.group_by) == ({"severity": ["sev1", "sev2"]}, "severity")
    assert 'only rows with <span class="mono">severity in (sev1, sev2)</span>' in html
    assert 'in every group of <span class="mono">severity</span> (the worst decides)' in html
    assert html.count('<span class="mono">severity = sev') == 2  # one line per group
    assert "2 of 2 groups of severity pass" in html
    assert 'value="severity=sev1,sev2"' in html  # the edit form shows the filter as typed


def test_the_gate_page_form_refuses_a_bad_filter_naming_it(client, lead, ref):
    client.force_login(lead)
    html = form_post(client, tag_filters="severity").content.decode()
    assert "is not key=value" in html
    assert not Criterion.objects.filter(name="MTTR sev1-2 no worse").exists()


def test_gate_page_queries_stay_constant_with_grouped_criteria_and_their_shadows(client, as_user, lead, ref):
    """Sliced shadows (a draft v2 with rows) come from one batched read whatever their number."""
    draft = next_version(ref["mttr"])
    rows = Observation.objects.filter(definition=ref["mttr"])
    Observation.objects.bulk_create(
        Observation(
            **{
                **{f.attname: getattr(o, f.attname) for f in Observation._meta.concrete_fields},
                "definition_id": draft.pk,
            }
        )
        for o in rows
    )
    api = as_user(lead)
    client.force_login(lead)
    path = f"/programs/gates/{gate().pk}/"

    def queries() -> tuple[int, str]:
        services.gate_evaluate(gate=gate())
        client.get(path)
        with CaptureQueriesContext(connection) as context:
            html = client.get(path).content.decode()
        return len(context.captured_queries), html

    add(api, name="grouped 0", group_by="severity")
    small, html = queries()
    assert "Under v2" in html and html.count("groups of severity pass") >= 1
    for i in range(1, 4):
        add(api, name=f"grouped {i}", group_by="severity", tag_filters={"severity": ["sev1", "sev2", "sev3"]})
    large, html = queries()
    assert html.count("Under v2") == 4
    assert large == small
