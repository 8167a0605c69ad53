"""One way of saying an effect everywhere (issue 29): "candidate 24 % better", interval in the same words."""

from __future__ import annotations

import pytest

from core.numbers import effect, effect_range


@pytest.mark.parametrize(
    ("relative_performance", "words"),
    [
        (1.24, "candidate 24 % better"),
        (0.809, "candidate 19 % worse"),
        (1.0004, "candidate level with baseline"),
        (None, "no effect to state"),
    ],
)
def test_an_effect_reads_as_better_or_worse_by_how_much(relative_performance, words):
    assert effect(relative_performance) == words


def test_an_interval_reads_smaller_change_first_and_names_both_sides_when_it_spans_no_change():
    assert effect_range((1.14, 1.31)) == "14 – 31 % better"
    assert effect_range((0.70, 0.88)) == "12 – 30 % worse"
    assert effect_range((0.97, 1.12)) == "3 % worse – 12 % better"
    assert effect_range(None) == "no interval"
