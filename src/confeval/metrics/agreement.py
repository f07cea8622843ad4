"""Agreement between a judge's scores and ground-truth (e.g. human) scores.

Correlations delegate to SciPy (Pearson r, Spearman rho, Kendall tau-b), so they are
SciPy-identical by construction; what confeval adds is validation, NaN-with-warning for
degenerate input instead of an exception, and the judge-specific measures below.
"""

from __future__ import annotations

import warnings

import numpy as np
from numpy.typing import ArrayLike

from .._validation import as_float_1d, as_prob_matrix, index_in, same_length
from .selective import UndefinedMetricWarning

__all__ = [
    "bias_by_level",
    "confusion_matrix",
    "exact_accuracy",
    "kendall",
    "mean_absolute_error",
    "mean_bias",
    "overconfidence_rate",
    "pearson",
    "spearman",
    "within_k_accuracy",
]


def _pair(pred: ArrayLike, truth: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    p = as_float_1d(pred, "pred")
    t = as_float_1d(truth, "truth")
    if same_length(pred=p, truth=t) == 0:
        raise ValueError("need at least one (pred, truth) pair")
    return p, t


def _correlation(fn, pred, truth, name):
    p, t = _pair(pred, truth)
    if p.size < 2 or np.ptp(p) == 0 or np.ptp(t) == 0:
        warnings.warn(f"{name} is undefined for constant input or fewer than 2 pairs; "
                      "returning NaN", UndefinedMetricWarning, stacklevel=3)
        return float("nan")
    return float(fn(p, t)[0])


def pearson(pred: ArrayLike, truth: ArrayLike) -> float:
    """Pearson correlation (``scipy.stats.pearsonr``)."""
    return _correlation(_scipy_stats().pearsonr, pred, truth, "Pearson r")


def spearman(pred: ArrayLike, truth: ArrayLike) -> float:
    """Spearman rank correlation with mid-ranks for ties (``scipy.stats.spearmanr``)."""
    return _correlation(_scipy_stats().spearmanr, pred, truth, "Spearman rho")


def kendall(pred: ArrayLike, truth: ArrayLike) -> float:
    """Kendall tau-b, which corrects for ties (``scipy.stats.kendalltau``)."""
    return _correlation(_scipy_stats().kendalltau, pred, truth, "Kendall tau")


def exact_accuracy(pred: ArrayLike, truth: ArrayLike) -> float:
    """Share of items whose score equals the ground truth exactly.

    Examples
    --------
    >>> exact_accuracy([1, 2, 3, 5], [1, 3, 3, 4])
    0.5
    """
    p, t = _pair(pred, truth)
    return float(np.mean(p == t))


def within_k_accuracy(pred: ArrayLike, truth: ArrayLike, k: float = 1.0) -> float:
    """Share of items with |pred - truth| <= k (k = 1 gives the usual "±1 accuracy").

    Examples
    --------
    >>> within_k_accuracy([1, 2, 3, 5], [1, 3, 3, 3])
    0.75
    """
    p, t = _pair(pred, truth)
    return float(np.mean(np.abs(p - t) <= k + 1e-12))


def mean_absolute_error(pred: ArrayLike, truth: ArrayLike) -> float:
    """Mean |pred - truth|."""
    p, t = _pair(pred, truth)
    return float(np.mean(np.abs(p - t)))


def mean_bias(pred: ArrayLike, truth: ArrayLike) -> float:
    """Signed bias: mean (pred - truth). Positive means the judge scores too high."""
    p, t = _pair(pred, truth)
    return float(np.mean(p - t))


def bias_by_level(pred: ArrayLike, truth: ArrayLike) -> dict[float, dict[str, float]]:
    """Signed bias, MAE and count per ground-truth level.

    Returns
    -------
    dict
        ``{level: {"n": count, "bias": mean(pred - truth), "mae": mean|pred - truth|}}`` for
        every distinct ground-truth value, in increasing order.

    Examples
    --------
    >>> bias_by_level([2, 2, 5], [1, 1, 5])
    {1.0: {'n': 2, 'bias': 1.0, 'mae': 1.0}, 5.0: {'n': 1, 'bias': 0.0, 'mae': 0.0}}
    """
    p, t = _pair(pred, truth)
    levels, inverse, counts = np.unique(t, return_inverse=True, return_counts=True)
    diff = p - t
    bias = np.bincount(inverse, weights=diff) / counts
    mae = np.bincount(inverse, weights=np.abs(diff)) / counts
    return {float(lv): {"n": int(c), "bias": float(b), "mae": float(m)}
            for lv, c, b, m in zip(levels, counts, bias, mae)}


def confusion_matrix(pred: ArrayLike, truth: ArrayLike,
                     labels: ArrayLike | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Confusion matrix with ground truth in rows and predictions in columns (sklearn's layout).

    Parameters
    ----------
    labels : array, optional
        The label order; by default the sorted union of both inputs. Pairs whose value is not
        in ``labels`` are left out of the matrix.

    Returns
    -------
    matrix : int array of shape (L, L)
    labels : array of shape (L,)
    """
    p, t = _pair(pred, truth)
    lab = np.unique(np.r_[p, t]) if labels is None else np.asarray(labels, dtype=np.float64)
    if np.unique(lab).size != lab.size:
        raise ValueError("labels must be distinct")
    pi, ti = index_in(lab, p), index_in(lab, t)
    keep = (pi >= 0) & (ti >= 0)
    flat = np.bincount(ti[keep] * lab.size + pi[keep], minlength=lab.size ** 2)
    return flat.reshape(lab.size, lab.size), lab


def overconfidence_rate(probs: ArrayLike, threshold: float = 0.99) -> float:
    """Share of items whose top probability *exceeds* ``threshold`` (strictly greater).

    ``probs`` is either an (n, K) matrix of score/option probabilities or an (n,) vector of
    top probabilities.

    Examples
    --------
    >>> overconfidence_rate([[0.995, 0.005], [0.6, 0.4], [0.99, 0.01]], threshold=0.99)
    0.3333333333333333
    """
    arr = np.asarray(probs, dtype=np.float64)
    top = (as_prob_matrix(arr, "probs").max(axis=1) if arr.ndim == 2
           else as_float_1d(arr, "probs", lo=0.0, hi=1.0))
    if top.size == 0:
        raise ValueError("need at least one item")
    return float(np.mean(top > threshold))


def _scipy_stats():
    """scipy.stats, imported when a correlation is computed (it takes half a second)."""
    from scipy import stats

    return stats
