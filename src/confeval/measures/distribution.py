"""Measures of a predictive distribution over a fixed set of answers (options, ratings)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["predictive_entropy"]


def predictive_entropy(probs: ArrayLike) -> np.ndarray:
    """Shannon entropy (nats) of each row of an (n, K) probability matrix, in float64;
    ``0 log 0 = 0``.

    Examples
    --------
    >>> predictive_entropy([[0.5, 0.5], [1.0, 0.0]]).round(6).tolist()
    [0.693147, 0.0]
    """
    p = np.asarray(probs).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, -p * np.log(p), 0.0)
    return terms.sum(axis=1)
