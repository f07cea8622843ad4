"""Intervals on a discrete rating scale: clipping, boundary adjustment, label sets and the
diagnostics of the VLM-judge paper (coverage and width by ground-truth level and by error size,
informativeness bands, the ranking-scoring gap).

The interval *methods* (naive split CP, CQR, CHR, ... R2CCP) build on these functions.

Conventions
-----------
* A raw interval [lo, hi] is clipped to the scale [low, high] (e.g. [1, 5]).
* Boundary adjustment (Sheng et al., 2025) maps it to [floor(lo), ceil(hi)], so both endpoints
  are valid ratings; it only widens, so coverage cannot drop. Endpoints within ``EDGE_TOL``
  (1e-9) of an integer count as that integer first, so 3.0000000001 stays 3 instead of
  widening to 4 through float noise.
* Coverage counts a rating y as inside when lo <= y <= hi (closed interval).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._validation import as_float_1d, same_length

__all__ = ["EDGE_TOL", "adjust_to_labels", "clip_intervals", "coverage_by_level",
           "error_bin_coverage", "informativeness_bands", "interval_label_sets",
           "interval_metrics", "ranking_scoring_gap"]

EDGE_TOL = 1e-9


def _pair(lo: ArrayLike, hi: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    lo_a, hi_a = as_float_1d(lo, "lo"), as_float_1d(hi, "hi")
    same_length(lo=lo_a, hi=hi_a)
    if (lo_a > hi_a + EDGE_TOL).any():
        raise ValueError("every interval needs lo <= hi")
    return lo_a, hi_a


def clip_intervals(lo: ArrayLike, hi: ArrayLike, low: float, high: float
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Clip interval endpoints to the scale [low, high]."""
    lo_a, hi_a = _pair(lo, hi)
    return np.clip(lo_a, low, high), np.clip(hi_a, low, high)


def adjust_to_labels(lo: ArrayLike, hi: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Boundary adjustment: [floor(lo), ceil(hi)] with near-integers snapped first.

    Examples
    --------
    >>> lo, hi = adjust_to_labels([1.2, 2.0000000001, 3.0], [3.5, 4.0, 3.0])
    >>> lo.tolist(), hi.tolist()
    ([1.0, 2.0, 3.0], [4.0, 4.0, 3.0])
    """
    lo_a, hi_a = _pair(lo, hi)

    def snap(x):
        r = np.round(x)
        return np.where(np.abs(x - r) <= EDGE_TOL, r, x)

    return np.floor(snap(lo_a)), np.ceil(snap(hi_a))


def interval_label_sets(lo: ArrayLike, hi: ArrayLike, levels: ArrayLike) -> np.ndarray:
    """Boolean (n, K) matrix: which ratings of ``levels`` lie inside each interval."""
    lo_a, hi_a = _pair(lo, hi)
    lv = np.asarray(levels, dtype=np.float64)
    return (lv[None, :] >= lo_a[:, None] - EDGE_TOL) & (lv[None, :] <= hi_a[:, None] + EDGE_TOL)


def interval_metrics(lo: ArrayLike, hi: ArrayLike, truth: ArrayLike) -> dict[str, float]:
    """Coverage (share of truths inside [lo, hi]) and mean width."""
    lo_a, hi_a = _pair(lo, hi)
    y = as_float_1d(truth, "truth")
    if same_length(lo=lo_a, truth=y) == 0:
        raise ValueError("need at least one interval")
    inside = (y >= lo_a - EDGE_TOL) & (y <= hi_a + EDGE_TOL)
    return {"coverage": float(inside.mean()), "width": float((hi_a - lo_a).mean())}


def ranking_scoring_gap(pearson: float, mean_width: float, scale_range: float) -> float:
    r"""Ranking-scoring gap (Eq. 7 of the VLM-judge paper).

    .. math:: \mathrm{RSG} = \rho - \Bigl(1 - \frac{\bar W}{\text{range}}\Bigr)

    The second term is the interval informativeness (1 for point intervals, 0 for intervals
    spanning the whole scale; range = 4 on a 1–5 scale). Positive: the judge ranks better than
    it scores.

    Examples
    --------
    >>> round(ranking_scoring_gap(0.402, 2.08, 4), 3)
    -0.078
    """
    return float(pearson - (1.0 - mean_width / scale_range))


def coverage_by_level(lo: ArrayLike, hi: ArrayLike, truth: ArrayLike) -> dict[float, dict]:
    """Coverage, width and count for every ground-truth level."""
    lo_a, hi_a = _pair(lo, hi)
    y = as_float_1d(truth, "truth")
    same_length(lo=lo_a, truth=y)
    levels, inverse, counts = np.unique(y, return_inverse=True, return_counts=True)
    inside = ((y >= lo_a - EDGE_TOL) & (y <= hi_a + EDGE_TOL)).astype(np.float64)
    cov = np.bincount(inverse, weights=inside) / counts
    width = np.bincount(inverse, weights=hi_a - lo_a) / counts
    return {float(lv): {"n": int(c), "coverage": float(v), "width": float(w)}
            for lv, c, v, w in zip(levels, counts, cov, width)}


def error_bin_coverage(lo: ArrayLike, hi: ArrayLike, truth: ArrayLike,
                       point: ArrayLike) -> dict[int, dict]:
    """Coverage and width grouped by the judge's absolute point error |point - truth|
    (rounded to an integer): does the interval rescue the judge when it is wrong?"""
    lo_a, hi_a = _pair(lo, hi)
    y = as_float_1d(truth, "truth")
    p = as_float_1d(point, "point")
    same_length(lo=lo_a, truth=y, point=p)
    err = np.rint(np.abs(p - y)).astype(np.int64)
    inside = ((y >= lo_a - EDGE_TOL) & (y <= hi_a + EDGE_TOL)).astype(np.float64)
    counts = np.bincount(err)
    cov = np.bincount(err, weights=inside)
    width = np.bincount(err, weights=hi_a - lo_a)
    n = y.size
    return {int(e): {"n": int(counts[e]), "share": float(counts[e] / n),
                     "coverage": float(cov[e] / counts[e]), "width": float(width[e] / counts[e])}
            for e in np.flatnonzero(counts)}


def informativeness_bands(lo: ArrayLike, hi: ArrayLike, truth: ArrayLike,
                          edges: tuple[float, float] = (2.0, 3.0)) -> dict[str, dict]:
    """Share, mean width and coverage of decisive (width <= edges[0]), moderate
    (edges[0] < width <= edges[1]) and uninformative (width > edges[1]) intervals — the
    paper's bands for boundary-adjusted intervals on a 1–5 scale."""
    lo_a, hi_a = _pair(lo, hi)
    y = as_float_1d(truth, "truth")
    same_length(lo=lo_a, truth=y)
    width = hi_a - lo_a
    inside = (y >= lo_a - EDGE_TOL) & (y <= hi_a + EDGE_TOL)
    bands = {"decisive": width <= edges[0] + EDGE_TOL,
             "moderate": (width > edges[0] + EDGE_TOL) & (width <= edges[1] + EDGE_TOL),
             "uninformative": width > edges[1] + EDGE_TOL}
    out = {}
    for name, mask in bands.items():
        k = int(mask.sum())
        out[name] = {"n": k, "share": float(k / y.size),
                     "width": float(width[mask].mean()) if k else None,
                     "coverage": float(inside[mask].mean()) if k else None}
    return out
