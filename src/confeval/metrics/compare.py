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
* :class:`PairedMetric` / :func:`compare_models` — the whole comparison of several models on
  several metrics, each metric a function of per-item arrays: what every suite's comparison
  (``confeval compare --suite ...``) hands over.

statsmodels is imported by the two functions that use it (it takes a second to load).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
from numpy.typing import ArrayLike

from .._numeric import mid_ranks
from .bootstrap import (
    _MAX_BLOCK_ELEMENTS,
    BATCHED,
    _cluster_index_sets,
    _row_blocks,
    percentile_interval,
)
from .selective import UndefinedMetricWarning

__all__ = ["TESTS", "PairedMetric", "compare_metric", "compare_models", "delong_covariance",
           "delong_test", "holm", "mcnemar_exact", "paired_bootstrap_p", "paired_replicates",
           "rank_intervals", "significance_groups"]

TESTS = ("mcnemar_exact", "delong", "paired_bootstrap")
"""The pairwise tests: exact McNemar (0/1 outcomes), DeLong (AUROC on shared labels), the paired
bootstrap over items (every other metric, and where an exact test's condition fails)."""


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
                      n_resamples: int = 1000, seed: int | np.random.Generator = 0,
                      batched: Callable | None = None, clusters: ArrayLike | None = None,
                      **kwargs) -> np.ndarray:
    """``metric`` of every model on the same bootstrap resamples of the items: (R, k).

    ``per_model[k]`` holds model k's arrays (e.g. confidence, correct), all over the same n
    items in the same order; resample r draws one set of item indices for all models, so
    differences and ranks are paired. A metric with a batched form (:data:`.bootstrap.BATCHED`)
    runs on blocks of resamples at once (``batched``: another row-wise form). With
    ``clusters`` (one label per item, e.g. the question of each (question, option) row) whole
    clusters are drawn with replacement, the same for every model (the cluster bootstrap of
    :func:`.bootstrap.bootstrap_ci`, same random stream); clusters of one size still run in
    blocks."""
    n = len(per_model[0][0])
    if any(len(a) != n for arrays in per_model for a in arrays):
        raise ValueError("every model's arrays must cover the same items")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    batched = batched or BATCHED.get(metric)
    per_model = [[np.asarray(a) for a in arrays] for arrays in per_model]
    blocks = _row_blocks(n, n_resamples, rng) if clusters is None else \
        _cluster_blocks(np.asarray(clusters), n, n_resamples, rng)
    parts = []
    for idx in blocks:
        if batched is not None and isinstance(idx, np.ndarray):
            parts.append(np.stack([batched(*[a[idx] for a in arrays], **kwargs)
                                   for arrays in per_model], axis=1))
        else:
            parts.append(np.array([[metric(*[a[row] for a in arrays], **kwargs)
                                    for arrays in per_model] for row in idx]))
    return np.concatenate(parts).astype(np.float64)


def _cluster_blocks(clusters: np.ndarray, n: int, n_resamples: int,
                    rng: np.random.Generator):
    """Row indices of cluster resamples: (b, n) blocks when every cluster has one size (every
    resample then has n rows), else one resample (a list of one index array) at a time."""
    if clusters.shape != (n,):
        raise ValueError("clusters must have one entry per item")
    sets = _cluster_index_sets(clusters, n_resamples, rng)
    if np.unique(np.unique(clusters, return_counts=True)[1]).size > 1:
        for idx in sets:
            yield [idx]
        return
    block = max(1, min(n_resamples, _MAX_BLOCK_ELEMENTS // max(n, 1)))
    rows: list[np.ndarray] = []
    for idx in sets:
        rows.append(idx)
        if len(rows) == block:
            yield np.stack(rows)
            rows = []
    if rows:
        yield np.stack(rows)


def paired_bootstrap_p(difference: float, replicates: np.ndarray) -> float:
    """Two-sided p-value of a paired difference by the normal approximation with its paired
    bootstrap standard error: 2 Phi(-|d| / se*), se* the standard deviation (ddof = 1) of the
    defined replicates (Efron and Tibshirani 1993, sec. 12.5 and 16.4).

    Why not the percentile p-value (:func:`.bootstrap.bootstrap_p_value`): R resamples cannot
    give a p-value below 2 / (R + 1), and Holm over the k(k - 1)/2 pairs of k models multiplies
    the smallest by their number: with 1,000 resamples and 26 models (325 pairs) no pair could
    ever be separated. A difference with no bootstrap variance is 0 (p = 1) or certain (p = 0).
    """
    good = np.asarray(replicates, dtype=np.float64)
    good = good[np.isfinite(good)]
    if good.size < 2 or not np.isfinite(difference):
        return float("nan")
    se = float(np.std(good, ddof=1))
    if not se > 0:
        return 1.0 if difference == 0 else 0.0
    return float(math.erfc(abs(difference) / se / math.sqrt(2)))


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
    position = {name: i for i, name in enumerate(order)}
    # groups as bit masks over ``order`` (bit i: the i-th best model): subset tests are one
    # AND, which keeps 26 models with hundreds of separated pairs fast
    groups = [(1 << len(order)) - 1]
    for pair in sorted(separated, key=lambda p: sorted(position[x] for x in p)):
        a, b = (1 << position[x] for x in pair)
        split: set[int] = set()
        for g in groups:
            if g & a and g & b:
                split.update((g & ~a, g & ~b))
            else:
                split.add(g)
        split.discard(0)
        # absorb: drop a group inside another (larger groups first, so a kept group is only
        # compared with kept groups that could contain it)
        kept: list[int] = []
        for g in sorted(split, key=lambda m: -m.bit_count()):
            if not any(g & h == g for h in kept):
                kept.append(g)
        groups = kept
    members = [[i for i in range(len(order)) if g >> i & 1] for g in groups]
    members.sort()
    letters = _letters(len(members))
    return {name: "".join(letters[k] for k, m in enumerate(members) if position[name] in m)
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
    Models are listed best first; tied values share the best rank (competition ranking)."""
    k = len(names)
    sign = 1.0 if higher_is_better else -1.0
    order = sorted(range(k), key=lambda j: (-sign * values[j] if np.isfinite(values[j])
                                            else np.inf, j))
    ranked = [names[j] for j in order]
    # competition ranking: tied values share the best rank ("1, 1, 3"); NaN ranks last
    key = [-sign * v if np.isfinite(v) else np.inf for v in values]
    rank_of = {names[j]: 1 + sum(key[i] < key[j] for i in range(k)) for j in range(k)}
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
        p, test = (pair_tests or {}).get((a, b)) or (
            paired_bootstrap_p(values[i] - values[j], diff), "paired_bootstrap")
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


@dataclass(frozen=True)
class PairedMetric:
    """One metric of several models over the same items, as a function of per-item arrays.

    ``arrays[name]`` holds model ``name``'s arrays (all models over the same n items, in one
    order); the model's value is ``fn(*arrays[name], **kwargs)`` unless ``values`` gives the
    value its suite reports (the same number, computed by the suite). ``test`` names the
    pairwise test: ``"mcnemar_exact"`` (the first array is each item's 0/1 outcome),
    ``"delong"`` (the arrays are (score, 0/1 label)) or ``"paired_bootstrap"``; an exact test
    whose condition fails for a pair (a non-binary outcome, other labels) falls back to the
    paired bootstrap. ``batched`` is a row-wise form of ``fn`` for blocks of resamples (default:
    :data:`.bootstrap.BATCHED`). ``clusters`` labels each item's cluster (the same for
    every model): resamples then draw whole clusters (:func:`paired_replicates`), and the
    exact tests, which assume independent items, give way to the paired bootstrap.
    ``replicates[name]`` are the model's values on resamples a suite drew itself (the same
    resamples for every model; the steps suite's item counts): then ``fn`` is not called and
    ``values`` must be given."""

    fn: Callable
    arrays: Mapping[str, Sequence[np.ndarray]]
    higher_is_better: bool
    kwargs: Mapping = field(default_factory=dict)
    test: str = "paired_bootstrap"
    values: Mapping[str, float] | None = None
    batched: Callable | None = None
    clusters: np.ndarray | None = None
    replicates: Mapping[str, np.ndarray] | None = None

    def __post_init__(self) -> None:
        if self.replicates is not None and self.values is None:
            raise ValueError("precomputed replicates need their values")
        if self.test not in TESTS:
            raise ValueError(f"unknown test {self.test!r}; choose from {', '.join(TESTS)}")

    def value(self, name: str) -> float:
        if self.values is not None:
            return float(self.values[name])
        return float(self.fn(*self.arrays[name], **self.kwargs))


def compare_models(metrics: Mapping[str, PairedMetric], *, n_resamples: int = 1000,
                   seed: int = 0, alpha: float = 0.05, confidence_level: float = 0.95
                   ) -> dict[str, dict]:
    """Every metric's comparison table (:func:`compare_metric`): each model's value, interval,
    rank and rank interval from ``n_resamples`` paired bootstrap resamples of the items (one
    random stream per metric, from ``seed``), every pair's difference, test and Holm-adjusted
    p-value, and group letters at ``alpha``. Metrics whose value is undefined for some model
    (NaN) keep it, ranked last."""
    out = {}
    for metric_name, metric in metrics.items():
        names = list(metric.arrays)
        if len(names) < 2:
            raise ValueError(f"{metric_name}: compare needs at least two models")
        values = [metric.value(name) for name in names]
        # a resample where a metric is undefined (one class only) is NaN: the replicate says so
        if metric.replicates is not None:
            reps = np.column_stack([np.asarray(metric.replicates[n], dtype=np.float64)
                                    for n in names])
        else:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", UndefinedMetricWarning)
                reps = paired_replicates(metric.fn, [metric.arrays[n] for n in names],
                                         n_resamples=n_resamples, seed=seed,
                                         batched=metric.batched, clusters=metric.clusters,
                                         **metric.kwargs)
        out[metric_name] = compare_metric(reps, values, names,
                                          higher_is_better=metric.higher_is_better,
                                          pair_tests=exact_pair_tests(metric, names),
                                          alpha=alpha, confidence_level=confidence_level)
    return out


def exact_pair_tests(metric: PairedMetric, names: Sequence[str]) -> dict:
    """``{(a, b): (p, test)}`` for the pairs ``metric.test`` applies to (both ways round)."""
    tests: dict = {}
    if metric.clusters is not None or metric.replicates is not None:
        return tests
    if metric.test == "mcnemar_exact":
        binary = {n: np.isin(metric.arrays[n][0], (0, 1)).all() for n in names}
        for a, b in all_pairs(names):
            if binary[a] and binary[b]:
                p = mcnemar_exact(metric.arrays[a][0], metric.arrays[b][0])
                tests[(a, b)] = tests[(b, a)] = (p, "mcnemar_exact")
    elif metric.test == "delong":
        # models sharing their labels: one covariance matrix for all of them (one sort each)
        by_labels: dict[bytes, list[str]] = {}
        for n in names:
            labels = np.asarray(metric.arrays[n][1], dtype=np.float64)
            by_labels.setdefault(labels.tobytes(), []).append(n)
        for members in by_labels.values():
            if len(members) < 2:
                continue
            try:
                auc, cov = delong_covariance(np.vstack([metric.arrays[n][0] for n in members]),
                                             metric.arrays[members[0]][1])
            except ValueError:   # fewer than two items of a class, non-binary: no test
                for a, b in all_pairs(members):
                    tests[(a, b)] = tests[(b, a)] = (float("nan"), "delong")
                continue
            for i, j in combinations(range(len(members)), 2):
                p = _delong_p(auc, cov, i, j)
                tests[(members[i], members[j])] = tests[(members[j], members[i])] = (p,
                                                                                      "delong")
    return tests
