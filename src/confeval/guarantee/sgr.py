"""Selection with guaranteed risk (Geifman and El-Yaniv, 2017): a binary search over the
sorted calibration confidences, testing ``k = ceil(log2 n)`` thresholds, each with the exact
binomial upper bound on its selective error at ``delta / k``; with probability at least
``1 - delta`` every tested bound holds at once (a union bound).

Where this differs from the authors' code (``geifmany/selective_deep_learning``,
``risk_control.py``), on purpose:

* the answered set at a threshold θ is every item with confidence >= θ (the rule a user
  applies), not the items from θ's sorted position on — they differ when θ is tied;
* the error count is counted, not recovered as ``int(n * risk)`` (which can lose one error to
  rounding);
* the bound inverts the binomial CDF exactly (``betaincinv``) instead of bisecting to 1e-7;
* exactly k thresholds are tested (the code loops ``k + 1`` times at ``delta / k``);
* the result is the lowest tested threshold whose bound meets the target — every tested bound
  holds simultaneously, so this is as valid as the search's last iterate, which the paper
  returns and which may not meet the target.

The bound B*(r, δ) is the b solving P(Binomial(n_θ, b) <= errors) = δ: for e < n errors among
n answered, b = I^{-1}_{1-δ}(e + 1, n - e) (the Clopper–Pearson upper limit at 1 - δ), and 1 when
e = n. Losses must be 0/1.

Reference
---------
Geifman and El-Yaniv (2017), "Selective classification for deep neural networks", NeurIPS
(Algorithm 1 and Eq. 4).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from ._common import ThresholdResult, check_target, checked

__all__ = ["binomial_upper", "sgr_threshold"]


def binomial_upper(errors: ArrayLike, n: ArrayLike, delta: float) -> np.ndarray:
    """The b with P(Binomial(n, b) <= errors) = delta (1 where errors >= n or n = 0).

    Examples
    --------
    >>> round(float(binomial_upper(0, 50, 0.1)), 12) == round(1 - 0.1 ** (1 / 50), 12)
    True
    """
    from scipy.special import betaincinv

    e = np.asarray(errors, dtype=np.float64)
    m = np.asarray(n, dtype=np.float64)
    e, m = np.broadcast_arrays(e, m)
    out = np.ones(e.shape)
    ok = (m > 0) & (e < m)
    out[ok] = betaincinv(e[ok] + 1, m[ok] - e[ok], 1 - delta)
    return out


def sgr_threshold(confidence: ArrayLike, correct: ArrayLike, *, target: float, delta: float
                  ) -> ThresholdResult:
    """Geifman and El-Yaniv's SGR: the lowest of the binary search's thresholds whose
    selective error is at most ``target`` with probability at least ``1 - delta``.

    Parameters
    ----------
    confidence : array (n,) — higher = more confident (any scale).
    correct : array (n,) — 1 correct, 0 wrong.
    target : float in (0, 1) — the selective error promised.
    delta : float in (0, 1) — the probability the promise may fail.
    """
    conf, y = checked(confidence, correct, delta)
    check_target(target)
    if not np.isin(y, (0.0, 1.0)).all():
        raise ValueError("SGR's binomial bound needs 0/1 correctness")
    n = conf.size
    ascending = np.sort(conf)
    wrong_desc = np.cumsum(1.0 - y[np.argsort(-conf, kind="stable")])
    k = max(1, math.ceil(math.log2(n))) if n > 1 else 1
    lo, hi = 0, n - 1                      # positions in the ascending order
    found: list[tuple[float, float, float, int]] = []
    best, best_at = 1.0, None
    for _ in range(k):
        mid = math.ceil((lo + hi) / 2)
        theta = ascending[mid]
        answered = n - int(np.searchsorted(ascending, theta, side="left"))   # ties included
        errors = float(wrong_desc[answered - 1])
        bound = float(binomial_upper(errors, answered, delta / k))
        if best_at is None or bound < best:
            best, best_at = bound, {"threshold": float(theta), "answered": answered,
                                    "risk": errors / answered, "level": delta / k,
                                    "n_tested_first": k}
        if bound <= target:
            found.append((float(theta), bound, errors / answered, answered))
            hi = mid
        else:
            lo = mid
    if not found:
        return ThresholdResult(None, None, None, None, best, k, best_achievable=best_at)
    theta, bound, risk, answered = min(found)            # the lowest certified threshold
    return ThresholdResult(theta, bound, risk, answered, bound, k)
