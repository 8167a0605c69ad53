"""The gate's verdict sentence (program.verdict.gate_verdict), one test per state a gate can be in."""

from __future__ import annotations

from datetime import UTC, date, datetime

from program.verdict import Counted, DecisionFacts, counts_text, gate_verdict

REQ_PASS, REQ_FAIL, REQ_WAIT = Counted(True, "pass"), Counted(True, "fail"), Counted(True, "inconclusive")
ADV_PASS, ADV_FAIL = Counted(False, "pass"), Counted(False, "fail")
AT = datetime(2026, 12, 3, 14, 5, tzinfo=UTC)


def test_ready_counts_required_and_names_the_advisory_that_fails():
    verdict = gate_verdict(status="ready", counted=[REQ_PASS, REQ_PASS, ADV_FAIL], evaluated=True)
    assert verdict.state == "ready" and verdict.label == "ready to pass" and verdict.badge == "ready"
    assert verdict.sentence == "2 of 2 required criteria pass; 1 advisory fails → ready to pass."


def test_a_failing_required_criterion_makes_it_failing_whatever_else_waits():
    verdict = gate_verdict(status="open", counted=[REQ_PASS, REQ_FAIL, REQ_WAIT, ADV_PASS], evaluated=True)
    assert (verdict.state, verdict.label, verdict.badge) == ("failing", "failing", "failed")
    assert verdict.sentence == (
        "1 of 3 required criteria passes; 1 fails; 1 is inconclusive; 1 advisory passes → not ready to pass."
    )


def test_inconclusive_required_criteria_wait_for_data():
    verdict = gate_verdict(status="open", counted=[REQ_PASS, REQ_WAIT, REQ_WAIT], evaluated=True)
    assert (verdict.state, verdict.label) == ("waiting", "waiting for data")
    assert verdict.sentence == "1 of 3 required criteria passes; 2 are inconclusive → waiting for data."


def test_a_criterion_added_since_the_last_evaluation_is_not_counted_as_inconclusive():
    verdict = gate_verdict(status="open", counted=[REQ_PASS, Counted(True, None)], evaluated=True)
    assert verdict.state == "waiting"
    assert verdict.sentence == "1 of 2 required criteria passes; 1 not evaluated yet → waiting for data."


def test_never_evaluated_waits_for_data():
    verdict = gate_verdict(status="open", counted=[REQ_PASS, REQ_WAIT], evaluated=False)
    assert verdict.state == "not_evaluated"
    assert verdict.sentence == "2 criteria, not evaluated yet → waiting for data."


def test_a_gate_without_criteria_says_what_to_do():
    verdict = gate_verdict(status="open", counted=[], evaluated=True)
    assert verdict.state == "no_criteria"
    assert verdict.sentence == "No criteria yet → add one before it can be decided."


def test_a_program_not_started_holds_even_passing_criteria_back():
    verdict = gate_verdict(status="open", counted=[REQ_PASS], evaluated=True, starts_on=date(2026, 12, 24))
    assert (verdict.state, verdict.label) == ("not_started", "not started")
    assert verdict.sentence == (
        "1 of 1 required criterion passes → can be decided once the program starts on 24 Dec 2026."
    )


def test_decided_gates_say_who_when_and_the_frozen_evidence_in_the_past_tense():
    passed = gate_verdict(
        status="passed",
        counted=[REQ_PASS, REQ_PASS, ADV_FAIL],
        evaluated=True,
        decision=DecisionFacts("pass", "Lena Lead", AT),
    )
    assert (passed.state, passed.label, passed.badge) == ("passed", "passed", "passed")
    assert passed.sentence == (
        "Passed by Lena Lead on 3 Dec 2026; the frozen evidence: 2 of 2 required criteria passed; "
        "1 advisory failed."
    )
    failed = gate_verdict(
        status="failed", counted=[REQ_FAIL], evaluated=True, decision=DecisionFacts("fail", "Lena", AT)
    )
    assert failed.state == "failed"
    assert failed.sentence == (
        "Failed by Lena on 3 Dec 2026; the frozen evidence: 0 of 1 required criterion passed; 1 failed."
    )
    waived = gate_verdict(
        status="waived", counted=[REQ_FAIL], evaluated=True, decision=DecisionFacts("waive", "Lena", AT)
    )
    assert (waived.state, waived.badge) == ("waived", "waived")
    assert waived.sentence.startswith("Waived by Lena on 3 Dec 2026; the frozen evidence:")


def test_a_closed_gate_says_it_was_not_decided_and_when_its_phase_completed():
    verdict = gate_verdict(
        status="closed",
        counted=[REQ_PASS, REQ_WAIT],
        evaluated=True,
        phase_name="Canary",
        phase_ended=date(2026, 9, 12),
    )
    assert (verdict.state, verdict.label, verdict.badge) == ("closed", "closed (not decided)", "closed")
    assert verdict.sentence == (
        "Not decided — Canary completed on 12 Sep 2026, which closed it. "
        "Its last evaluation: 1 of 2 required criteria passes; 1 is inconclusive."
    )


def test_only_advisory_criteria_block_nothing():
    verdict = gate_verdict(status="ready", counted=[ADV_FAIL], evaluated=True)
    assert verdict.state == "ready"
    assert verdict.sentence == "No required criteria; 1 advisory fails → ready to pass (nothing required)."


def test_counts_agree_in_number():
    assert counts_text([REQ_PASS, REQ_PASS, REQ_FAIL, REQ_FAIL, ADV_FAIL, ADV_FAIL]) == (
        "2 of 4 required criteria pass; 2 fail; 2 advisory fail"
    )


def test_thresholds_are_said_as_effects_not_ratios():
    from metrics.public import method_meaning
    from program.criterion_words import requirement_text
    from program.models import Criterion

    def needs(kind: str, operator: str, threshold: float) -> str:
        return requirement_text(Criterion(kind=kind, operator=operator, threshold=threshold))

    assert needs("relative", "gte", 0.8) == "needs: at most 20 % worse"
    assert needs("relative", "gte", 1.3) == "needs: at least 30 % better"
    assert needs("relative", "gte", 1.0) == "needs: no worse than the baseline"
    assert needs("improvement", "gte", 15) == "needs: at least 15 % better"
    assert needs("every_metric", "gte", 1.0) == "needs: every metric no worse than the baseline"
    assert needs("absolute", "lte", 700).startswith("needs: candidate")
    assert method_meaning("welch-fieller (rollups)").startswith("compares averages")
    assert method_meaning("unheard-of") == ""
