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
* :func:`paired_bootstrap_test` — the paired bootstrap's p-value, or why there is none: a
  bootstrap of fewer than :data:`MIN_DISTINCT_RESAMPLES` distinct resamples, or a difference
  with no variance, says nothing, and is never reported as p = 0 (:data:`UNTESTED`).
* :func:`significance_groups` — compact letters: two models share a letter exactly when no
  adjusted test separates them: every maximal group, as Piepho's (2004) insert-absorb without
  his sweeping step (R's multcompView ``multcompLetters``) finds them, computed model by model
  in polynomial time per group (:func:`maximal_groups`); where there are more than
  :data:`MAX_GROUPS`, the fewer groups of a clique cover (:func:`covering_groups`).
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

from .._numeric import mid_ranks, rank_bounds
from .._text import display_name
from .bootstrap import (
    _MAX_BLOCK_ELEMENTS,
    BATCHED,
    MIN_DISTINCT_RESAMPLES,
    _cluster_index_sets,
    _row_blocks,
    percentile_interval,
    possible_resamples,
)
from .selective import UndefinedMetricWarning

__all__ = ["MAX_GROUPS", "MIN_DISTINCT_RESAMPLES", "TESTS", "UNTESTED", "PairedMetric",
           "TooManyGroups", "compare_metric", "compare_models", "covering_groups",
           "delong_covariance", "delong_test", "direction_arrow", "direction_text", "holm",
           "maximal_groups", "mcnemar_exact",
           "paired_bootstrap_p", "paired_bootstrap_test", "paired_replicates",
           "possible_resamples", "rank_intervals", "significance_groups"]

TESTS = ("mcnemar_exact", "delong", "paired_bootstrap")
"""The pairwise tests: exact McNemar (0/1 outcomes), DeLong (AUROC on shared labels), the paired
bootstrap over items (every other metric, and where an exact test's condition fails)."""

UNTESTED = {
    "too_few_resamples": f"the bootstrap has fewer than {MIN_DISTINCT_RESAMPLES} distinct "
                         "resamples",
    "too_few_defined": f"fewer than {MIN_DISTINCT_RESAMPLES} resamples where the difference "
                       "is defined",
    "no_variance": "the difference is the same in every resample (no variance; the normal "
                   "test would give p = 0 from no evidence)",
    "undefined": "the difference is undefined (a model's metric is undefined on these items, "
                 "or DeLong's test lacks two items of each class)",
}
"""Why a pair has no p-value (its ``"untested"``): such a pair's ``p`` and ``p_holm`` are null,
Holm adjusts the other pairs only, and it separates no models in the letters."""


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
    """(AUROC_a - AUROC_b, two-sided p-value) of two models scored on the same items. With no
    variance of the difference, p = 1 where the AUROCs are equal (the same ranking) and NaN
    where they differ (the normal test would give p = 0 from no evidence: e.g. AUROC 1 against
    0 on two items of each class)."""
    auc, cov = delong_covariance(np.vstack([scores_a, scores_b]), correct)
    return float(auc[0] - auc[1]), _delong_p(auc, cov, 0, 1)[0]


def _delong_p(auc: np.ndarray, cov: np.ndarray, a: int, b: int) -> tuple[float, str | None]:
    """(p, why untested) of models a and b from DeLong's AUROCs and covariance."""
    var = cov[a, a] + cov[b, b] - 2 * cov[a, b]
    diff = auc[a] - auc[b]
    # relative to the variances: two perfectly correlated components leave rounding noise
    if not var > max(1e-300, 1e-12 * (cov[a, a] + cov[b, b])):
        return (1.0, None) if abs(diff) < 1e-15 else (float("nan"), "no_variance")
    return float(math.erfc(abs(diff) / math.sqrt(var) / math.sqrt(2))), None


def mcnemar_exact(correct_a: ArrayLike, correct_b: ArrayLike) -> float:
    """Exact McNemar p-value of two models' 0/1 outcomes on the same items (statsmodels).

    The test conditions on the d discordant items (one model right, the other wrong): under
    the null each is either way with probability 1/2, so p = min(1, 2 P(Binomial(d, 1/2) <=
    the smaller count)). With no discordant item (d = 0) that null is a point mass at 0, which
    the data equal: p = 1 exactly, not undefined (the models are right on the same items;
    there is no evidence of a difference). It stays exact on any number of items: it cannot
    go below 0.05 with fewer than six discordant items (2 / 2^5 = 0.0625)."""
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


def paired_bootstrap_test(difference: float, replicates: np.ndarray, *,
                          distinct: int | None = None) -> tuple[float, str | None]:
    """(two-sided p-value, None) of a paired difference by the normal approximation with its
    paired bootstrap standard error — 2 Phi(-|d| / se*), se* the standard deviation (ddof = 1)
    of the defined replicates (Efron and Tibshirani 1993, sec. 12.5 and 16.4) — or (NaN,
    why) where the bootstrap holds no information (a key of :data:`UNTESTED`):

    * ``too_few_resamples``: ``distinct``, the most distinct resamples the bootstrap could
      draw (:func:`possible_resamples` of the items, at most the resamples drawn), is below
      :data:`MIN_DISTINCT_RESAMPLES`;
    * ``too_few_defined``: fewer than that many replicates are defined (finite);
    * ``no_variance``: the replicates do not vary (se* = 0, to rounding) and the difference
      is not 0: the normal test would give p = 0 from no evidence. A difference of 0 in every
      resample and on the data (the same model twice) is p = 1, as exact tests give it (no
      discordant item in McNemar's, every sign flip equal in a permutation test);
    * ``undefined``: the difference, or every replicate, is undefined.

    Why not the percentile p-value (:func:`.bootstrap.bootstrap_p_value`): R resamples cannot
    give a p-value below 2 / (R + 1), and Holm over the k(k - 1)/2 pairs of k models multiplies
    the smallest by their number: with 1,000 resamples and 26 models (325 pairs) no pair could
    ever be separated.
    """
    good = np.asarray(replicates, dtype=np.float64)
    good = good[np.isfinite(good)]
    if good.size == 0:
        return float("nan"), "undefined"
    se = float(np.std(good, ddof=1)) if good.size > 1 else 0.0
    return _normal_p(difference, se, float(np.max(np.abs(good))), good.size, distinct)


def _normal_p(difference: float, se: float, largest: float, defined: int,
              distinct: int | None) -> tuple[float, str | None]:
    """:func:`paired_bootstrap_test` from the replicates' standard error ``se``, largest
    magnitude and count ``defined`` (at least one)."""
    if not np.isfinite(difference):
        return float("nan"), "undefined"
    if distinct is not None and distinct < MIN_DISTINCT_RESAMPLES:
        return float("nan"), "too_few_resamples"
    if defined < MIN_DISTINCT_RESAMPLES:
        return float("nan"), "too_few_defined"
    scale = max(abs(difference), largest)
    if not se > 1e-12 * scale:   # constant up to rounding (or all zero)
        if scale <= 1e-15:
            return 1.0, None
        return float("nan"), "no_variance"
    return float(math.erfc(abs(difference) / se / math.sqrt(2))), None


def paired_bootstrap_p(difference: float, replicates: np.ndarray) -> float:
    """The p-value of :func:`paired_bootstrap_test` (NaN where it reports none): the normal
    approximation with the paired bootstrap standard error."""
    return paired_bootstrap_test(difference, replicates)[0]


def rank_intervals(replicates: np.ndarray, higher_is_better: bool,
                   confidence_level: float = 0.95) -> list[tuple[int, int]]:
    """Each model's rank interval, whole ranks, from paired replicates (R, k): the models
    ranked in every resample (1 = best; a resample where a model's metric is undefined ranks
    it last), then, with tail = (1 - ``confidence_level``) / 2,

    * low: the order statistic of the model's *best* ranks (ties broken in its favour: one
      plus the models strictly better) at quantile tail, never interpolated — numpy's
      ``quantile(..., method="lower")``, the element of 0-based index floor(tail (R - 1));
    * high: the order statistic of its *worst* ranks (ties broken against it: the models
      better or equal) at quantile 1 - tail — ``method="higher"``, index
      ceil((1 - tail) (R - 1)).

    At most floor(tail (R - 1)) < tail R resamples rank the model better than low and at most
    as many worse than high, whichever way their ties break: the interval holds the model's
    rank in at least ``confidence_level`` of the resamples. Ties count both ways, so two
    models equal in every resample both get [1, 2].

    Examples
    --------
    >>> reps = np.array([[0.9, 0.5, 0.1], [0.5, 0.9, 0.1], [0.5, 0.5, 0.1]])
    >>> rank_intervals(reps, higher_is_better=True, confidence_level=0.5)
    [(1, 2), (1, 2), (3, 3)]
    """
    if not 0 < confidence_level < 1:
        raise ValueError("confidence_level must be in (0, 1)")
    reps = np.asarray(replicates, dtype=np.float64)
    keys = -reps if higher_is_better else reps   # smaller is better; NaN sorts last
    best, worst = rank_bounds(keys, axis=1)
    tail = (1 - confidence_level) / 2
    low = np.quantile(best, tail, axis=0, method="lower")
    high = np.quantile(worst, 1 - tail, axis=0, method="higher")
    return [(int(a), int(b)) for a, b in zip(low, high)]


MAX_GROUPS = 100
"""The most maximal groups :func:`significance_groups` lists (``method="maximal"``). Where
separations follow the rank order (each model separated from those far enough above and below
it) k models make at most k maximal groups; but the tests' own standard errors tangle them, and
a tangled pattern can make up to 3^(k/3) (300 models of 100 items made 17,715). Beyond 100 —
already more letters than a table can show — :func:`compare_metric` gives the smaller cover of
``method="cover"`` instead, and says so."""


class TooManyGroups(ValueError):
    """The separations leave more maximal groups than asked for (:data:`MAX_GROUPS`)."""


def significance_groups(order: Sequence[str], separated: set[frozenset[str]], *,
                        method: str = "maximal", max_groups: int = MAX_GROUPS
                        ) -> dict[str, str]:
    """Compact letters for models listed best first: ``separated`` holds the pairs that an
    adjusted test separates. Two models share a letter exactly when they are not separated.

    ``method="maximal"``: Piepho's (2004) insert-absorb letters without his sweeping step, as
    R's multcompView ``multcompLetters`` computes them — start from one group of all models;
    for each separated pair split every group holding both into the group without one and the
    group without the other; drop groups inside others. What that leaves is every maximal set
    of models no test separates (the maximal cliques of the "not separated" graph), which
    :func:`maximal_groups` finds model by model in polynomial time per group (insert-absorb,
    pair by pair, took 15 minutes for 300 models); more than ``max_groups`` of them raise
    :class:`TooManyGroups`. ``method="cover"``: the fewer groups of :func:`covering_groups`
    (polynomial in any case), with the same defining property.

    Letters go to groups in the lexicographic order of their members' positions: a, ...,
    z, aa, ab, ... multcompView's ``sortCols`` also orders its groups by their first member,
    but orders groups with the same first member by one bubble-sort pass over insert-absorb's
    own column order, so where several groups start at one model its letters can be a
    permutation of these: the same groups (its 43 judges of ``USJudgeRatings``: the same 24
    groups, d, e and f named otherwise), the same letters wherever no two groups start at one
    model.

    Examples
    --------
    >>> significance_groups(["A", "B", "C"], {frozenset({"A", "C"})})
    {'A': 'a', 'B': 'ab', 'C': 'b'}
    """
    return _letters_of(order, _group_matrix(order, separated, method, max_groups))


def _group_matrix(order: Sequence[str], separated: set[frozenset[str]], method: str,
                  max_groups: int) -> np.ndarray:
    """The groups of :func:`significance_groups` as a (groups, k) boolean matrix."""
    if method not in ("maximal", "cover"):
        raise ValueError(f"method {method!r}: choose maximal or cover")
    position = {name: i for i, name in enumerate(order)}
    together = np.ones((len(order), len(order)), dtype=bool)
    for pair in separated:
        i, j = (position[x] for x in pair)
        together[i, j] = together[j, i] = False
    if method == "maximal":
        return maximal_groups(together, max_groups=max_groups)
    return covering_groups(together)


def _letters_of(order: Sequence[str], groups: np.ndarray) -> dict[str, str]:
    """Each model's letters: those of the groups (rows, in order) holding it."""
    letters = _letters(len(groups))
    return {name: "".join(letters[g] for g in np.flatnonzero(groups[:, i]))
            for i, name in enumerate(order)}


def _distinct_rows(rows: np.ndarray) -> np.ndarray:
    """The distinct rows of a boolean matrix, in any order (``np.unique(axis=0)`` sorts
    them, which dominated the time of :func:`maximal_groups`; most rows are empty)."""
    filled = rows.any(axis=1)
    first: dict[bytes, int] = {}
    for index, key in zip(np.flatnonzero(filled), np.packbits(rows[filled], axis=1)):
        first.setdefault(key.tobytes(), int(index))
    keep = list(first.values())
    if not filled.all():
        keep.append(int(np.argmin(filled)))   # one empty row
    return rows[keep]


def _in_lexicographic_order(groups: np.ndarray) -> np.ndarray:
    """Groups (rows) sorted by the list of their members' positions."""
    order = sorted(range(len(groups)), key=lambda g: np.flatnonzero(groups[g]).tolist())
    return groups[order]


def covering_groups(together: np.ndarray) -> np.ndarray:
    """Groups of models that are pairwise ``together`` (a symmetric k x k boolean matrix) such
    that every two models together share a group and every model has one — a cover of the
    "not separated" graph's edges by cliques, the problem letter displays are (Gramm et al.
    2007) — in lexicographic order, as a (groups, k) boolean matrix.

    Clique growing, as in Gramm et al.'s heuristic: for each pair not yet sharing a group
    (models in rank order), a group starts from the pair and grows one model at a time, each
    time the model together with all members that shares the most uncovered pairs with them
    (the best ranked among equals); groups inside others are dropped. At most one group per
    pair, each grown in O(k^2): polynomial, and far fewer groups than the maximal ones where
    those explode (159 against more than 17,000 for 300 models of 100 items).

    References
    ----------
    Gramm, Guo, Hüffner, Niedermeier, Piepho and Schmid (2007), "Algorithms for compact letter
    displays: comparison and evaluation", Computational Statistics & Data Analysis 52.
    """
    k = together.shape[0]
    near = np.asarray(together, dtype=bool).copy()
    np.fill_diagonal(near, False)
    uncovered = near.copy()
    groups = []
    for first in range(k):
        if not near[first].any():   # separated from every other model: a letter of its own
            groups.append(np.arange(k) == first)
        while uncovered[first].any():
            members = np.zeros(k, dtype=bool)
            second = int(np.argmax(uncovered[first]))
            members[[first, second]] = True
            allowed = near[first] & near[second]
            gain = uncovered[first].astype(np.int64) + uncovered[second]
            while (allowed & ~members).any():
                best = int(np.argmax(np.where(allowed & ~members, gain, -1)))
                members[best] = True
                allowed &= near[best]
                gain += uncovered[best]
            inside = np.flatnonzero(members)
            uncovered[np.ix_(inside, inside)] = False
            groups.append(members)
    if not groups:
        return np.zeros((0, k), dtype=bool)
    return _in_lexicographic_order(_absorbed(np.array(groups)))


def _absorbed(groups: np.ndarray) -> np.ndarray:
    """The groups (rows) that lie inside no other (of two equal groups, the first)."""
    size = groups.sum(axis=1)
    shared = groups.astype(np.float32) @ groups.T.astype(np.float32)
    index = np.arange(len(groups))
    inside = (shared == size[:, None]) & ((size[:, None] < size[None, :])
                                          | (index[:, None] > index[None, :]))
    np.fill_diagonal(inside, False)
    return groups[~inside.any(axis=1)]


def maximal_groups(together: np.ndarray, *, max_groups: int = MAX_GROUPS) -> np.ndarray:
    """Every maximal set of models that are pairwise ``together`` (a symmetric k x k boolean
    matrix; the diagonal is ignored), as rows of a (groups, k) boolean matrix in lexicographic
    order of their members' positions.

    Models are added one at a time (the incremental step of Tsukiyama et al. 1977): with
    model v added, a maximal group of the models before it that lies within v's neighbours
    grows by v; any other stays maximal, and its part within v's neighbours, plus v, is a new
    group when no earlier neighbour of v is together with all of it (one matrix product for
    all such candidates). Each group of the models before v leads to a distinct group after
    it, so the count never falls, and the work is O(k^3) per group at most: polynomial in k
    and the number of groups, which is at most k where separations follow the ranks.

    Raises :class:`TooManyGroups` as soon as there are more than ``max_groups``.
    """
    k = together.shape[0]
    if k == 0:
        return np.zeros((0, 0), dtype=bool)
    near = np.asarray(together, dtype=bool).copy()
    np.fill_diagonal(near, False)
    weight = near.astype(np.float32)   # counts of up to 2^24 models are exact in float32
    groups = np.zeros((1, k), dtype=bool)
    groups[0, 0] = True
    for v in range(1, k):
        neighbours = near[v, :v]
        part = groups[:, :v] & neighbours
        within = (part == groups[:, :v]).all(axis=1)
        groups[within, v] = True
        candidates = _distinct_rows(part[~within])
        if len(candidates):
            size = candidates.sum(axis=1, keepdims=True)
            # an earlier neighbour u outside the candidate, together with all its members,
            # would make a larger group: the candidate plus v is not maximal
            joins = candidates.astype(np.float32) @ weight[:v, :v][:, neighbours]
            grows = (joins == size) & ~candidates[:, neighbours]
            fresh = candidates[~grows.any(axis=1)]
            if len(fresh):
                added = np.zeros((len(fresh), k), dtype=bool)
                added[:, :v] = fresh
                added[:, v] = True
                groups = np.concatenate([groups, added])
        if len(groups) > max_groups:
            raise TooManyGroups(f"more than {max_groups:,} groups of models that no test "
                                f"separates (among the first {v + 1} of {k} models)")
    return _in_lexicographic_order(groups)


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
                   higher_is_better: bool | None, pair_tests: dict | None = None,
                   alpha: float = 0.05, confidence_level: float = 0.95,
                   n_units: int | None = None, target: float | None = None) -> dict:
    """One metric's comparison table: each model's value, percentile interval, rank and rank
    interval (from the paired ``replicates``, (R, k)), every pair's difference with its
    interval and p-value — ``pair_tests[(a, b)] = (p, test name)`` or ``(p, test name, why)``
    where an exact test applies, the paired bootstrap (:func:`paired_bootstrap_test`)
    otherwise — Holm-adjusted over the pairs that have one, and the groups at ``alpha``.
    Models are listed best first; tied values share the best rank (competition ranking).
    With a ``target`` (and ``higher_is_better`` None) the best value is the one closest to it,
    in value and in every resample (a coverage: neither more nor less than the promised
    level is better); the differences and tests are still of the values themselves.

    ``n_units``: the items (or clusters) resampled, which bound the distinct resamples
    (:func:`possible_resamples`); None: unknown, only the R resamples drawn bound them.

    A pair without a p-value has ``"untested"`` (a key of :data:`UNTESTED`), NaN ``p`` and
    ``p_holm``, and separates no models. ``"warnings"`` (present only when there is one) says,
    counted, which pairs went untested and why, and when the letters are a cover rather than
    every maximal group (:func:`significance_groups`)."""
    k = len(names)
    key = [_badness(v, higher_is_better, target) for v in values]   # smaller is better
    ranked = [names[j] for j in sorted(range(k), key=lambda j: (key[j], j))]
    # competition ranking: tied values share the best rank ("1, 1, 3"); NaN ranks last
    rank_of = {names[j]: 1 + sum(key[i] < key[j] for i in range(k)) for j in range(k)}
    if target is None:
        intervals = rank_intervals(replicates, higher_is_better, confidence_level)
    else:   # ranked in every resample by the distance to the target
        with np.errstate(invalid="ignore"):
            intervals = rank_intervals(np.abs(replicates - target), False, confidence_level)
    models = {}
    for j, name in enumerate(names):
        low, high, _ = percentile_interval(replicates[:, j], confidence_level)
        models[name] = {"value": float(values[j]), "low": low, "high": high,
                        "rank": rank_of[name], "rank_low": intervals[j][0],
                        "rank_high": intervals[j][1]}
    column = {name: j for j, name in enumerate(names)}
    distinct = len(replicates)
    if n_units is not None:
        distinct = min(distinct, possible_resamples(n_units))
    pairs = []
    for first, a in enumerate(ranked[:-1]):
        # a against every model ranked below it at once (one row of differences per pair)
        others = ranked[first + 1:]
        i, js = column[a], [column[b] for b in others]
        diffs = [values[i] - values[j] for j in js]
        rows = np.ascontiguousarray((replicates[:, [i]] - replicates[:, js]).T)
        tested = _bootstrap_rows(rows, diffs, distinct, confidence_level)
        for b, d, (low, high, p, why) in zip(others, diffs, tested):
            given = (pair_tests or {}).get((a, b))
            test = "paired_bootstrap"
            if given is not None:
                p, test, *rest = given
                why = rest[0] if rest else (None if np.isfinite(p) else "undefined")
            pair = {"a": a, "b": b, "diff": float(d), "low": low, "high": high,
                    "p": float(p), "test": test}
            if why is not None:
                pair["untested"] = why
            pairs.append(pair)
    adjusted = holm([pair["p"] for pair in pairs]) if pairs else []
    for pair, q in zip(pairs, adjusted):
        pair["p_holm"] = float(q)
    separated = {frozenset((pair["a"], pair["b"])) for pair in pairs
                 if np.isfinite(pair["p_holm"]) and pair["p_holm"] < alpha}
    notes = _untested_notes(pairs, n_units, len(replicates))
    try:
        matrix = _group_matrix(ranked, separated, "maximal", MAX_GROUPS)
    except TooManyGroups:
        matrix = _group_matrix(ranked, separated, "cover", MAX_GROUPS)
        notes.append(f"letters: more than {MAX_GROUPS} maximal groups of models that no test "
                     f"separates (multcompView's letters); shown instead are {len(matrix)} "
                     "groups covering every pair no test separates (clique growing, Gramm et "
                     "al. 2007): models share a letter exactly when no test separates them, "
                     "but not every maximal group has its own letter")
    groups = _letters_of(ranked, matrix)
    for name in names:
        models[name]["group"] = groups[name]
    table = {"higher_is_better": higher_is_better, "ranked": ranked, "models": models,
             "pairs": pairs}
    if target is not None:
        table["target"] = float(target)
    if notes:
        table["warnings"] = notes
    return table


def _badness(value: float, higher_is_better: bool | None, target: float | None) -> float:
    """A value's sort key, smaller is better: its distance to ``target`` when there is one,
    else the value signed by its direction; NaN last."""
    if not np.isfinite(value):
        return np.inf
    if target is not None:
        return abs(value - target)
    return -value if higher_is_better else value


def direction_text(table: Mapping) -> str:
    """How a comparison table ranks: "higher is better", "lower is better" or "closest to
    0.9 is best" (a metric with a ``target``)."""
    if table.get("target") is not None:
        return f"closest to {table['target']:g} is best"
    return "higher is better" if table["higher_is_better"] else "lower is better"


def direction_arrow(table: Mapping, up: str = "↑", down: str = "↓", to: str = "→") -> str:
    """The same as a mark after a metric's name: ↑, ↓ or →0.9."""
    if table.get("target") is not None:
        return f"{to}{table['target']:g}"
    return up if table["higher_is_better"] else down


def _bootstrap_rows(rows: np.ndarray, differences: Sequence[float], distinct: int,
                    confidence_level: float) -> list[tuple[float, float, float, str | None]]:
    """(low, high, p, why untested) of each pair from its row of paired differences on the
    resamples: :func:`.bootstrap.percentile_interval` and :func:`paired_bootstrap_test`, the
    rows without an undefined replicate all at once (numpy's quantile and standard deviation
    along rows are bit for bit those of each row alone), the others one by one."""
    out: list = [None] * len(rows)
    complete = np.isfinite(rows).all(axis=1)
    if complete.any():
        whole = rows[complete]
        tail = (1 - confidence_level) / 2
        lows, highs = np.quantile(whole, [tail, 1 - tail], axis=1)
        spread = np.std(whole, axis=1, ddof=1) if whole.shape[1] > 1 else np.zeros(len(whole))
        largest = np.abs(whole).max(axis=1)
        for k, row in enumerate(np.flatnonzero(complete)):
            p, why = _normal_p(differences[row], float(spread[k]), float(largest[k]),
                               whole.shape[1], distinct)
            out[row] = (float(lows[k]), float(highs[k]), p, why)
    for row in np.flatnonzero(~complete):
        low, high, _ = percentile_interval(rows[row], confidence_level)
        out[row] = (low, high, *paired_bootstrap_test(differences[row], rows[row],
                                                      distinct=distinct))
    return out


_SHOWN_PAIRS = 5
"""Pairs named in an untested-pairs warning (the rest counted)."""


def _untested_notes(pairs: list[dict], n_units: int | None, n_resamples: int) -> list[str]:
    """One counted warning per reason some pairs have no p-value, naming the first pairs."""
    by_reason: dict[str, list[str]] = {}
    for pair in pairs:
        if "untested" in pair:
            by_reason.setdefault(pair["untested"], []).append(
                f"{display_name(pair['a'])} – {display_name(pair['b'])}")
    notes = []
    for why, named in by_reason.items():
        text = UNTESTED.get(why, why)
        if why == "too_few_resamples":
            text += (f" ({n_units} items allow {possible_resamples(n_units)})"
                     if n_units is not None and possible_resamples(n_units) < n_resamples
                     else f" ({n_resamples} drawn)")
        shown = ", ".join(named[:_SHOWN_PAIRS]) + (
            f" and {len(named) - _SHOWN_PAIRS:,} more" if len(named) > _SHOWN_PAIRS else "")
        notes.append(f"{len(named):,} of {len(pairs):,} pairs have no p-value: {text}: "
                     f"{shown}; they separate no models")
    return notes


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
    ``values`` must be given, and ``units`` should say how many items (clusters) those
    resamples drew from. ``units`` bounds the distinct resamples (:func:`possible_resamples`);
    by default the clusters, else the items of ``arrays``."""

    fn: Callable
    arrays: Mapping[str, Sequence[np.ndarray]]
    higher_is_better: bool | None
    kwargs: Mapping = field(default_factory=dict)
    test: str = "paired_bootstrap"
    values: Mapping[str, float] | None = None
    batched: Callable | None = None
    clusters: np.ndarray | None = None
    replicates: Mapping[str, np.ndarray] | None = None
    units: int | None = None
    target: float | None = None
    """A value to be close to (a coverage's promised level), instead of a direction:
    ``higher_is_better`` is then None."""

    def __post_init__(self) -> None:
        if (self.target is None) == (self.higher_is_better is None):
            raise ValueError("a paired metric has a direction (higher_is_better) or a target, "
                             "not both")
        if self.replicates is not None and self.values is None:
            raise ValueError("precomputed replicates need their values")
        if self.test not in TESTS:
            raise ValueError(f"unknown test {self.test!r}; choose from {', '.join(TESTS)}")

    def value(self, name: str) -> float:
        if self.values is not None:
            return float(self.values[name])
        return float(self.fn(*self.arrays[name], **self.kwargs))

    def resampled_units(self) -> int | None:
        """How many items (clusters) the resamples draw from; None when not known."""
        if self.units is not None:
            return int(self.units)
        if self.clusters is not None:
            return int(np.unique(np.asarray(self.clusters)).size)
        first = next(iter(self.arrays.values()), None)
        return len(first[0]) if first else None


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
                                          alpha=alpha, confidence_level=confidence_level,
                                          n_units=metric.resampled_units(),
                                          target=metric.target)
    return out


def exact_pair_tests(metric: PairedMetric, names: Sequence[str]) -> dict:
    """``{(a, b): (p, test, why untested)}`` for the pairs ``metric.test`` applies to (both
    ways round); ``why`` is None where there is a p-value (a key of :data:`UNTESTED`
    otherwise)."""
    tests: dict = {}
    if metric.clusters is not None or metric.replicates is not None:
        return tests
    if metric.test == "mcnemar_exact":
        binary = {n: np.isin(metric.arrays[n][0], (0, 1)).all() for n in names}
        for a, b in all_pairs(names):
            if binary[a] and binary[b]:
                p = mcnemar_exact(metric.arrays[a][0], metric.arrays[b][0])
                tests[(a, b)] = tests[(b, a)] = (p, "mcnemar_exact", None)
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
                    tests[(a, b)] = tests[(b, a)] = (float("nan"), "delong", "undefined")
                continue
            for i, j in combinations(range(len(members)), 2):
                p, why = _delong_p(auc, cov, i, j)
                tests[(members[i], members[j])] = tests[(members[j], members[i])] = (
                    p, "delong", why)
    return tests
