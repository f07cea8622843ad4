"""The conformal quantile: the one threshold every conformal method here calibrates with.

With n calibration scores and miscoverage alpha, the exact finite-sample threshold is the k-th
smallest score, k = ceil((n + 1)(1 - alpha)): the smallest threshold with the guarantee
P(score of a new exchangeable point <= q_hat) >= 1 - alpha (Vovk et al., 2005; Angelopoulos and
Bates, 2023, Thm. 1). ``method="higher"`` instead returns ``numpy.quantile(scores, k / n,
method="higher")``, the VLM uncertainty benchmark's choice (Kostumov et al., 2024), one order
statistic more conservative when k < n. If k > n the calibration set is too small for alpha:
q_hat is +inf (the method answers with the whole label set or scale), and a
:class:`SmallCalibrationWarning` says so unless ``warn=False`` — never a silently finite
threshold.

Mondrian (group-conditional) calibration takes one such threshold per group, from that group's
calibration scores only (Vovk et al., 2005, ch. 4); :func:`row_thresholds` gives each test row
its group's threshold, +inf for a group never seen in calibration.

Used by the prediction sets (:mod:`confeval.conformal.sets`), every interval method
(:mod:`confeval.conformal.regression`) and the boosted methods' round selection.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

__all__ = ["QUANTILE_METHODS", "SmallCalibrationWarning", "conformal_quantile",
           "mondrian_quantiles", "row_thresholds"]

QUANTILE_METHODS = ("exact", "higher")


class SmallCalibrationWarning(UserWarning):
    """The calibration set is too small for the requested alpha; sets are the full label set."""


def conformal_quantile(scores: ArrayLike, alpha: float, method: str = "exact", *,
                       warn: bool = True) -> float:
    """The split-conformal threshold q_hat of calibration ``scores`` (module docstring).

    Examples
    --------
    >>> conformal_quantile([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9], alpha=0.2)
    0.8
    >>> conformal_quantile([0.1, 0.2], alpha=0.1, warn=False)
    inf
    """
    s = np.asarray(scores)
    if s.ndim != 1:
        raise ValueError("scores must be 1-D")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if method not in QUANTILE_METHODS:
        raise ValueError(f"method must be 'exact' or 'higher', got {method!r}")
    n = s.size
    # The tolerance keeps e.g. 100 * 0.9 = 90.00000000000001 from rounding up to 91.
    k = math.ceil((n + 1) * (1 - alpha) - 1e-9)
    if n == 0 or k > n:
        if warn:
            warnings.warn(f"{n} calibration scores are too few for alpha={alpha} (need "
                          f"{math.ceil(1 / alpha - 1)}); every prediction set is the full label "
                          "set", SmallCalibrationWarning, stacklevel=2)
        return math.inf
    if method == "exact":
        return float(np.partition(s, k - 1)[k - 1])
    return float(np.quantile(s, k / n, method="higher"))


def mondrian_quantiles(scores: ArrayLike, groups: ArrayLike, alpha: float,
                       method: str = "exact") -> dict:
    """One q_hat per group (group-conditional / Mondrian conformal prediction)."""
    s = np.asarray(scores)
    g = np.asarray(groups)
    if s.shape != g.shape:
        raise ValueError("scores and groups must have the same length")
    order = np.argsort(g, kind="stable")
    keys, starts = np.unique(g[order], return_index=True)
    bounds = np.r_[starts, g.size]
    out = {}
    for key, lo, hi in zip(keys.tolist(), bounds[:-1], bounds[1:]):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out[key] = conformal_quantile(s[order[lo:hi]], alpha, method)
        for w in caught:
            warnings.warn(f"group {key!r}: {w.message}", SmallCalibrationWarning, stacklevel=2)
    return out


def row_thresholds(per_group: dict, groups: ArrayLike, *, what: str,
                   warn: bool = True) -> np.ndarray:
    """Each row's threshold from its group's; +inf for a group that had no calibration rows,
    with a warning "groups [...] ``what``" (e.g. "have no calibration rows; their sets are the
    full label set")."""
    g = np.asarray(groups)
    missing = sorted(set(g.tolist()) - set(per_group), key=str)
    if missing and warn:
        warnings.warn(f"groups {missing} {what}",
                      SmallCalibrationWarning, stacklevel=3)
    return pd.Series(g).map(per_group).astype(float).fillna(math.inf).to_numpy()
