"""A calibration in words: enough for a lead to say "this threshold is too loose / too tight"."""

from __future__ import annotations

from itertools import pairwise

from program.calibration import Calibration, CalibrationPoint
from program.models import Criterion, CriterionResult

Outcome = CriterionResult.Outcome
VERB: dict[str, str] = {
    Outcome.PASS: "passed",
    Outcome.FAIL: "failed",
    Outcome.INCONCLUSIVE: "been inconclusive",
}


def _num(value: float) -> str:
    return f"{value:.3g}"


def _day(point: CalibrationPoint) -> str:
    return f"{point.at:%-d %b %Y}"


def straddles(point: CalibrationPoint, threshold: float | None) -> bool:
    """The interval holds the threshold: the data of then could not tell which side it is on."""
    ci = point.value_ci
    return threshold is not None and ci is not None and ci[0] <= threshold <= ci[1]


def enough_samples(point: CalibrationPoint, criterion: Criterion) -> bool:
    """Judged on its numbers, not "too few samples" (as program.evaluation decides)."""
    needs_both = criterion.kind != Criterion.Kind.ABSOLUTE
    enough = point.n_candidate >= criterion.min_samples
    return enough and (point.n_baseline >= criterion.min_samples or not needs_both)


def _margin(point: CalibrationPoint, calibration: Calibration) -> float | None:
    """How far the estimate is on the passing side of the threshold (negative: the failing side)."""
    if point.value is None or calibration.threshold is None:
        return None
    above = point.value - calibration.threshold
    return above if calibration.operator in (Criterion.Operator.GTE, Criterion.Operator.GT) else -above


def _advice(calibration: Calibration, judged: list[CalibrationPoint], flips: int) -> str:
    threshold = calibration.threshold
    outcomes = {p.outcome for p in judged}
    margins = [m for m in (_margin(p, calibration) for p in judged) if m is not None]
    widths = sorted((p.value_ci[1] - p.value_ci[0]) / 2 for p in judged if p.value_ci)
    noise = widths[len(widths) // 2] if widths else None  # the typical interval half-width
    # Margins exist only with a threshold; the first two readings compare with it.
    if threshold is not None and outcomes == {Outcome.PASS} and margins and len(judged) >= 3:
        closest = min(margins)
        if noise is not None and closest < noise:
            return (
                f"It passed at every point with data, but by as little as {_num(closest)}, less than "
                f"the interval's typical half-width {_num(noise)}: the threshold is near the noise, "
                "not loose."
            )
        return (
            f"It passed at every point with data, never closer than {_num(closest)} to the threshold "
            f"{_num(threshold)}: if the early numbers would not have convinced you, the threshold is loose."
        )
    if threshold is not None and Outcome.PASS not in outcomes and margins:
        best = max(margins)
        where = "short of" if best < 0 else "past"
        return (
            f"It never passed; the best estimate was {_num(abs(best))} {where} the threshold "
            f"{_num(threshold)}: check the threshold is reachable, or that more data would settle it."
        )
    if flips >= 3:
        return (
            f"It changed its outcome {flips} times: the threshold sits inside the noise; a longer "
            "window or a significance requirement would steady it."
        )
    return ""


def calibration_reading(calibration: Calibration) -> str:
    """E.g. "Would have passed since 12 Mar 2026 (9 of 23 points); the interval held the threshold at
    3 points; the outcome changed 2 times." plus a hint when the threshold looks loose or tight."""
    if calibration.unavailable:
        return calibration.unavailable
    points = calibration.points
    judged = [p for p in points if enough_samples(p, calibration.criterion)]
    if not judged:
        return "Too few samples at every point: nothing to replay yet."
    latest = points[-1]
    run_start = latest
    for point in reversed(points):
        if point.outcome != latest.outcome:
            break
        run_start = point
    run = sum(1 for p in points if p.at >= run_start.at)
    flips = sum(1 for a, b in pairwise(judged) if a.outcome != b.outcome)
    straddled = sum(1 for p in judged if straddles(p, calibration.threshold))
    short = sum(1 for p in points if not enough_samples(p, calibration.criterion))
    counted = f"{run} of {len(points)} points" + (f"; {short} had too few samples" if short else "")
    parts = [
        f"Would have {VERB[latest.outcome]} since {_day(run_start)} ({counted})",
        f"the outcome changed {flips} time{'s' if flips != 1 else ''}" if flips else "it never changed",
    ]
    if any(p.value_ci for p in judged):
        held = f"the interval held the threshold at {straddled} of {len(judged)} points with data"
        if straddled and not calibration.criterion.require_significant:
            held += " (the point estimate decided those: the criterion does not require significance)"
        parts.append(held)
    sentence = "; ".join(parts) + "."
    advice = _advice(calibration, judged, flips)
    return f"{sentence} {advice}" if advice else sentence
