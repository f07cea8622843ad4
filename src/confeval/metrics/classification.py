"""Classification metrics: accuracy, per-class and macro F1.

Written on a confusion matrix from ``numpy.bincount`` instead of calling scikit-learn so that
the bootstrap can run thousands of resamples quickly; parity with
``sklearn.metrics.f1_score`` (including ``zero_division=0`` for classes never predicted and
never present) is tested.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._validation import index_in, same_length

__all__ = ["accuracy", "cohen_kappa", "f1_per_class", "macro_f1", "proportion_ci"]


def _encode(y_true: ArrayLike, y_pred: ArrayLike, labels: ArrayLike | None):
    t = np.asarray(y_true)
    p = np.asarray(y_pred)
    if t.ndim != 1 or p.ndim != 1:
        raise ValueError("y_true and y_pred must be 1-D")
    if same_length(y_true=t, y_pred=p) == 0:
        raise ValueError("need at least one sample")
    lab = np.unique(np.concatenate([t, p])) if labels is None else np.asarray(labels)
    return lab, index_in(lab, t), index_in(lab, p)


def accuracy(y_true: ArrayLike, y_pred: ArrayLike) -> float:
    """Share of exact matches.

    Examples
    --------
    >>> accuracy(["a", "b", "b"], ["a", "a", "b"])
    0.6666666666666666
    """
    t, p = np.asarray(y_true), np.asarray(y_pred)
    if same_length(y_true=t, y_pred=p) == 0:
        raise ValueError("need at least one sample")
    return float(np.mean(t == p))


def f1_per_class(y_true: ArrayLike, y_pred: ArrayLike,
                 labels: ArrayLike | None = None) -> dict:
    """F1 of every class (one-vs-rest). A class with no true and no predicted sample gets 0.

    Parameters
    ----------
    labels : array, optional
        Classes to report, in this order; default: the sorted union of both inputs. Samples
        whose labels are not listed count as "other" (never a true positive of a listed class).

    Examples
    --------
    >>> f1_per_class([0, 1, 1, 1], [0, 1, 0, 1])
    {0: 0.6666666666666666, 1: 0.8}
    """
    lab, ti, pi = _encode(y_true, y_pred, labels)
    k = lab.size
    tp = np.bincount(ti[(ti == pi) & (ti >= 0)], minlength=k).astype(np.float64)
    n_true = np.bincount(ti[ti >= 0], minlength=k).astype(np.float64)
    n_pred = np.bincount(pi[pi >= 0], minlength=k).astype(np.float64)
    denom = n_true + n_pred
    f1 = np.divide(2 * tp, denom, out=np.zeros(k), where=denom > 0)
    return {lb: float(v) for lb, v in zip(lab.tolist(), f1)}


def macro_f1(y_true: ArrayLike, y_pred: ArrayLike, labels: ArrayLike | None = None) -> float:
    """Unweighted mean of the per-class F1 scores (``sklearn.metrics.f1_score(average="macro")``).

    Examples
    --------
    >>> round(macro_f1([0, 1, 1, 1], [0, 1, 0, 1]), 6)
    0.733333
    """
    return float(np.mean(list(f1_per_class(y_true, y_pred, labels).values())))


def proportion_ci(k: int, n: int, level: float = 0.95) -> dict[str, float] | None:
    """Wilson score interval of ``k`` successes in ``n`` trials (``None`` for n = 0), from
    scipy's ``binomtest``.

    Examples
    --------
    >>> {k: round(v, 4) for k, v in proportion_ci(1331, 1997).items()}
    {'low': 0.6455, 'high': 0.6868}
    """
    from scipy import stats

    if n == 0:
        return None
    ci = stats.binomtest(int(k), int(n)).proportion_ci(confidence_level=level, method="wilson")
    return {"low": float(ci.low), "high": float(ci.high)}


def cohen_kappa(gold: ArrayLike, predicted: ArrayLike) -> float | None:
    """Cohen's kappa of two labelings (scikit-learn's, labels compared as text); ``None`` when
    only one label occurs in both or kappa is undefined.

    Examples
    --------
    >>> round(cohen_kappa(["a", "a", "b", "b"], ["a", "b", "b", "b"]), 4)
    0.5
    """
    from sklearn.metrics import cohen_kappa_score

    gold, predicted = np.asarray(gold), np.asarray(predicted)
    if np.unique(np.concatenate([gold.astype(str), predicted.astype(str)])).size < 2:
        return None
    value = cohen_kappa_score(gold.astype(str), predicted.astype(str))
    return None if np.isnan(value) else float(value)
