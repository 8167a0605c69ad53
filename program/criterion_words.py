"""A criterion's threshold said the way effects are said (core.numbers.effect): "needs at most 20 %
worse" for relative performance ≥ 0.8, so the line a lead reads never shows a ratio; the ratio stays in
the folded statistics."""

from __future__ import annotations

from core.numbers import sig
from program.models import Criterion

AT_LEAST = {Criterion.Operator.GTE, Criterion.Operator.GT}


def _change_words(change_pct: float, at_least: bool) -> str:
    """A bound on the candidate's change, relative to the baseline, in better/worse words."""
    amount = sig(abs(change_pct), 2)
    if abs(change_pct) < 0.05:
        return "no worse than the baseline" if at_least else "no better than the baseline"
    if change_pct > 0:
        return f"at least {amount} % better" if at_least else f"at most {amount} % better"
    return f"at most {amount} % worse" if at_least else f"at least {amount} % worse"


def requirement_text(criterion: Criterion) -> str:
    """What the criterion asks of the candidate, e.g. "needs: at most 20 % worse"."""
    if criterion.kind == Criterion.Kind.MANUAL:
        return "needs: attested by a program lead, with a link to the proof"
    if criterion.threshold is None:
        return ""
    at_least = criterion.operator in AT_LEAST
    if criterion.kind == Criterion.Kind.ABSOLUTE:
        unit = f" {criterion.metric.unit}" if criterion.metric is not None else ""
        statistic = criterion.statistic or (
            criterion.metric.statistic if criterion.metric is not None else ""
        )
        return f"needs: candidate {statistic} {criterion.get_operator_display()} {sig(criterion.threshold)}{unit}".replace(
            "  ", " "
        )
    if criterion.kind == Criterion.Kind.IMPROVEMENT:
        return f"needs: {_change_words(criterion.threshold, at_least)}"
    words = _change_words((criterion.threshold - 1) * 100, at_least)
    if criterion.kind == Criterion.Kind.EVERY_METRIC:
        return f"needs: every metric {words}"
    return f"needs: {words}"
