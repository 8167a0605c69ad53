"""A gate's verdict in one sentence and one status, the first thing its page says (issue 29):
"2 of 2 required criteria pass; 1 advisory fails → ready to pass".

One function decides the words for every state a gate can be in, from plain facts (no queries), so the
page, and anything else that wants to say where a gate stands, says it the same way."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime

PASS, FAIL = "pass", "fail"


@dataclass(frozen=True)
class Counted:
    """One criterion as the verdict counts it: required or advisory, and its outcome (None: not
    evaluated yet)."""

    required: bool
    outcome: str | None


@dataclass(frozen=True)
class DecisionFacts:
    verdict: str  # pass | fail | waive
    by: str  # a person's name
    at: datetime


@dataclass(frozen=True)
class Verdict:
    state: str  # not_started | no_criteria | not_evaluated | waiting | failing | ready | passed | failed | waived | closed
    label: str  # the status in words, as the badge shows it
    sentence: str

    @property
    def badge(self) -> str:
        """The badge's colour class (static/css/app.css and gate.css)."""
        return {
            "ready": "ready",
            "passed": "passed",
            "failed": "failed",
            "failing": "failed",
            "waived": "waived",
            "closed": "closed",
        }.get(self.state, "open")


def _criteria(n: int) -> str:
    return f"{n} criterion" if n == 1 else f"{n} criteria"


def _verb(n: int, present: str, plural: str, past: str, frozen: bool) -> str:
    if frozen:
        return "were" if past == "was" and n != 1 else past
    return present if n == 1 else plural


def counts_text(counted: Sequence[Counted], *, frozen: bool = False) -> str:
    """ "2 of 3 required criteria pass; 1 fails; 1 advisory fails" (past tense for frozen evidence)."""
    required = [c for c in counted if c.required]
    advisory = [c for c in counted if not c.required]
    parts = []
    if required:
        passing = sum(c.outcome == PASS for c in required)
        failing = sum(c.outcome == FAIL for c in required)
        unevaluated = sum(c.outcome is None for c in required)  # added since the last evaluation
        waiting = len(required) - passing - failing - unevaluated
        noun = "required criterion" if len(required) == 1 else "required criteria"
        parts.append(
            f"{passing} of {len(required)} {noun} {_verb(passing, 'passes', 'pass', 'passed', frozen)}"
        )
        if failing:
            parts.append(f"{failing} {_verb(failing, 'fails', 'fail', 'failed', frozen)}")
        if waiting:
            parts.append(f"{waiting} {_verb(waiting, 'is', 'are', 'was', frozen)} inconclusive")
        if unevaluated:
            parts.append(f"{unevaluated} not evaluated yet")
    else:
        parts.append("No required criteria")
    adv_failing = sum(c.outcome == FAIL for c in advisory)
    adv_waiting = sum(c.outcome != PASS and c.outcome != FAIL for c in advisory)
    adv_passing = len(advisory) - adv_failing - adv_waiting
    if adv_failing:
        parts.append(f"{adv_failing} advisory {_verb(adv_failing, 'fails', 'fail', 'failed', frozen)}")
    if adv_waiting:
        parts.append(f"{adv_waiting} advisory {_verb(adv_waiting, 'is', 'are', 'was', frozen)} inconclusive")
    if adv_passing and not (adv_failing or adv_waiting):
        parts.append(f"{adv_passing} advisory {_verb(adv_passing, 'passes', 'pass', 'passed', frozen)}")
    return "; ".join(parts)


DECIDED_LABELS = {"pass": ("passed", "Passed"), "fail": ("failed", "Failed"), "waive": ("waived", "Waived")}


def _day(day: date | datetime) -> str:
    return f"{day:%-d %b %Y}"


def gate_verdict(
    *,
    status: str,
    counted: Sequence[Counted],
    evaluated: bool,
    starts_on: date | None = None,
    decision: DecisionFacts | None = None,
    phase_name: str = "",
    phase_ended: date | None = None,
) -> Verdict:
    """Where the gate stands, in the order a lead asks it: is it decided (or closed), can it be
    decided yet, and if not, what stops it.

    `counted` is the latest evaluation's criteria, or a decision's frozen evidence; `starts_on` is
    the start date of a program that has not started; `phase_ended` the day a completed phase
    ended (a closed gate's)."""
    if status in ("passed", "failed", "waived") and decision is not None:
        state, word = DECIDED_LABELS[decision.verdict]
        evidence = counts_text(counted, frozen=True) if counted else "no criteria"
        return Verdict(
            state,
            state,
            f"{word} by {decision.by} on {_day(decision.at)}; the frozen evidence: {evidence}.",
        )
    if status == "closed":
        when = f" on {_day(phase_ended)}" if phase_ended else ""
        last = f" Its last evaluation: {counts_text(counted)}." if evaluated and counted else ""
        return Verdict(
            "closed",
            "closed (not decided)",
            f"Not decided — {phase_name or 'its phase'} completed{when}, which closed it.{last}",
        )
    if status in ("passed", "failed", "waived"):  # a decision row is missing: say the status plainly
        return Verdict(status, status, f"Decided: {status}.")
    if not counted:
        return Verdict("no_criteria", "no criteria", "No criteria yet → add one before it can be decided.")
    counts = (
        counts_text(counted) if evaluated else f"{_criteria(len(counted)).capitalize()}, not evaluated yet"
    )
    if starts_on is not None:
        # Never ready before the start (program.services.gates.gate_evaluate), whatever the numbers say.
        return Verdict(
            "not_started",
            "not started",
            f"{counts} → can be decided once the program starts on {_day(starts_on)}.",
        )
    if not evaluated:
        return Verdict("not_evaluated", "not evaluated", f"{counts} → waiting for data.")
    required = [c for c in counted if c.required]
    if any(c.outcome == FAIL for c in required):
        return Verdict("failing", "failing", f"{counts} → not ready to pass.")
    if any(c.outcome != PASS for c in required):
        return Verdict("waiting", "waiting for data", f"{counts} → waiting for data.")
    if not required:
        # Nothing blocks, but nothing was asked either: a lead may still pass it.
        return Verdict("ready", "ready to pass", f"{counts} → ready to pass (nothing required).")
    return Verdict("ready", "ready to pass", f"{counts} → ready to pass.")
