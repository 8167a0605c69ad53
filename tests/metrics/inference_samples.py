"""Samples shared by the inference tests: seeded lognormal values, sorted as metrics.inference reads them."""

from __future__ import annotations

import numpy as np

HIGHER, LOWER = "higher_is_better", "lower_is_better"


def sorted_sample(seed: int, n: int, mean_log: float = 5.6, sigma: float = 0.5) -> np.ndarray:
    return np.sort(np.random.default_rng(seed).lognormal(mean_log, sigma, n))
