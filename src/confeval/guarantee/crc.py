"""Conformal risk control of the joint error (Angelopoulos, Bates, Fisch, Lei and Schuster,
2022): the expected share of items that are answered *and* wrong is at most the target.

The loss of an item at threshold t is ``1{confidence >= t} (1 - correct)``: bounded by B = 1
and non-increasing in t, as conformal risk control needs. The threshold is the lowest t among
the calibration set's distinct confidences with ``(n L(t) + B) / (n + 1) <= target``, L the
mean calibration loss; then E[loss of a new item] <= target over the calibration draw and the
new item together (exchangeability). This is an expectation, not a high-probability promise,
and of the joint error, not of the error among the answered (that is LTT's and SGR's): with a
third of items answered, a joint error of 0.05 is a selective error of 0.15.

Ties: candidates are the distinct confidences, so a threshold never splits a tie block.
Answering nothing always meets any target above 1 / (n + 1); when no observed confidence
does, no threshold is certified (the result says so, with the bound answering nothing gives).

Reference
---------
Angelopoulos, Bates, Fisch, Lei and Schuster (2022), "Conformal Risk Control",
arXiv:2208.02814 (Theorem 1, with B = 1).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ._common import ThresholdResult, check_target, checked

__all__ = ["crc_threshold"]


def crc_threshold(confidence: ArrayLike, correct: ArrayLike, *, target: float
                  ) -> ThresholdResult:
    """The lowest threshold whose conformal bound on the joint error (answered and wrong) is
    at most ``target``: E[1{confidence >= t} (1 - correct)] <= target for a new item.

    Parameters
    ----------
    confidence : array (n,) — higher = more confident (any scale).
    correct : array (n,) — 1 correct, 0 wrong (values in [0, 1] are partial losses).
    target : float in (0, 1) — the expected joint error promised.

    Returns
    -------
    ThresholdResult with ``risk_kind="joint"``: ``bound`` is (n L(t) + 1) / (n + 1) and
    ``risk`` the calibration joint error L(t).

    Examples
    --------
    >>> r = crc_threshold([0.9, 0.8, 0.7, 0.6], [1, 1, 0, 1], target=0.45)
    >>> r.threshold, r.bound   # answering 0.6 too: (1 error + 1) / 5 = 0.4
    (0.6, 0.4)
    """
    conf, y = checked(confidence, correct)
    check_target(target)
    n = conf.size
    order = np.argsort(-conf, kind="stable")
    sorted_conf = conf[order]
    cum_loss = np.cumsum(1.0 - y[order])
    last_of_tie = np.flatnonzero(np.r_[sorted_conf[1:] != sorted_conf[:-1], True])
    candidates = sorted_conf[last_of_tie]            # distinct, most conservative first
    loss = cum_loss[last_of_tie] / n                 # L(t), non-decreasing as t falls
    bound = (n * loss + 1.0) / (n + 1)
    # compared as counts (errors + 1 <= target (n + 1)): 2 / 5 meets a target of 0.4
    ok = np.flatnonzero(cum_loss[last_of_tie] + 1.0 <= target * (n + 1) + 1e-9)
    best = float(min(bound.min(), 1.0 / (n + 1)))
    if not ok.size:
        return ThresholdResult(None, None, None, None, best, int(candidates.size), "joint")
    i = int(ok.max())
    return ThresholdResult(float(candidates[i]), float(bound[i]), float(loss[i]),
                           int(last_of_tie[i] + 1), float(bound[i]), int(candidates.size),
                           "joint")
