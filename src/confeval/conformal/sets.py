"""Split-conformal prediction sets for classification (multiple-choice answers).

Every score function maps an (n, K) probability matrix to an (n, K) matrix of nonconformity
scores, one per candidate label; calibration takes the score of the true label, and the
prediction set of a test row is ``{y : score(y) <= q_hat}``. Everything is vectorised over rows.

Scores
------
``lac``     1 - p_y (Sadinle, Lei and Wasserman, 2019).
``aps``     the probability mass of the labels at least as probable as y,
            sum over {y' : p_y' >= p_y} of p_y' (Romano, Sesia and Candès, 2020; Eq. 5 of the
            conformal-lens paper). ``ties="inclusive"`` (default) follows that definition to
            the letter: tied labels share one score, whatever their order. ``ties="numpy"``
            instead accumulates in the order of ``numpy.argsort(p)[::-1]``, as the published
            benchmark code does; tied labels then get different scores in an order that
            depends on numpy's sorting routine (reproducible on one installation, not a
            documented rule). Float32 probabilities tie often (tiny values underflow alike), so
            this choice is visible in the numbers.
``aps_randomized``  mass strictly above y plus U times the mass of y's tie block, with one
            U ~ Uniform(0, 1) per row (seeded). Its sets are exact in coverage rather than
            conservative.
``raps``    APS plus a rank penalty lambda * max(0, rank(y) - k_reg) (Angelopoulos et al.,
            2021); ``raps_randomized`` likewise on the randomised APS score.
``margin``  max over the *other* labels of p minus p_y. For the top label this is
            -(p_(1) - p_(2)), the negated margin of the conformal-lens paper's Eq. 6, which as
            printed does not depend on y and so cannot be calibrated on its own; extending it
            to every label this way gives the standard margin nonconformity score. A label
            enters the set when no other label beats it by more than q_hat (q_hat may be
            negative: then even the top label needs a clear margin).

Quantile
--------
:func:`confeval.conformal.quantile.conformal_quantile`: the exact k-th smallest calibration score
(default) or the benchmark's ``"higher"`` rule; a calibration set too small for alpha gives the
full label set and a :class:`~confeval.conformal.quantile.SmallCalibrationWarning`.

Empty sets
----------
A set can be empty (LAC and margin when no label clears q_hat). ``allow_empty=False`` (the
default, as in the benchmark) puts the top-probability label in an empty set; coverage can
only grow, so the guarantee holds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import ArrayLike

from .._numeric import softmax
from .._registry import Registry
from .quantile import conformal_quantile, mondrian_quantiles, row_thresholds

__all__ = ["SCORES", "SET_SCORES", "calibrate_and_predict", "get_set_score", "label_scores",
           "prediction_sets", "to_probabilities"]

def to_probabilities(values: ArrayLike, kind: str = "logits", dtype=np.float32) -> np.ndarray:
    """Option probabilities from ``logits``, ``logprobs`` or ``probs`` (renormalised)."""
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[1] < 2:
        raise ValueError(f"need an (n, K >= 2) matrix of option values, got shape {arr.shape}")
    if kind in ("logits", "logprobs"):
        return softmax(arr, dtype)
    if kind == "probs":
        p = np.where(np.isnan(arr), 0.0, arr).astype(dtype)
        if (p < 0).any():
            raise ValueError("probabilities must be non-negative")
        return p / p.sum(axis=1, keepdims=True)
    raise ValueError(f"kind must be logits, logprobs or probs, got {kind!r}")


# ------------------------------------------------------------------ scores
def _aps_parts(p: np.ndarray, ties: str):
    """Per label: the mass at or above it, the mass strictly above it, and its 1-based rank.

    With ``ties="inclusive"`` a tie block shares the cumulative mass and rank at its end, and
    "strictly above" is the mass before the block starts.
    """
    if ties == "numpy":
        order = np.argsort(p, axis=1)[:, ::-1]  # the benchmark code's order (module docstring)
    elif ties == "inclusive":
        order = np.argsort(-p, axis=1, kind="stable")
    else:
        raise ValueError(f"ties must be 'inclusive' or 'numpy', got {ties!r}")
    sorted_p = np.take_along_axis(p, order, axis=1)
    cum = np.cumsum(sorted_p, axis=1, dtype=p.dtype)
    if ties == "inclusive":
        # The whole label set holds mass 1 exactly (x / x == 1 in IEEE arithmetic), whatever
        # the rounding of the sum: a quantile at the full mass — common in small Mondrian
        # groups — would otherwise let the last bit of a sum decide a set's last label.
        cum = cum / cum[:, -1:]
    k = p.shape[1]
    position = np.broadcast_to(np.arange(k), p.shape)
    if ties == "inclusive":
        is_end = np.ones(p.shape, dtype=bool)
        is_end[:, :-1] = sorted_p[:, :-1] != sorted_p[:, 1:]
        is_start = np.ones(p.shape, dtype=bool)
        is_start[:, 1:] = sorted_p[:, 1:] != sorted_p[:, :-1]
        end = np.minimum.accumulate(np.where(is_end, position, k)[:, ::-1], axis=1)[:, ::-1]
        start = np.maximum.accumulate(np.where(is_start, position, 0), axis=1)
    else:
        end = start = position
    at_or_above = np.take_along_axis(cum, end, axis=1)
    before = np.take_along_axis(cum, np.maximum(start - 1, 0), axis=1)
    strictly_above = np.where(start > 0, before, 0).astype(p.dtype)
    inverse = np.argsort(order, axis=1)

    def back(a):
        return np.take_along_axis(np.ascontiguousarray(a), inverse, axis=1)

    return back(at_or_above), back(strictly_above), back(end + 1)


def _lac(p: np.ndarray, **_) -> np.ndarray:
    return (1 - p).astype(p.dtype)


def _margin(p: np.ndarray, **_) -> np.ndarray:
    top2 = -np.partition(-p, 1, axis=1)[:, :2]
    best_other = np.where(p >= top2[:, :1], top2[:, 1:2], top2[:, :1])
    # A tie for the top: both tied labels see the other as "best other" (margin 0).
    is_top = p == top2[:, :1]
    n_top = is_top.sum(axis=1, keepdims=True)
    best_other = np.where(is_top & (n_top > 1), top2[:, :1], best_other)
    return (best_other - p).astype(p.dtype)


def _aps_family(randomized: bool, penalised: bool) -> Callable[..., np.ndarray]:
    """APS and its variants: optionally randomised within the tie block, optionally with the
    RAPS rank penalty."""
    def score(p: np.ndarray, *, rng=None, lam: float = 0.01, k_reg: int = 1,
              ties: str = "inclusive") -> np.ndarray:
        cum, above, rank = _aps_parts(p, ties)
        s = cum
        if randomized:
            if rng is None:
                raise ValueError("randomised APS scores need a seeded rng")
            u = rng.uniform(size=(p.shape[0], 1)).astype(p.dtype)
            s = above + u * (cum - above)
        if penalised:
            s = s + np.asarray(lam, dtype=p.dtype) * np.maximum(0, rank - k_reg).astype(p.dtype)
        return s.astype(p.dtype)
    return score


SET_SCORES: Registry[Callable[..., np.ndarray]] = Registry("score", {
    "lac": _lac,
    "aps": _aps_family(randomized=False, penalised=False),
    "aps_randomized": _aps_family(randomized=True, penalised=False),
    "raps": _aps_family(randomized=False, penalised=True),
    "raps_randomized": _aps_family(randomized=True, penalised=True),
    "margin": _margin,
})
"""Set score name -> ``fn(probs, *, rng, lam, k_reg, ties)``; see the module docstring."""

SCORES = tuple(SET_SCORES)


def get_set_score(name: str) -> Callable[..., np.ndarray]:
    """The score function of ``name``; a :class:`ValueError` lists the choices."""
    return SET_SCORES[name]


def label_scores(probs: np.ndarray, score: str, *, rng: np.random.Generator | None = None,
                 lam: float = 0.01, k_reg: int = 1, ties: str = "inclusive") -> np.ndarray:
    """Nonconformity score of every (row, label) pair; see the module docstring.

    ``rng`` draws the per-row U of the randomised scores (required for them); ``lam`` and
    ``k_reg`` are the RAPS penalty and its free ranks; ``ties`` the APS tie rule.

    Examples
    --------
    >>> p = np.array([[0.5, 0.2, 0.2, 0.1]])
    >>> label_scores(p, "aps").round(6).tolist()
    [[0.5, 0.9, 0.9, 1.0]]
    >>> label_scores(p, "lac").round(6).tolist()
    [[0.5, 0.8, 0.8, 0.9]]
    >>> label_scores(p, "margin").round(6).tolist()
    [[-0.3, 0.3, 0.3, 0.4]]
    """
    return get_set_score(score)(np.asarray(probs), rng=rng, lam=lam, k_reg=k_reg, ties=ties)


# ------------------------------------------------------------------ sets
def prediction_sets(test_scores: np.ndarray, qhat: float | np.ndarray, probs: np.ndarray, *,
                    allow_empty: bool = False) -> np.ndarray:
    """Boolean (n, K) membership matrix: label y is in the set of row i iff score <= q_hat.

    ``qhat`` is a scalar or one value per row (Mondrian). Compared in the scores' dtype, as the
    scores were computed. Empty sets get the top-probability label unless ``allow_empty``.
    """
    q = np.asarray(qhat, dtype=np.float64)
    q = q[:, None] if q.ndim == 1 else q
    with np.errstate(invalid="ignore"):
        member = test_scores <= q.astype(test_scores.dtype) if np.isfinite(q).all() else \
            (test_scores <= q)
    member = member | np.isinf(q)
    if not allow_empty:
        empty = ~member.any(axis=1)
        if empty.any():
            member[np.flatnonzero(empty), np.argmax(probs[empty], axis=1)] = True
    return member


def calibrate_and_predict(probs_cal: np.ndarray, labels_cal: np.ndarray,
                          probs_test: np.ndarray, score: str, alpha: float, *,
                          method: str = "exact", groups_cal: Sequence | None = None,
                          groups_test: Sequence | None = None, seed: int = 0,
                          lam: float = 0.01, k_reg: int = 1, ties: str = "inclusive",
                          allow_empty: bool = False) -> tuple[np.ndarray, float | dict]:
    """Calibrate one score on a split and return the test sets and q_hat (per group if given)."""
    rng = np.random.default_rng(seed)
    cal = label_scores(probs_cal, score, rng=rng, lam=lam, k_reg=k_reg, ties=ties)
    true_scores = cal[np.arange(cal.shape[0]), labels_cal]
    test = label_scores(probs_test, score, rng=rng, lam=lam, k_reg=k_reg, ties=ties)
    if groups_cal is None:
        qhat = conformal_quantile(true_scores, alpha, method)
        return prediction_sets(test, qhat, probs_test, allow_empty=allow_empty), qhat
    per_group = mondrian_quantiles(true_scores, groups_cal, alpha, method)
    row_q = row_thresholds(per_group, groups_test,
                           what="have no calibration rows; their sets are the full label set")
    return prediction_sets(test, row_q, probs_test, allow_empty=allow_empty), per_group
