r"""How much a judge changes its score when asked again: k reruns of the judge on the same
items (a matrix of scores, one row per item, one column per rerun; NaN where a rerun gave no
score).

Notation: item :math:`i` has :math:`k_i \ge 2` scores :math:`s_{i1}, \dots, s_{ik_i}`; two
scores are **the same** when they differ by at most the tolerance :math:`t` (0: equal).

* **The judge's answer** :math:`a_i`: the score that the most reruns agree with (the most
  reruns within :math:`t` of it; among ties the one the earliest rerun gave) — a majority
  vote of the reruns.
* **Rerun agreement** :math:`c_i = \#\{r : |s_{ir} - a_i| \le t\} / k_i`: the share of reruns
  that give the answer. Used as a **confidence** in :math:`a_i`, it is scored against the
  humans like any confidence (:func:`rerun_confidence`).
* **Flip rate** of an item :math:`1 - c_i`: the share of its reruns that would have reported
  another score. Its interval is the exact (Clopper–Pearson) interval of
  :math:`k_i - k_i c_i` flips in :math:`k_i` reruns, given the answer (the answer is chosen
  from the same reruns, so the rate is, if anything, low).
* **Pairwise disagreement** of an item: the share of its :math:`\binom{k_i}{2}` pairs of
  reruns that are not the same, an unbiased estimate of the probability that two reruns of the
  item differ.
* The judge's **overall** figures: the share of items whose reruns are not all the same (exact
  Clopper–Pearson interval, items independent), and the mean flip rate and mean pairwise
  disagreement over items (95% percentile bootstrap intervals over items, seeded).
* **Krippendorff's α** across reruns (:func:`krippendorff_alpha`): the reruns as coders, the
  items as units. :math:`\alpha = 1 - D_o / D_e`, observed over expected disagreement, with
  the nominal, ordinal, interval or ratio difference; 1 is perfect agreement, 0 agreement no
  better than chance. Its interval is a 95% percentile bootstrap over items.

What carries no information says so: a judge whose reruns never differ has flip rates of 0 and
bootstrap intervals that are not given (``low``/``high`` None and a ``note``), while the exact
interval of the items flipping still bounds the rate; α is undefined (None, with a note) when
every score of every item is the same value.

References
----------
Krippendorff, K. (2011), "Computing Krippendorff's alpha-reliability", Annenberg School for
Communication Departmental Papers 43 (the coincidence matrix, the difference functions and the
worked example that ``tests/judge/test_reruns.py`` reproduces); Hayes and Krippendorff (2007),
"Answering the call for a standard reliability measure for coding data", Communication Methods
and Measures 1(1). The ``krippendorff`` package (test-only) is the independent reference.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["LEVELS_OF_MEASUREMENT", "exact_interval", "judge_answers", "krippendorff_alpha",
           "rerun_confidence", "rerun_variability", "score_confidence"]

LEVELS_OF_MEASUREMENT = ("nominal", "ordinal", "interval", "ratio")
"""The difference functions of Krippendorff's α."""

_TIE = 1e-9   # scores are compared with this slack: 0.1 + 0.2 is not 0.3


def _matrix(scores: ArrayLike) -> np.ndarray:
    """Scores as a float (items, reruns) matrix; NaN is a rerun without a score."""
    m = np.asarray(scores, dtype=np.float64)
    if m.ndim != 2:
        raise ValueError(f"reruns must be a matrix of items x reruns, got shape {m.shape}")
    if np.isinf(m).any():
        raise ValueError("reruns: a score is infinite")
    if m.shape[1] < 2:
        raise ValueError(f"reruns: {m.shape[1]} rerun(s); variability needs at least two")
    counts = (~np.isnan(m)).sum(axis=1)
    if (counts < 2).any():
        raise ValueError(f"reruns: {int((counts < 2).sum())} item(s) with fewer than two "
                         "scores; exclude them first")
    if m.shape[0] < 2:
        raise ValueError(f"reruns: {m.shape[0]} item(s); the judge's variability needs at "
                         "least two")
    return m


def exact_interval(k: int, n: int, level: float = 0.95) -> dict[str, float] | None:
    """The exact (Clopper–Pearson) interval of ``k`` successes in ``n`` trials, by
    :func:`scipy.stats.binomtest`; None for ``n = 0``.

    >>> {k: round(v, 4) for k, v in exact_interval(0, 20).items()}
    {'low': 0.0, 'high': 0.1684}
    """
    from scipy import stats

    if n == 0:
        return None
    ci = stats.binomtest(int(k), int(n)).proportion_ci(confidence_level=level, method="exact")
    return {"low": float(ci.low), "high": float(ci.high)}


def judge_answers(scores: ArrayLike, tolerance: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Each item's answer (the score the most reruns agree with, within ``tolerance``; ties go
    to the score the earliest rerun gave) and how many reruns agree with it.

    Parameters
    ----------
    scores : array_like, shape (n_items, k)
        One column per rerun; NaN where a rerun gave no score.
    tolerance : float
        Scores within this distance are the same.

    Returns
    -------
    answer : ndarray, shape (n_items,)
    agree : ndarray of int, shape (n_items,)

    Examples
    --------
    >>> a, n = judge_answers([[3, 4, 4], [2, 5, 5], [1, 2, 3]])
    >>> a.tolist(), n.tolist()
    ([4.0, 5.0, 1.0], [2, 2, 1])
    """
    m = np.asarray(scores, dtype=np.float64)
    # near[i, r, q]: rerun q is within the tolerance of rerun r's score
    with np.errstate(invalid="ignore"):
        near = np.abs(m[:, :, None] - m[:, None, :]) <= tolerance + _TIE
    support = near.sum(axis=2)                      # NaN compares False: 0 support
    support[np.isnan(m)] = -1
    best = support.argmax(axis=1)                   # the first maximum: the earliest rerun
    rows = np.arange(m.shape[0])
    return m[rows, best], support[rows, best].astype(np.int64)


def _pairwise_disagreement(m: np.ndarray, tolerance: float) -> np.ndarray:
    """Per item, the share of its pairs of reruns (both with a score) that differ."""
    valid = ~np.isnan(m)
    with np.errstate(invalid="ignore"):
        differ = np.abs(m[:, :, None] - m[:, None, :]) > tolerance + _TIE
    both = valid[:, :, None] & valid[:, None, :]
    upper = np.triu(np.ones((m.shape[1], m.shape[1]), dtype=bool), 1)
    pairs = (both & upper).sum(axis=(1, 2))
    return (differ & both & upper).sum(axis=(1, 2)) / pairs


def _mean_with_interval(values: np.ndarray, n_resamples: int, seed: int,
                        what: str) -> dict[str, Any]:
    """The mean of per-item values with its 95% percentile bootstrap interval over items;
    no interval (None, with a note) when every item has the same value: resampling then
    shows nothing."""
    from ..metrics import bootstrap_ci

    out: dict[str, Any] = {"estimate": float(values.mean()), "low": None, "high": None}
    if np.ptp(values) == 0:
        out["note"] = (f"every item has the same {what} ({values[0]:.3g}): a bootstrap over "
                       "items has nothing to resample, so no interval")
    elif n_resamples:
        res = bootstrap_ci(np.mean, values, n_resamples=n_resamples, seed=seed)
        if math.isnan(res.low):   # bootstrap_ci's rule: two or three items give no interval
            out["note"] = (f"{values.size} items are too few for a bootstrap interval "
                           "(fewer than 20 distinct resamples)")
        else:
            out.update(low=float(res.low), high=float(res.high))
    return out


def rerun_variability(scores: ArrayLike, *, tolerance: float = 0.0, level: str = "ordinal",
                      n_resamples: int = 1000, seed: int = 0, item_ids: ArrayLike | None = None,
                      per_item: bool = True) -> dict[str, Any]:
    """The judge's variability across reruns (module docstring): flip rates per item and
    overall, pairwise disagreement and Krippendorff's α, with intervals.

    Parameters
    ----------
    scores : array_like, shape (n_items, k)
        The judge's score of each item (rows) in each rerun (columns); NaN where a rerun gave
        none (each item needs two scores).
    tolerance : float
        Scores within this distance are the same (0: equal).
    level : {"nominal", "ordinal", "interval", "ratio"}
        Krippendorff's α difference function.
    n_resamples : int
        Bootstrap resamples over items (0: no bootstrap intervals).
    seed : int
        Seed of the bootstrap.
    item_ids : array_like, optional
        Names of the items, for ``per_item``.
    per_item : bool
        Include the per-item list.

    Returns
    -------
    dict
        ``n_items``, ``reruns`` (k, or ``[min, max]`` when items differ), ``tolerance``,
        ``items_flipping`` {``count``, ``n``, ``share``, ``low``, ``high``} (exact interval),
        ``flip_rate`` and ``pairwise_disagreement`` {``estimate``, ``low``, ``high``,
        [``note``]}, ``alpha`` (:func:`krippendorff_alpha`'s dict), ``distinct_scores`` and,
        with ``per_item``, ``items``: [{``item``, ``answer``, ``reruns``, ``agree``,
        ``flip_rate``, ``low``, ``high``, ``pairwise_disagreement``}].

    Examples
    --------
    >>> r = rerun_variability([[3, 3, 3], [4, 4, 5], [2, 2, 2]], n_resamples=0)
    >>> r["items_flipping"]["count"], round(r["flip_rate"]["estimate"], 4)
    (1, 0.1111)
    """
    m = _matrix(scores)
    if tolerance < 0 or not math.isfinite(tolerance):
        raise ValueError(f"tolerance must be a non-negative number, got {tolerance!r}")
    answer, agree = judge_answers(m, tolerance)
    k = (~np.isnan(m)).sum(axis=1)
    flip = 1.0 - agree / k
    pairwise = _pairwise_disagreement(m, tolerance)
    unstable = int((pairwise > 0).sum())
    n = m.shape[0]
    out: dict[str, Any] = {
        "n_items": n, "reruns": int(k[0]) if np.ptp(k) == 0 else [int(k.min()), int(k.max())],
        "tolerance": float(tolerance),
        "items_flipping": {"count": unstable, "n": n, "share": unstable / n,
                           **exact_interval(unstable, n)},
        "flip_rate": _mean_with_interval(flip, n_resamples, seed, "flip rate"),
        "pairwise_disagreement": _mean_with_interval(pairwise, n_resamples, seed + 1,
                                                     "pairwise disagreement"),
        "alpha": krippendorff_alpha(m.T, level=level, n_resamples=n_resamples, seed=seed + 2),
        "distinct_scores": int(np.unique(m[~np.isnan(m)]).size),
    }
    if per_item:
        ids = np.arange(n).astype(str) if item_ids is None else np.asarray(item_ids).astype(str)
        items = []
        for i in range(n):
            ci = exact_interval(int(k[i] - agree[i]), int(k[i]))
            items.append({"item": str(ids[i]), "answer": float(answer[i]),
                          "reruns": [None if np.isnan(v) else float(v) for v in m[i]],
                          "agree": int(agree[i]), "flip_rate": float(flip[i]),
                          "low": ci["low"], "high": ci["high"],
                          "pairwise_disagreement": float(pairwise[i])})
        out["items"] = items
    return out


# ------------------------------------------------------------------ Krippendorff's alpha
def _coincidences(counts: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """The coincidence matrix :math:`o_{ck} = \\sum_u w_u (n_{uc} n_{uk} - [c = k] n_{uc}) /
    (m_u - 1)` over pairable units (``counts``: units x values; ``weights``: resamples x
    units, the number of times each unit is drawn; a leading resample axis then)."""
    m_u = counts.sum(axis=1)
    share = 1.0 / (m_u - 1.0)
    if weights is None:
        scaled = counts * share[:, None]
        return counts.T @ scaled - np.diag(scaled.sum(axis=0))
    w = weights * share[None, :]                                # (B, U)
    outer = np.einsum("bu,uc,uk->bck", w, counts, counts)
    diag = w @ counts                                           # (B, V)
    return outer - np.einsum("bc,ck->bck", diag, np.eye(counts.shape[1]))


def _differences(values: np.ndarray, n_c: np.ndarray, level: str) -> np.ndarray:
    """Squared differences :math:`\\delta^2_{ck}` between the values (Krippendorff 2011);
    the ordinal one depends on the marginal counts ``n_c`` (a leading resample axis
    allowed)."""
    c, k = values[:, None], values[None, :]
    if level == "nominal":
        return (c != k).astype(np.float64)
    if level == "interval":
        return (c - k) ** 2
    if level == "ratio":
        with np.errstate(invalid="ignore", divide="ignore"):
            d = ((c - k) / (c + k)) ** 2
        return np.nan_to_num(d, nan=0.0)                        # 0 and 0: no difference
    # ordinal: (sum of n_g for g from c to k) - (n_c + n_k) / 2, squared
    cum = np.cumsum(n_c, axis=-1)
    lo = np.minimum(np.arange(values.size)[:, None], np.arange(values.size)[None, :])
    hi = np.maximum(np.arange(values.size)[:, None], np.arange(values.size)[None, :])
    between = cum[..., hi] - cum[..., lo] + n_c[..., lo]        # sum of n_g, g = lo..hi
    return (between - (n_c[..., :, None] + n_c[..., None, :]) / 2.0) ** 2


def _alpha_from(o: np.ndarray, values: np.ndarray, level: str) -> np.ndarray:
    """α from coincidence matrices (a leading resample axis allowed): 1 - (n - 1)
    sum(o delta) / sum(n_c n_k delta); NaN where the expected disagreement is 0."""
    n_c = o.sum(axis=-1)
    n = n_c.sum(axis=-1)
    delta = _differences(values, n_c, level)
    observed = (o * delta).sum(axis=(-2, -1))
    expected = (n_c[..., :, None] * n_c[..., None, :] * delta).sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(expected > 0, 1.0 - (n - 1) * observed / expected, np.nan)


def krippendorff_alpha(data: ArrayLike, *, level: str = "ordinal", n_resamples: int = 0,
                       seed: int = 0) -> dict[str, Any]:
    r"""Krippendorff's α of a coders x units reliability matrix (NaN: a coder gave no value).

    .. math:: \alpha = 1 - (n - 1)\,
              \frac{\sum_c \sum_k o_{ck}\,\delta^2_{ck}}{\sum_c \sum_k n_c n_k\,\delta^2_{ck}}

    with the coincidence matrix :math:`o_{ck}` over the units with at least two values,
    :math:`n_c = \sum_k o_{ck}`, :math:`n = \sum_c n_c`, and :math:`\delta^2_{ck}`: nominal
    :math:`[c \ne k]`; interval :math:`(c - k)^2`; ratio :math:`((c - k)/(c + k))^2`; ordinal
    :math:`(\sum_{g=c}^{k} n_g - (n_c + n_k)/2)^2` (Krippendorff 2011). For reruns of a judge,
    the reruns are the coders and the items the units.

    Parameters
    ----------
    data : array_like, shape (coders, units)
        Numeric values; NaN where missing.
    level : {"nominal", "ordinal", "interval", "ratio"}
    n_resamples : int
        Bootstrap resamples over units for a 95% percentile interval (0: none).
    seed : int

    Returns
    -------
    dict
        ``estimate`` (None when undefined), ``low``, ``high``, ``level``, ``n_units`` (units
        with two values or more), ``n_values`` (their values) and, when undefined or without
        an interval, ``note``.

    Examples
    --------
    >>> round(krippendorff_alpha([[1, 2, 3, 3], [1, 2, 3, 4]], level="interval")["estimate"], 4)
    0.8889
    """
    if level not in LEVELS_OF_MEASUREMENT:
        raise ValueError(f"unknown level of measurement {level!r}; choose from "
                         f"{', '.join(LEVELS_OF_MEASUREMENT)}")
    d = np.asarray(data, dtype=np.float64)
    if d.ndim != 2:
        raise ValueError(f"a reliability matrix is coders x units, got shape {d.shape}")
    pairable = (~np.isnan(d)).sum(axis=0) >= 2
    d = d[:, pairable]
    values = np.unique(d[~np.isnan(d)])
    out: dict[str, Any] = {"estimate": None, "low": None, "high": None, "level": level,
                           "n_units": int(d.shape[1]), "n_values": int((~np.isnan(d)).sum())}
    if d.shape[1] == 0:
        out["note"] = "no unit has two values: nothing to compare"
        return out
    if level == "ratio" and (values < 0).any():
        raise ValueError("ratio alpha needs non-negative values")
    counts = np.stack([(d == v).sum(axis=0) for v in values], axis=1).astype(np.float64)
    alpha = float(_alpha_from(_coincidences(counts), values, level))
    if math.isnan(alpha):
        out["note"] = (f"every value is {values[0]:g}: no variation, so the agreement expected "
                       "by chance is perfect too and alpha is undefined")
        return out
    out["estimate"] = alpha
    from ..metrics.bootstrap import MIN_DISTINCT_RESAMPLES, possible_resamples

    if n_resamples and possible_resamples(counts.shape[0]) < MIN_DISTINCT_RESAMPLES:
        # bootstrap_ci's rule: two or three units have at most 10 distinct resamples, too
        # few atoms for a 95% interval (the tutorial's three items gave [-0.67, 0.20])
        out["note"] = (f"{counts.shape[0]} units allow only "
                       f"{possible_resamples(counts.shape[0])} distinct resamples (fewer than "
                       f"{MIN_DISTINCT_RESAMPLES}): no interval")
    elif n_resamples:
        from ..metrics import percentile_interval, resample_counts

        rng = np.random.default_rng(seed)
        reps = []
        for block in resample_counts(counts.shape[0], n_resamples, rng, scheme="multinomial",
                                     block=200):
            reps.append(_alpha_from(_coincidences(counts, block.astype(np.float64)), values,
                                    level))
        reps = np.concatenate(reps)
        low, high, _ = percentile_interval(reps, 0.95)
        finite = reps[np.isfinite(reps)]
        if finite.size and np.ptp(finite) == 0:
            out["note"] = (f"every resample gives alpha {finite[0]:.3g}: a bootstrap over "
                           "units shows nothing, so no interval")
        elif math.isfinite(low) and math.isfinite(high):
            out.update(low=float(low), high=float(high))
        else:
            out["note"] = "too few resamples with variation for an interval"
    return out


# ------------------------------------------------------------------ agreement as a confidence
def score_confidence(probs: ArrayLike, answer: ArrayLike, scale: ArrayLike,
                     tolerance: float) -> np.ndarray:
    """The judge's own probability that the right score lies within ``tolerance`` of
    ``answer``: the mass of its score distribution (rows of ``probs`` over ``scale``, each
    summing to 1) on :math:`|s - a| \\le t` — the score-token confidence that matches the
    decision "the answer is within t of the human's" (the one formula of the judge suites'
    confidence, :func:`confeval.suites._judge.judge_confidence`, too).

    >>> score_confidence([[0.1, 0.6, 0.3]], [2], [1, 2, 3], 0).round(3).tolist()
    [0.6]
    """
    p = np.asarray(probs, dtype=np.float64)
    s = np.asarray(scale, dtype=np.float64)
    near = np.abs(s[None, :] - np.asarray(answer, dtype=np.float64)[:, None]) <= tolerance + _TIE
    return (p * near).sum(axis=1)


def rerun_confidence(scores: ArrayLike, human: ArrayLike, *, tolerance: float = 0.0,
                     probs: ArrayLike | None = None, scale: ArrayLike | None = None
                     ) -> dict[str, Any]:
    """Rerun agreement as a confidence in the judge's answer, with the correctness it is
    scored against: the answer is right when it is within ``tolerance`` of the human score.

    Parameters
    ----------
    scores : array_like, shape (n_items, k)
        The reruns (NaN: no score).
    human : array_like, shape (n_items,)
        The human score (NaN: not labelled; such items are left out).
    tolerance : float
    probs : array_like, shape (n_items, K), optional
        The judge's score distribution over ``scale`` (e.g. its score-token probabilities,
        averaged over the reruns that have them): adds its own confidence in the same answer
        (:func:`score_confidence`), scored on the same items.
    scale : array_like, shape (K,), optional
        The score each column of ``probs`` stands for.

    Returns
    -------
    dict
        ``labelled`` (mask of the items with a human score), ``answer``, ``correct`` (0/1),
        ``confidences``: {``rerun_agreement``: array, [``score_token``: array]} — every array
        over the labelled items. Score them with :func:`confeval.evaluate.evaluate_confidence`
        (calibration, AUROC, AUARC), as any confidence.
    """
    m = _matrix(scores)
    y = np.asarray(human, dtype=np.float64)
    if y.shape != (m.shape[0],):
        raise ValueError(f"{y.size} human scores for {m.shape[0]} items")
    answer, agree = judge_answers(m, tolerance)
    k = (~np.isnan(m)).sum(axis=1)
    labelled = ~np.isnan(y)
    correct = (np.abs(answer - y) <= tolerance + _TIE).astype(np.float64)
    confidences = {"rerun_agreement": (agree / k)[labelled]}
    if probs is not None:
        if scale is None:
            raise ValueError("probs need their scale")
        p = np.asarray(probs, dtype=np.float64)
        p = p / p.sum(axis=1, keepdims=True)
        confidences["score_token"] = score_confidence(p, answer, scale, tolerance)[labelled]
    return {"labelled": labelled, "answer": answer[labelled], "correct": correct[labelled],
            "confidences": confidences}

