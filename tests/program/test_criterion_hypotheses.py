"""Criteria as hypotheses (issue 10): with require_significant the (1 − α) interval decides.

Relative "≥ t" passes when the interval's lower bound is ≥ t, fails when its upper bound is < t and
is inconclusive in between; improvement and absolute criteria work the same on their own interval.
"""

from __future__ import annotations

import math

import pytest

from metrics.selectors import comparison_compute
from program import services
from program.models import CriterionResult, Gate
from tests.program.factories import make_program, metrics_for_template, observe, spread


@pytest.fixture
def ref(db, lead):
    ref = metrics_for_template()
    ref["program"] = make_program(lead)
    observe(ref["throughput"], ref["legacy"], ref["medium"], spread(100, 200))
    observe(ref["throughput"], ref["rebuilt"], ref["medium"], spread(95, 200))
    return ref


def gate() -> Gate:
    return Gate.objects.get(phase__kind="canary", kind="exit")


def comparison(ref, statistic="p50"):
    return comparison_compute(
        definition=ref["throughput"],
        baseline=ref["legacy"],
        candidate=ref["rebuilt"],
        workload=ref["medium"],
        statistic=statistic,
    )


def evaluate(ref, lead, thresholds: dict[str, float], **fields) -> dict[str, CriterionResult]:
    for name, threshold in thresholds.items():
        services.criterion_add(
            actor=lead,
            gate=gate(),
            name=name,
            metric=ref["throughput"],
            workload=ref["medium"],
            threshold=threshold,
            **{"kind": "relative", "statistic": "p50", "require_significant": True, **fields},
        )
    evaluation = services.gate_evaluate(gate=gate())
    results = evaluation.results.select_related("criterion").filter(criterion__name__in=thresholds)
    return {r.criterion.name: r for r in results}


def boundaries(low: float, high: float) -> dict[str, float]:
    return {
        "at the lower bound": low,
        "just above the lower bound": math.nextafter(low, math.inf),
        "at the upper bound": high,
        "just above the upper bound": math.nextafter(high, math.inf),
    }


EXPECTED = {
    "at the lower bound": "pass",
    "just above the lower bound": "inconclusive",
    "at the upper bound": "inconclusive",
    "just above the upper bound": "fail",
}


def test_relative_criterion_is_judged_by_its_interval_bounds(ref, lead):
    low, high = comparison(ref).relative_performance_ci
    assert low < 0.95 < high < 1  # a 5 % slower candidate, known only within the interval
    results = evaluate(ref, lead, boundaries(low, high))
    assert {name: r.outcome for name, r in results.items()} == EXPECTED
    assert "the whole interval satisfies ≥ " in results["at the lower bound"].reason
    assert "straddles" in results["at the upper bound"].reason


def test_improvement_criterion_uses_the_ratio_interval_as_percent(ref, lead):
    low, high = ((bound - 1) * 100 for bound in comparison(ref).relative_performance_ci)
    results = evaluate(ref, lead, boundaries(low, high), kind="improvement")
    assert {name: r.outcome for name, r in results.items()} == EXPECTED
    result = results["at the lower bound"]
    assert result.evidence["value_ci"] == pytest.approx([low, high])
    assert result.value == pytest.approx(comparison(ref).improvement_pct)


def test_absolute_criterion_uses_the_candidate_interval(ref, lead):
    low, high = comparison(ref).candidate.ci
    results = evaluate(ref, lead, boundaries(low, high), kind="absolute")
    assert {name: r.outcome for name, r in results.items()} == EXPECTED


def test_an_upper_bound_criterion_mirrors_the_rule(ref, lead):
    low, high = comparison(ref).candidate.ci
    thresholds = {
        "≤ upper": high,
        "≤ below upper": math.nextafter(high, -math.inf),
        "≤ below lower": low * 0.99,
    }
    results = evaluate(ref, lead, thresholds, kind="absolute", operator="lte")
    assert {name: r.outcome for name, r in results.items()} == {
        "≤ upper": "pass",
        "≤ below upper": "inconclusive",
        "≤ below lower": "fail",
    }


def test_without_significance_the_point_estimate_decides_and_the_interval_is_kept(ref, lead):
    point = comparison(ref).relative_performance
    results = evaluate(ref, lead, {"point": point}, require_significant=False)
    assert results["point"].outcome == "pass"  # inside the interval, but the estimate holds
    assert results["point"].evidence["relative_performance_ci"] is not None


@pytest.mark.parametrize("statistic", ["min", "max"])
def test_min_and_max_with_significance_are_inconclusive_and_say_why(ref, lead, statistic):
    results = evaluate(ref, lead, {"extreme": 0.5}, statistic=statistic)
    assert results["extreme"].outcome == "inconclusive"
    assert results["extreme"].reason == (
        f"relative performance: significance required but there is no interval: no inference for {statistic}."
    )


def test_evidence_keeps_interval_method_alpha_sides_and_window(ref, lead):
    expected = comparison(ref)
    evidence = evaluate(ref, lead, {"ratio": 0.5}, window_days=7)["ratio"].evidence
    assert evidence["method"] == "order-statistic" and evidence["alpha"] == 0.05
    assert evidence["relative_performance_ci"] == pytest.approx(list(expected.relative_performance_ci))
    assert evidence["baseline"]["n"] == 200 and evidence["candidate"]["n"] == 200
    assert evidence["candidate"]["ci"] == pytest.approx(list(expected.candidate.ci))
    assert evidence["window"]["since"] < evidence["window"]["until"]


def test_distribution_criterion_tests_its_threshold_with_mann_whitney(ref, lead):
    """The candidate is the baseline × 0.95: stochastically better than 80 % of it, worse than all
    of it, and indistinguishable from 95 % of it."""
    results = evaluate(ref, lead, {"≥ 0.8": 0.8, "≥ 1": 1.0, "≥ 0.95": 0.95}, statistic="distribution")
    assert {name: r.outcome for name, r in results.items()} == {
        "≥ 0.8": "pass",
        "≥ 1": "fail",
        "≥ 0.95": "inconclusive",
    }
    passed = results["≥ 0.8"]
    assert passed.reason.startswith(
        "median ratio 0.95 ≥ 0.8: Mann–Whitney against the baseline moved by 0.8×"
    )
    assert passed.evidence["method"] == "mann-whitney" and passed.evidence["null_ratio"] == 0.8
    assert passed.evidence["p_value"] < 0.025 < passed.evidence["p_value_worse"]
    assert passed.evidence["relative_performance_ci"] is None


def test_distribution_improvement_criterion_tests_one_plus_threshold(ref, lead):
    results = evaluate(
        ref, lead, {"≥ −20 %": -20.0, "≥ +1 %": 1.0}, kind="improvement", statistic="distribution"
    )
    assert results["≥ −20 %"].outcome == "pass" and results["≥ −20 %"].evidence["null_ratio"] == 0.8
    assert results["≥ −20 %"].reason.startswith("improvement ≥ -20 % is median ratio 0.95 ≥ 0.8")
    assert results["≥ +1 %"].outcome == "fail"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"kind": "absolute", "threshold": 90}, "statistic"),
        ({"kind": "relative", "threshold": 0}, "threshold"),
        ({"kind": "improvement", "threshold": -100}, "threshold"),
    ],
)
def test_distribution_criterion_needs_two_sides_and_a_positive_ratio(ref, lead, as_user, body, field):
    response = as_user(lead).post(
        f"/api/v1/gates/{gate().pk}/criteria/",
        {"name": "shift", "metric": ref["throughput"].ref, "statistic": "distribution", **body},
        format="json",
    )
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == field
    assert not gate().criteria.filter(name="shift").exists()


def test_gate_page_shows_a_distribution_criterion_with_its_test(ref, lead, client):
    evaluate(ref, lead, {"Shift ≥ 0.8": 0.8}, statistic="distribution")
    client.force_login(lead)
    page = client.get(f"/programs/gates/{gate().pk}/").content.decode()
    assert "Shift ≥ 0.8" in page
    assert "Mann–Whitney against the baseline moved by 0.8×" in page
    assert "Mann–Whitney U, one-sided" in page  # the method, in words
