"""Comparing models (judges, measures) on the same items: paired tests, multiplicity
adjustment, rank intervals and significance groups — the statistics of ``confeval compare``.

* :func:`delong_covariance` / :func:`delong_test` — DeLong, DeLong and Clarke-Pearson (1988)
  for correlated ROC curves, by the fast algorithm of Sun and Xu (2014): mid-ranks within the
  positives, the negatives and all items give every model's structural components in
  O(k n log n); ties count one half, as in :func:`~.selective.auroc`.
* :func:`mcnemar_exact` — the exact McNemar test of two models' paired 0/1 outcomes
  (statsmodels' ``mcnemar(exact=True)``: the binomial test on the discordant pairs).
* :func:`holm` — Holm's step-down adjustment (statsmodels' ``multipletests``).
* :func:`paired_replicates` — a metric of every model on the same bootstrap resamples of the
  items, the basis of paired intervals, p-values and rank intervals.
* :func:`significance_groups` — compact letters: two models share a letter exactly when no
  adjusted test separates them (Piepho's insert-absorb algorithm, 2004).

statsmodels is imported by the two functions that use it (it takes a second to load).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from itertools import combinations

import numpy as np
from numpy.typing import ArrayLike

from .._numeric import mid_ranks
from .bootstrap import BATCHED, _row_blocks, percentile_interval

__all__ = ["delong_covariance", "delong_test", "holm", "mcnemar_exact", "paired_p_value",
           "paired_replicates", "rank_intervals", "significance_groups"]


def delong_covariance(scores: ArrayLike, correct: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """(AUROC of each model, their k x k covariance matrix) by DeLong's method: ``scores`` is
    (k, n), one row per model on the same n items, ``correct`` the items' 0/1 labels.

    Sun and Xu (2014): with m positives and n0 negatives, and mid-ranks tx (within the
    positives), ty (within the negatives) and tz (among all items), AUC = (sum_i tz_i -
    m(m+1)/2) / (m n0); the structural components are V10_i = (tz_i - tx_i) / n0 for each
    positive and V01_j = 1 - (tz_j - ty_j) / m for each negative, and
    Cov = cov(V10) / m + cov(V01) / n0 (sample covariances, ddof = 1).

    References
    ----------
    DeLong, DeLong and Clarke-Pearson (1988), "Comparing the areas under two or more
    correlated receiver operating characteristic curves: a nonparametric approach",
    Biometrics 44. Sun and Xu (2014), "Fast implementation of DeLong's algorithm for comparing
    the areas under correlated receiver operating characteristic curves", IEEE Signal
    Processing Letters 21.
    """
    s = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    y = np.asarray(correct, dtype=np.float64)
    if s.shape[1] != y.size:
        raise ValueError(f"scores have {s.shape[1]} items, correct has {y.size}")
    if not np.isin(y, (0.0, 1.0)).all():
        raise ValueError("correct must be 0/1 for DeLong's test")
    pos, neg = s[:, y == 1], s[:, y == 0]
    m, n0 = pos.shape[1], neg.shape[1]
    if m < 2 or n0 < 2:
        raise ValueError("DeLong's test needs at least two items of each class")
    tx, ty = mid_ranks(pos, axis=1), mid_ranks(neg, axis=1)
    tz = mid_ranks(np.concatenate([pos, neg], axis=1), axis=1)
    auc = (tz[:, :m].sum(axis=1) - m * (m + 1) / 2) / (m * n0)
    v10 = (tz[:, :m] - tx) / n0
    v01 = 1.0 - (tz[:, m:] - ty) / m
    cov = np.atleast_2d(np.cov(v10)) / m + np.atleast_2d(np.cov(v01)) / n0
    return auc, cov


def delong_test(scores_a: ArrayLike, scores_b: ArrayLike, correct: ArrayLike
                ) -> tuple[float, float]:
    """(AUROC_a - AUROC_b, two-sided p-value) of two models scored on the same items; p = 1
    when the difference has no variance (the same ranking)."""
    auc, cov = delong_covariance(np.vstack([scores_a, scores_b]), correct)
    return float(auc[0] - auc[1]), _delong_p(auc, cov, 0, 1)


def _delong_p(auc: np.ndarray, cov: np.ndarray, a: int, b: int) -> float:
    var = cov[a, a] + cov[b, b] - 2 * cov[a, b]
    diff = auc[a] - auc[b]
    if not var > 1e-300:
        return 1.0 if abs(diff) < 1e-15 else 0.0
    return float(math.erfc(abs(diff) / math.sqrt(var) / math.sqrt(2)))


def mcnemar_exact(correct_a: ArrayLike, correct_b: ArrayLike) -> float:
    """Exact McNemar p-value of two models' 0/1 outcomes on the same items (statsmodels)."""
    from statsmodels.stats.contingency_tables import mcnemar

    a = np.asarray(correct_a, dtype=bool)
    b = np.asarray(correct_b, dtype=bool)
    table = [[int(np.sum(a & b)), int(np.sum(a & ~b))],
             [int(np.sum(~a & b)), int(np.sum(~a & ~b))]]
    return float(mcnemar(table, exact=True).pvalue)


def holm(p_values: ArrayLike) -> np.ndarray:
    """Holm-adjusted p-values (statsmodels' ``multipletests(method="holm")``); NaN stays NaN."""
    from statsmodels.stats.multitest import multipletests

    p = np.asarray(p_values, dtype=np.float64)
    out = np.full(p.shape, np.nan)
    ok = np.isfinite(p)
    if ok.any():
        out[ok] = multipletests(p[ok], method="holm")[1]
    return out


def paired_replicates(metric: Callable, per_model: Sequence[Sequence[np.ndarray]], *,
                      n_resamples: int = 1000, seed: int = 0, **kwargs) -> np.ndarray:
    """``metric`` of every model on the same bootstrap resamples of the items: (R, k).

    ``per_model[k]`` holds model k's arrays (e.g. confidence, correct), all over the same n
    items in the same order; resample r draws one set of item indices for all models, so
    differences and ranks are paired. A metric with a batched form (:data:`.bootstrap.BATCHED`)
    runs on blocks of resamples at once."""
    n = len(per_model[0][0])
    if any(len(a) != n for arrays in per_model for a in arrays):
        raise ValueError("every model's arrays must cover the same items")
    rng = np.random.default_rng(seed)
    batched = BATCHED.get(metric)
    parts = []
    for idx in _row_blocks(n, n_resamples, rng):
        if batched is not None:
            parts.append(np.stack([batched(*[np.asarray(a)[idx] for a in arrays], **kwargs)
                                   for arrays in per_model], axis=1))
        else:
            parts.append(np.array([[metric(*[np.asarray(a)[row] for a in arrays], **kwargs)
                                    for arrays in per_model] for row in idx]))
    return np.concatenate(parts).astype(np.float64)


def paired_p_value(differences: np.ndarray) -> float:
    """Two-sided bootstrap p-value of a paired difference: 2 min(P(d <= 0), P(d >= 0)),
    capped at 1, over the defined replicates (as :func:`.bootstrap.paired_bootstrap`)."""
    good = differences[np.isfinite(differences)]
    if not good.size:
        return float("nan")
    return float(min(1.0, 2 * min(np.mean(good <= 0), np.mean(good >= 0))))


def rank_intervals(replicates: np.ndarray, higher_is_better: bool,
                   confidence_level: float = 0.95) -> list[tuple[float, float]]:
    """Each model's rank interval from paired replicates (R, k): the models ranked in every
    resample (1 = best, ties sharing the mean rank), then the percentile interval of each
    model's ranks."""
    values = replicates if higher_is_better else -replicates
    ranks = replicates.shape[1] + 1 - mid_ranks(np.nan_to_num(values, nan=-np.inf), axis=1)
    return [percentile_interval(ranks[:, j], confidence_level)[:2]
            for j in range(replicates.shape[1])]


def significance_groups(order: Sequence[str], separated: set[frozenset[str]]) -> dict[str, str]:
    """Compact letters for models listed best first: ``separated`` holds the pairs that an
    adjusted test separates. Two models share a letter exactly when they are not separated
    (Piepho 2004, insert-absorb: start from one group of all models; for each separated pair,
    split every group holding both into the group without one and the group without the
    other; drop groups inside others). Letters go to groups in the order of their best model.

    Examples
    --------
    >>> significance_groups(["A", "B", "C"], {frozenset({"A", "C"})})
    {'A': 'a', 'B': 'ab', 'C': 'b'}
    """
    groups: list[frozenset[str]] = [frozenset(order)]
    for pair in separated:
        a, b = tuple(pair)
        split = []
        for g in groups:
            split.extend([g - {a}, g - {b}] if a in g and b in g else [g])
        groups = [g for g in split if g and not any(g < h for h in split)]
        groups = list(dict.fromkeys(groups))
    position = {name: i for i, name in enumerate(order)}
    groups.sort(key=lambda g: sorted(position[x] for x in g))
    letters = _letters(len(groups))
    return {name: "".join(letters[i] for i, g in enumerate(groups) if name in g)
            for name in order}


def _letters(count: int) -> list[str]:
    out, size = [], 1
    alphabet = "abcdefghijklmnopqrstuvwxyz"
    while len(out) < count:   # a..z, then aa, ab, ...
        out.extend("".join(t) for t in _product(alphabet, size))
        size += 1
    return out[:count]


def _product(alphabet: str, size: int):
    from itertools import product

    return product(alphabet, repeat=size)


def all_pairs(names: Sequence[str]) -> list[tuple[str, str]]:
    """Every unordered pair, in the order of ``names``."""
    return list(combinations(names, 2))


def compare_metric(replicates: np.ndarray, values: Sequence[float], names: Sequence[str], *,
                   higher_is_better: bool, pair_tests: dict | None = None,
                   alpha: float = 0.05, confidence_level: float = 0.95) -> dict:
    """One metric's comparison table: each model's value, percentile interval, rank and rank
    interval (from the paired ``replicates``, (R, k)), every pair's difference with its
    interval and p-value — ``pair_tests[(a, b)] = (p, test name)`` where an exact test applies,
    the paired bootstrap otherwise — Holm-adjusted over the pairs, and the groups at ``alpha``.
    Models are listed best first."""
    k = len(names)
    sign = 1.0 if higher_is_better else -1.0
    order = sorted(range(k), key=lambda j: (-sign * values[j] if np.isfinite(values[j])
                                            else np.inf, j))
    ranked = [names[j] for j in order]
    rank_of = {names[j]: r + 1 for r, j in enumerate(order)}
    intervals = rank_intervals(replicates, higher_is_better, confidence_level)
    models = {}
    for j, name in enumerate(names):
        low, high, _ = percentile_interval(replicates[:, j], confidence_level)
        models[name] = {"value": float(values[j]), "low": low, "high": high,
                        "rank": rank_of[name], "rank_low": float(intervals[j][0]),
                        "rank_high": float(intervals[j][1])}
    pairs = []
    for a, b in all_pairs(ranked):
        i, j = names.index(a), names.index(b)
        diff = replicates[:, i] - replicates[:, j]
        low, high, _ = percentile_interval(diff, confidence_level)
        p, test = (pair_tests or {}).get((a, b)) or (paired_p_value(diff), "paired_bootstrap")
        pairs.append({"a": a, "b": b, "diff": float(values[i] - values[j]), "low": low,
                      "high": high, "p": float(p), "test": test})
    adjusted = holm([pair["p"] for pair in pairs]) if pairs else []
    for pair, q in zip(pairs, adjusted):
        pair["p_holm"] = float(q)
    separated = {frozenset((pair["a"], pair["b"])) for pair in pairs
                 if np.isfinite(pair["p_holm"]) and pair["p_holm"] < alpha}
    groups = significance_groups(ranked, separated)
    for name in names:
        models[name]["group"] = groups[name]
    return {"higher_is_better": higher_is_better, "ranked": ranked, "models": models,
            "pairs": pairs}
