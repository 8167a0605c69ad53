"""The every-metric criterion ("fully surpasses"): program.evaluation_every, its service rules, the
template's cutover exit gate, and the multiplicity method checked by simulation."""

from __future__ import annotations

import copy
import re

import numpy as np
import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from core.errors import ApplicationError
from core.models import OutboxMessage
from metrics.inference import infer, judge
from metrics.rollups.maintain import rollups_rebuild
from program import services
from program.blueprints import BlueprintError, blueprint_load
from program.blueprints.schema import blueprint_check
from program.evaluation import criterion_judge
from program.evaluation_every import combined_outcome, every_metric_inputs, holm_regressions
from program.models import Criterion, CriterionResult, Gate
from program.services import gates_evaluate_for_definitions
from tests.metrics.factories import definition
from tests.program.factories import observe, spread

EVERY = "Every tracked metric at least as good as legacy"


def cutover_gate() -> Gate:
    return Gate.objects.get(phase__kind="cutover", kind="exit")


def every_result(evaluation) -> CriterionResult:
    return evaluation.results.get(criterion__kind="every_metric")


def by_metric(result: CriterionResult) -> dict[str, str]:
    return {row["metric"]: row["outcome"] for row in result.evidence["metrics"]}


def feed(ref, metric, legacy: float, rebuilt: float, *, n: int = 60, workload: str = "large") -> None:
    observe(
        ref[metric] if isinstance(metric, str) else metric, ref["legacy"], ref[workload], spread(legacy, n)
    )
    observe(
        ref[metric] if isinstance(metric, str) else metric, ref["rebuilt"], ref[workload], spread(rebuilt, n)
    )


def improving(ref) -> None:
    """Throughput 20 % higher, step time 20 % lower, scaling efficiency 0.84 → 0.93: all better."""
    feed(ref, "throughput", 100, 120)
    feed(ref, "step", 800, 640)
    feed(ref, "scaling", 0.84, 0.93)


def every_criterion() -> Criterion:
    return cutover_gate().criteria.get(kind="every_metric")


def test_the_template_cutover_gate_fails_when_one_tracked_metric_regresses_while_the_rest_improve(ref):
    feed(ref, "throughput", 100, 120)  # better, significantly: the throughput criterion passes
    feed(ref, "scaling", 0.84, 0.93)  # ≥ 0.9: the scaling criterion passes
    feed(ref, "step", 800, 900)  # step time 12 % slower: a regression
    evaluation = services.gate_evaluate(gate=cutover_gate())
    assert not evaluation.all_required_pass
    assert evaluation.failing == [EVERY]
    result = every_result(evaluation)
    assert result.outcome == "fail"
    assert by_metric(result) == {
        "scaling-efficiency@1": "pass",
        "step-time@1": "fail",
        "training-throughput@1": "pass",
    }
    assert result.evidence["method"] == "intersection-union+holm"
    assert result.evidence["deciding_metric"] == "step-time@1"
    assert result.value == pytest.approx(800 / 900, rel=0.02)
    assert "worse: step-time@1" in result.reason
    step = next(row for row in result.evidence["metrics"] if row["metric"] == "step-time@1")
    assert step["statistic"] == "p50" and step["holm_level"] == pytest.approx(0.05 / 3)
    assert step["relative_performance_ci"][1] < 1


def test_every_metric_better_passes_and_each_is_judged_by_its_own_statistic(ref):
    improving(ref)
    result = every_result(services.gate_evaluate(gate=cutover_gate()))
    assert result.outcome == "pass"
    assert set(by_metric(result).values()) == {"pass"}
    statistics = {row["metric"]: (row["statistic"], row["method"]) for row in result.evidence["metrics"]}
    assert statistics == {
        "scaling-efficiency@1": ("mean", "welch-fieller"),
        "step-time@1": ("p50", "order-statistic"),
        "training-throughput@1": ("mean", "welch-fieller"),
    }
    assert result.evidence["counts"] == {"pass": 3, "fail": 0, "inconclusive": 0}


def test_a_metric_with_too_little_data_is_inconclusive_and_named_never_a_silent_pass(ref):
    improving(ref)
    mfu = definition(key="mfu", unit="percent", direction="higher_is_better", statistic="mean")
    feed(ref, mfu, 38, 46, n=10)
    result = every_result(services.gate_evaluate(gate=cutover_gate()))
    assert result.outcome == "inconclusive"
    assert by_metric(result)["mfu@1"] == "inconclusive"
    assert "inconclusive: mfu@1" in result.reason
    mfu_row = next(row for row in result.evidence["metrics"] if row["metric"] == "mfu@1")
    assert mfu_row["reason"] == "too few samples: baseline 10, candidate 10, need 30."


def test_a_metric_without_an_interval_is_inconclusive_and_named(ref):
    improving(ref)
    peak = definition(key="peak-memory", unit="GiB", direction="lower_is_better", statistic="max")
    feed(ref, peak, 80, 60)
    result = every_result(services.gate_evaluate(gate=cutover_gate()))
    assert result.outcome == "inconclusive"
    row = next(row for row in result.evidence["metrics"] if row["metric"] == "peak-memory@1")
    assert row["outcome"] == "inconclusive" and "no interval" in row["reason"]


def test_a_metric_on_one_side_only_is_named_but_not_compared(ref):
    improving(ref)
    mfu = definition(key="mfu", unit="percent", direction="higher_is_better", statistic="mean")
    observe(mfu, ref["legacy"], ref["large"], spread(38))
    result = every_result(services.gate_evaluate(gate=cutover_gate()))
    assert result.outcome == "pass"
    assert "mfu@1" not in by_metric(result)
    assert result.evidence["not_compared"] == [{"metric": "mfu@1", "missing": "candidate"}]


def test_only_active_versions_count(ref):
    improving(ref)
    draft = definition(
        key="mfu", status="draft", unit="percent", direction="higher_is_better", statistic="mean"
    )
    feed(ref, draft, 46, 38)  # worse, but a draft is a shadow period, not a tracked metric
    result = every_result(services.gate_evaluate(gate=cutover_gate()))
    assert result.outcome == "pass" and "mfu@1" not in by_metric(result)


def test_an_excluded_metric_is_left_out_with_its_reason(ref, lead):
    feed(ref, "throughput", 100, 120)
    feed(ref, "scaling", 0.84, 0.93)
    feed(ref, "step", 800, 900)
    reason = "Step time moves to the v2 boundary next month; judged by its own milestone."
    services.criterion_edit(
        actor=lead, criterion=every_criterion(), excluded_metrics=[{"metric": "step-time", "reason": reason}]
    )
    result = every_result(services.gate_evaluate(gate=cutover_gate()))
    assert result.outcome == "pass"
    assert "step-time@1" not in by_metric(result)
    assert result.evidence["excluded"] == [{"metric": "step-time", "reason": reason}]


def test_the_workload_limits_which_metrics_count(ref, lead):
    feed(ref, "throughput", 100, 120)
    feed(ref, "step", 800, 900, workload="medium")  # worse, but on another workload
    services.criterion_edit(actor=lead, criterion=every_criterion(), workload=ref["large"])
    result = every_result(services.gate_evaluate(gate=cutover_gate()))
    assert by_metric(result) == {"training-throughput@1": "pass"}
    assert result.outcome == "pass"


def test_no_metric_with_data_on_both_sides_is_inconclusive(ref):
    result = every_result(services.gate_evaluate(gate=cutover_gate()))
    assert result.outcome == "inconclusive"
    assert result.reason == "no active metric has data on both systems to compare."


def test_new_data_on_any_metric_is_a_new_evaluation(ref):
    """The fingerprint covers every metric the criterion reads, not only the gate's pinned ones."""
    improving(ref)
    first = services.gate_evaluate(gate=cutover_gate())
    mfu = definition(key="mfu", unit="percent", direction="higher_is_better", statistic="mean")
    feed(ref, mfu, 46, 38)
    # What ingest's fold does after a batch (the fingerprint reads the rollups, not every metric's
    # rows); the fold's rollups_refreshed queues this evaluation (program.receivers).
    rollups_rebuild(definition_ids=[mfu.pk])
    second = services.gate_evaluate(gate=cutover_gate())
    assert second.pk != first.pk
    assert every_result(second).outcome == "fail"


def test_an_ingest_batch_of_any_metric_queues_the_gate_with_an_every_metric_criterion(ref):
    """No criterion pins mfu, but "every metric" reads it: a batch of it re-evaluates the cutover gate."""
    mfu = definition(key="mfu", unit="percent", direction="higher_is_better", statistic="mean")
    OutboxMessage.objects.all().delete()
    with transaction.atomic():
        assert gates_evaluate_for_definitions([mfu.pk]) == 1
    assert (
        OutboxMessage.objects.get(task="program.tasks.gate_evaluate").key
        == f"gate-evaluate:{cutover_gate().pk}"
    )
    OutboxMessage.objects.all().delete()
    draft = definition(key="mfu", version=2, status="draft", unit="percent", direction="higher_is_better")
    with transaction.atomic():  # a draft's rows are a shadow period: not one of "every metric"
        assert gates_evaluate_for_definitions([draft.pk]) == 0


def test_the_evaluation_reads_a_bounded_number_of_queries_whatever_the_number_of_metrics(ref):
    improving(ref)
    criterion = every_criterion()
    program = ref["program"]

    def queries() -> int:
        with CaptureQueriesContext(connection) as ctx:
            criterion_judge(criterion, baseline=program.baseline_system, candidate=program.candidate_system)
        return len(ctx.captured_queries)

    three = queries()
    for index in range(4):
        extra = definition(key=f"extra-{index}", unit="s", direction="lower_is_better", statistic="p95")
        feed(ref, extra, 10, 9)
    assert queries() == three <= 4


# --- the service's rules -----------------------------------------------------------------------


def add(lead, **fields):
    values = {"name": "Every metric", "kind": "every_metric", "threshold": 1.0}
    return services.criterion_add(actor=lead, gate=cutover_gate(), **{**values, **fields})


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"statistic": "p95"}, "statistic"),
        ({"operator": "lte"}, "operator"),
        ({"threshold": 0}, "threshold"),
        ({"threshold": None}, "threshold"),
        ({"group_by": "region"}, "group_by"),
        ({"excluded_metrics": [{"metric": "step-time", "reason": " "}]}, "excluded_metrics"),
        ({"excluded_metrics": [{"metric": "no-such", "reason": "x"}]}, "excluded_metrics"),
        ({"excluded_metrics": [{"metric": "step-time"}]}, "excluded_metrics"),
        (
            {
                "excluded_metrics": [
                    {"metric": "step-time", "reason": "a"},
                    {"metric": "step-time", "reason": "b"},
                ]
            },
            "excluded_metrics",
        ),
    ],
)
def test_bad_every_metric_criteria_are_400_naming_the_field(ref, lead, fields, field):
    with pytest.raises(ApplicationError) as caught:
        add(lead, **fields)
    assert caught.value.status == 400 and caught.value.errors[0]["field"] == field


def test_every_metric_takes_no_metric(ref, lead):
    with pytest.raises(ApplicationError) as caught:
        add(lead, metric=ref["throughput"])
    assert caught.value.errors[0]["field"] == "metric" and "takes no metric" in caught.value.message


def test_only_an_every_metric_criterion_excludes_metrics(ref, lead):
    with pytest.raises(ApplicationError) as caught:
        services.criterion_add(
            actor=lead,
            gate=cutover_gate(),
            name="Throughput",
            kind="relative",
            metric=ref["throughput"],
            threshold=1.0,
            excluded_metrics=[{"metric": "step-time", "reason": "x"}],
        )
    assert caught.value.errors[0]["field"] == "excluded_metrics"


def test_a_relative_criterion_edited_into_every_metric_drops_its_metric_and_slot(ref, lead):
    criterion = cutover_gate().criteria.get(slot="throughput")
    edited = services.criterion_edit(actor=lead, criterion=criterion, kind="every_metric")
    edited.refresh_from_db()
    assert (edited.metric, edited.slot, edited.require_significant) == (None, "", True)
    back = services.criterion_edit(actor=lead, criterion=edited, kind="relative", metric=ref["throughput"])
    assert back.excluded_metrics == [] and back.metric == ref["throughput"]


def test_the_api_adds_and_shows_exclusions(ref, lead, as_user):
    body = {
        "name": "Every metric (5 % margin)",
        "kind": "every_metric",
        "threshold": 0.95,
        "excluded_metrics": [{"metric": "scaling-efficiency", "reason": "judged absolutely below"}],
    }
    response = as_user(lead).post(f"/api/v1/gates/{cutover_gate().pk}/criteria/", body, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["excluded_metrics"] == body["excluded_metrics"]
    assert response.json()["metric"] is None and response.json()["require_significant"] is True
    bad = as_user(lead).post(
        f"/api/v1/gates/{cutover_gate().pk}/criteria/",
        {**body, "excluded_metrics": [{"metric": "scaling-efficiency", "reason": ""}]},
        format="json",
    )
    assert bad.status_code == 400
    assert bad.json()["errors"][0]["field"].startswith("excluded_metrics")
    criterion_id = response.json()["id"]
    renamed = as_user(lead).patch(f"/api/v1/criteria/{criterion_id}/", {"name": "Renamed"}, format="json")
    assert renamed.status_code == 200 and renamed.json()["excluded_metrics"] == body["excluded_metrics"]
    cleared = as_user(lead).patch(
        f"/api/v1/criteria/{criterion_id}/", {"excluded_metrics": []}, format="json"
    )
    assert cleared.status_code == 200 and cleared.json()["excluded_metrics"] == []
    with_metric = as_user(lead).patch(
        f"/api/v1/criteria/{criterion_id}/", {"metric": "training-throughput"}, format="json"
    )
    assert with_metric.status_code == 400 and with_metric.json()["errors"][0]["field"] == "metric"


def test_the_template_lists_the_every_metric_criterion_in_the_cutover_exit_gate(ref, as_user, lead):
    template = as_user(lead).get("/api/v1/templates/rebuild-14m/").json()
    cutover = next(p for p in template["phases"] if p["kind"] == "cutover")
    exit_gate = next(g for g in cutover["gates"] if g["kind"] == "exit")
    every = [c for c in exit_gate["criteria"] if c["kind"] == "every_metric"]
    assert every == [
        {
            **every[0],
            "name": EVERY,
            "metric_slot": None,
            "operator": "gte",
            "threshold": 1.0,
            "require_significant": True,
        }
    ]


# --- the method: Holm for regressions, intersection–union for the pass, by simulation --------------


def holm_reference(p_values: list[float], alpha: float) -> set[int]:
    """Holm's step-down as written in the textbooks: sorted p-values against α/(m − i)."""
    order = np.argsort(p_values, kind="stable")
    rejected: set[int] = set()
    for step, index in enumerate(order):
        if p_values[index] > alpha / (len(p_values) - step):
            break
        rejected.add(int(index))
    return rejected


def test_holm_step_down_matches_the_sorted_p_value_form():
    rng = np.random.default_rng(26)
    for _ in range(500):
        m = int(rng.integers(1, 13))
        p = list(rng.beta(0.3, 4.0, size=m))  # many small p-values, some ties in rank
        worse_at = [lambda level, pi=pi: pi <= level for pi in p]
        assert set(holm_regressions(worse_at, alpha=0.05)) == holm_reference(p, 0.05)


def _samples(rng, ratio: float, n: int = 60) -> tuple[np.ndarray, np.ndarray]:
    """Baseline and candidate of a higher-is-better metric whose true relative performance is `ratio`."""
    return np.sort(rng.normal(100, 10, n)), np.sort(rng.normal(100 * ratio, 10, n))


def _ci(base, cand, alpha: float):
    return infer(statistic="mean", direction="higher_is_better", baseline=base, candidate=cand, alpha=alpha)


def test_holm_keeps_false_regressions_at_alpha_where_uncorrected_tests_do_not():
    """Eight metrics all exactly at the threshold: the family-wise rate of calling one worse stays at
    or below α/2 (one-sided, the scale of one criterion's fail) with Holm, and is far above it
    uncorrected."""
    rng = np.random.default_rng(7)
    runs, metrics, alpha = 600, 8, 0.05
    holm_hits = naive_hits = 0
    for _ in range(runs):
        pairs = [_samples(rng, 1.0) for _ in range(metrics)]

        def worse(pair, level: float) -> bool:
            ci = _ci(*pair, level).relative_performance_ci
            return ci is not None and ci[1] < 1.0

        naive_hits += any(worse(pair, alpha) for pair in pairs)
        holm_hits += bool(holm_regressions([lambda lv, pr=pr: worse(pr, lv) for pr in pairs], alpha=alpha))
    # Binomial slack: 3 standard errors above α/2 = 0.025 over 600 runs.
    assert holm_hits / runs <= 0.025 + 3 * np.sqrt(0.025 * 0.975 / runs)
    assert naive_hits / runs > 0.1


def test_the_outcome_of_the_metrics_outcomes():
    assert combined_outcome(["pass", "pass"]) == "pass"
    assert combined_outcome(["pass", "inconclusive", "pass"]) == "inconclusive"
    assert combined_outcome(["inconclusive", "fail", "pass"]) == "fail"
    assert combined_outcome([]) == "inconclusive"


def test_intersection_union_pass_rate_is_at_most_one_metrics_without_correction():
    """One metric exactly at the threshold, the others far better: the criterion (all must pass at α
    each) passes no more often than that one metric's own test, ≤ α/2."""
    rng = np.random.default_rng(11)
    runs, passes = 600, 0
    for _ in range(runs):
        pairs = [_samples(rng, 1.0), *(_samples(rng, 1.3) for _ in range(5))]
        outcomes = []
        for pair in pairs:
            inference = _ci(*pair, 0.05)
            outcome, _ = judge(
                estimate=inference.relative_performance,
                ci=inference.relative_performance_ci,
                operator="gte",
                threshold=1.0,
                require_significant=True,
            )
            outcomes.append(outcome)
        passes += combined_outcome(outcomes) == "pass"
    assert passes / runs <= 0.025 + 3 * np.sqrt(0.025 * 0.975 / runs)


# --- the gate page ---------------------------------------------------------------------------------


def gate_page(client, lead) -> str:
    client.force_login(lead)
    response = client.get(f"/programs/gates/{cutover_gate().pk}/")
    assert response.status_code == 200
    return response.content.decode()


def test_the_gate_page_lists_each_metric_with_its_verdict_and_each_exclusion_with_its_reason(
    client, ref, lead
):
    feed(ref, "throughput", 100, 120)
    feed(ref, "step", 800, 900)
    mfu = definition(key="mfu", unit="percent", direction="higher_is_better", statistic="mean")
    feed(ref, mfu, 38, 46, n=10)
    reason = "Scaling is judged absolutely, on the large job alone."
    services.criterion_edit(
        actor=lead,
        criterion=every_criterion(),
        excluded_metrics=[{"metric": "scaling-efficiency", "reason": reason}],
    )
    services.gate_evaluate(gate=cutover_gate())
    html = gate_page(client, lead)
    table = html[html.index('aria-label="Each metric"') :]
    table = table[: table.index("</table>")]
    rows = table.split("<tr>")[2:]
    assert [row.split('class="mono">')[1].split("<")[0] for row in rows] == [
        "step-time@1",  # worse first, then inconclusive, then passing
        "mfu@1",
        "training-throughput@1",
    ]
    assert '<span class="badge fail">fail</span>' in rows[0]
    assert "too few samples: baseline 10, candidate 10, need 30." in rows[1]
    assert f'<span class="mono">scaling-efficiency</span> — {reason}' in html
    assert f"excluded metrics none → scaling-efficiency ({reason})" in html  # the history, in words
    assert "Holm" in html


def test_the_gate_page_runs_the_same_queries_whatever_the_number_of_metrics(client, ref, lead):
    improving(ref)
    services.gate_evaluate(gate=cutover_gate())
    client.force_login(lead)
    path = f"/programs/gates/{cutover_gate().pk}/"

    def queries() -> int:
        client.get(path)
        with CaptureQueriesContext(connection) as ctx:
            client.get(path)
        return len(ctx.captured_queries)

    few = queries()
    for index in range(5):
        extra = definition(key=f"extra-{index}", unit="s", direction="lower_is_better", statistic="p95")
        feed(ref, extra, 10, 9)
    services.gate_evaluate(gate=cutover_gate())
    assert "extra-4@1" in gate_page(client, lead)
    assert queries() == few


def test_a_lead_adds_an_every_metric_criterion_with_exclusions_from_the_page(client, ref, lead):
    client.force_login(lead)
    response = client.post(
        f"/programs/gates/{cutover_gate().pk}/criteria/",
        {
            "new-name": "No metric more than 5 % worse",
            "new-kind": "every_metric",
            "new-operator": "gte",
            "new-threshold": "0.95",
            "new-min_samples": "30",
            "new-excluded_metrics": "step-time: moves to the v2 boundary\n\nscaling-efficiency: judged absolutely",
            "new-required": "on",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    criterion = Criterion.objects.get(name="No metric more than 5 % worse")
    assert criterion.excluded_metrics == [
        {"metric": "step-time", "reason": "moves to the v2 boundary"},
        {"metric": "scaling-efficiency", "reason": "judged absolutely"},
    ]
    refused = client.post(
        f"/programs/gates/{cutover_gate().pk}/criteria/",
        {
            "new-name": "Every metric",
            "new-kind": "every_metric",
            "new-operator": "gte",
            "new-threshold": "1",
            "new-min_samples": "30",
            "new-excluded_metrics": "no-such-metric: because",
        },
    )
    assert refused.status_code == 400
    assert "Unknown metric &#x27;no-such-metric&#x27; in excluded metrics." in refused.content.decode()


def _cutover_every(data) -> dict:
    return next(c for c in data["phases"][2]["exit_gate"]["criteria"] if c["kind"] == "every_metric")


@pytest.mark.parametrize(
    ("change", "where"),
    [
        (lambda c: c.update(metric_slot="throughput"), "criteria[0].metric_slot: an every_metric criterion"),
        (lambda c: c.update(statistic="p95"), "criteria[0].statistic: an every_metric criterion"),
        (lambda c: c.update(threshold=0), "criteria[0].threshold: an every_metric criterion"),
        (lambda c: c.update(operator="lte"), "criteria[0].operator: an every_metric criterion"),
        (lambda c: c.update(workload_slot="tiny"), "criteria[0].workload_slot: 'tiny'"),
    ],
)
def test_a_broken_every_metric_criterion_in_a_template_is_an_error_naming_where(change, where):
    data = copy.deepcopy(blueprint_load("rebuild-14m"))
    change(_cutover_every(data))
    with pytest.raises(BlueprintError) as error:
        blueprint_check(data, key="rebuild-14m")
    assert where in str(error.value)


def test_the_every_metric_fingerprint_reads_the_rollups_not_the_rows(ref):
    """Two queries whatever the rows: the definitions and their rollups (a count over every metric's
    rows was a whole-table scan on each evaluation)."""
    improving(ref)
    criterion = every_criterion()
    program = cutover_gate().phase.program
    with CaptureQueriesContext(connection) as queries:
        every_metric_inputs(
            criterion,
            baseline_id=program.baseline_system_id,
            candidate_id=program.candidate_system_id,
            since=None,
        )
    assert len(queries.captured_queries) == 2
    assert not any(re.search(r"metrics_observation\b", q["sql"]) for q in queries.captured_queries)
