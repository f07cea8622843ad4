"""Selective prediction and ranking metrics: AUROC, accuracy-rejection and risk-coverage
curves (AUARC, AURC), prediction rejection ratio (PRR) and rank-calibration error (RCE).

Tie rule (order-independent, documented once)
---------------------------------------------
Samples are accepted from the most to the least confident. When several samples share a
confidence, no order among them is more right than another, so every curve here uses the
**expectation over all orderings of each tied block**: within a block, each sample's
correctness (or loss) is replaced by the block mean. For AUROC this is the usual "a tie counts
one half" rule, which gives exactly ``sklearn.metrics.roc_auc_score``. The result never
depends on the order in which the samples were given. (Those curves are linear in each
position's correctness, so the block mean *is* the expectation over orders.) The
rank-calibration error is not linear: see its ``ties`` rules.
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from .._numeric import mid_ranks
from .._validation import (
    as_binary,
    as_float_1d,
    as_unit_interval,
    check_positive_int,
    same_length,
    tie_group_means,
)

__all__ = [
    "UndefinedMetricWarning",
    "harmonic_numbers",
    "accuracy_rejection_curve",
    "auarc",
    "auroc",
    "auroc_from_ranks",
    "aurc",
    "prediction_rejection_ratio",
    "RCEOverOrders",
    "rank_calibration_diagram",
    "rank_calibration_error",
    "rank_calibration_error_orders",
    "risk_coverage_curve",
    "tie_block_areas",
    "Ranking",
]


class UndefinedMetricWarning(UserWarning):
    """A metric is undefined for this input (e.g. AUROC with one class); NaN is returned."""


def auroc(confidence: ArrayLike, correct: ArrayLike) -> float:
    """Area under the ROC curve of ``confidence`` as a detector of correct answers.

    Computed in O(n log n) as the Mann-Whitney statistic with mid-ranks, so a tied
    (correct, incorrect) pair counts one half, exactly as ``sklearn.metrics.roc_auc_score``.

    Parameters
    ----------
    confidence : array of shape (n,)
        Any real score; higher means more confident.
    correct : array of shape (n,)
        Binary correctness (0/1).

    Returns
    -------
    float
        NaN, with an :class:`UndefinedMetricWarning`, when only one class is present.

    Examples
    --------
    >>> auroc([0.9, 0.8, 0.8, 0.1], [1, 1, 0, 0])
    0.875
    """
    score = as_float_1d(confidence, "confidence")
    y = as_binary(correct, "correct")
    same_length(confidence=score, correct=y)
    if _one_class(y):
        return float("nan")
    return float(auroc_from_ranks(mid_ranks(score), y))


def _one_class(y: np.ndarray) -> bool:
    """Whether 0/1 targets hold one class only (AUROC undefined: warned, NaN returned)."""
    n_pos = y.sum()
    if n_pos == 0 or n_pos == y.size:
        warnings.warn("AUROC is undefined when only one class is present; returning NaN",
                      UndefinedMetricWarning, stacklevel=3)
        return True
    return False


def auroc_from_ranks(ranks: np.ndarray, correct: np.ndarray) -> np.ndarray:
    """The AUROC kernel, the one formula of the scalar AUROC and its bootstrap rows: the
    Mann-Whitney statistic from each item's mid-rank (ties counting one half) along the last
    axis, (sum of the positives' ranks - P (P + 1) / 2) / (P N); NaN where a row has one class
    (the caller says so)."""
    n_pos = correct.sum(axis=-1)
    n_neg = correct.shape[-1] - n_pos
    with np.errstate(invalid="ignore", divide="ignore"):
        out = ((ranks * correct).sum(axis=-1) - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)
    return np.where((n_pos > 0) & (n_neg > 0), out, np.nan)


def _sorted_by_confidence(confidence, target):
    """Targets sorted from most to least confident, tied blocks replaced by their mean.

    The sort need not be stable: each tied block is averaged, so the order inside it cannot
    matter (and numpy's default sort is several times faster than its stable one)."""
    order = np.argsort(-confidence)
    return tie_group_means(confidence[order], target[order])


def _running_mean_area(confidence: np.ndarray, target: np.ndarray) -> tuple[float, float]:
    """(mean over k = 1..n of the running mean of the k most confident targets, the first
    running mean), with the tie rule, in one sort and without building the curve.

    Without ties the running means are cumsum / k. With ties, a block of positions (s, e] with
    mean m and cumulative sum C_s before it contributes
    sum_{k=s+1}^{e} (C_s + (k - s) m) / k = (C_s - s m) (H_e - H_s) + (e - s) m, where
    H the harmonic numbers (:func:`harmonic_numbers`): O(blocks) work after the sort."""
    tie, cum = _descending_targets(confidence, target)
    np.cumsum(cum, out=cum)
    return _area_of_running_sums(tie, cum)


def _area_of_running_sums(tie: np.ndarray, cum: np.ndarray) -> tuple[float, float]:
    """:func:`_running_mean_area` from the running sums ``cum`` of the targets sorted from the
    most to the least confident and ``tie[i]`` (positions i and i + 1 share a confidence);
    ``cum`` is overwritten."""
    n = cum.size
    if not tie.any():
        first = float(cum[0])
        np.divide(cum, np.arange(1, n + 1, dtype=np.float64), out=cum)
        return float(cum.sum() / n), first
    ends = np.r_[np.flatnonzero(~tie) + 1, n].astype(np.float64)
    starts = np.r_[0.0, ends[:-1]]
    c_end = cum[ends.astype(np.int64) - 1]
    c_start = np.r_[0.0, c_end[:-1]]
    length = ends - starts
    m = (c_end - c_start) / length
    total = tie_block_areas(c_start, starts, ends, m, harmonic_numbers).sum()
    return float(total / n), float(m[0])


def tie_block_areas(c_start: np.ndarray, starts: np.ndarray, ends: np.ndarray,
                    means: np.ndarray, harmonic=None) -> np.ndarray:
    """The AUARC kernel, the one formula of the tie rule every AUARC form computes (one
    sample, bootstrap rows, weighted resamples): a tie block of positions (s, e] with mean
    target m after C_s targets adds sum_{k=s+1}^{e} (C_s + (k - s) m) / k =
    (C_s - s m) (H_e - H_s) + (e - s) m to the sum of running accuracies. ``harmonic`` gives
    H_k (default :func:`harmonic_numbers`; a weighted form passes its cached table)."""
    h = harmonic or harmonic_numbers
    return (c_start - starts * means) * (h(ends) - h(starts)) + (ends - starts) * means


_EULER_GAMMA = 0.57721566490153286061
_SMALL_HARMONIC = np.cumsum([0.0] + [1.0 / k for k in range(1, 16)])   # H_0 .. H_15


def harmonic_numbers(k: np.ndarray) -> np.ndarray:
    """H_k = 1 + 1/2 + ... + 1/k for integer-valued k >= 0 (H_0 = 0), to about 1e-16
    relative: a table up to 15, the asymptotic series ln k + gamma + 1/(2k) - 1/(12k^2) +
    1/(120k^4) - ... beyond (its first omitted term is below 1e-16 there) — what
    ``scipy.special.digamma(k + 1) + gamma`` gives, without importing scipy.special (0.15 s
    of start-up for every command that scores).

    Examples
    --------
    >>> harmonic_numbers(np.array([0.0, 1.0, 3.0])).tolist()
    [0.0, 1.0, 1.8333333333333333]
    """
    k = np.asarray(k, dtype=np.float64)
    small = k < _SMALL_HARMONIC.size
    out = np.empty_like(k)
    out[small] = _SMALL_HARMONIC[k[small].astype(np.int64)]
    x = k[~small]
    inv2 = 1.0 / (x * x)
    series = inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (1 / 240
                                                                           - inv2 / 132))))
    out[~small] = np.log(x) + _EULER_GAMMA + 0.5 / x - series
    return out


def _descending_targets(confidence: np.ndarray, target: np.ndarray
                        ) -> tuple[np.ndarray, np.ndarray]:
    """(tie, targets): the targets from the most to the least confident (a fresh array) and
    ``tie[i]`` whether positions i and i + 1 share a confidence.

    A 0/1 target is carried inside the sort key — the confidence's bits shifted left by one
    with the target in the freed bit — so one direct sort of integers replaces the indirect
    argsort (about 3x faster on 10^6 rows); :func:`_sort_keys` says when that is exact."""
    keys = _sort_keys(confidence, target)
    if keys is None:
        order = np.argsort(-confidence)
        c_sorted = confidence.take(order)
        return np.equal(c_sorted[1:], c_sorted[:-1]), target.take(order)
    keys, descending = keys
    keys.sort()
    if descending:
        keys = keys[::-1]
    values = keys >> np.uint64(1)
    return np.equal(values[1:], values[:-1]), (keys & np.uint64(1)).astype(np.float64)


_SMALLEST_NORMAL = np.finfo(np.float64).tiny


def _sort_keys(confidence: np.ndarray, target: np.ndarray) -> tuple[np.ndarray, bool] | None:
    """Integer keys whose ascending order is the confidences' order (``descending``: reverse
    it for most-confident-first) with the 0/1 target in the lowest bit, or ``None`` when that
    cannot be exact: a target other than 0/1, confidences of both signs, or values that a
    power-of-two scaling into [0, 2) would make subnormal.

    For x in [0, 2) the float64 bits are below 2^62 and increase with x, so (bits << 1) | y
    fits in 64 bits and sorts by x first. All-negative confidences are negated (0 - x: exact,
    and -0.0 becomes +0.0, whose bits are the smallest); larger magnitudes are scaled by a
    power of two, which is exact for normal numbers."""
    n = confidence.size
    if n < 2:
        return None
    ones = target == 1.0
    if np.count_nonzero(ones) + np.count_nonzero(target == 0.0) != n:
        return None
    smallest, largest = np.minimum.reduce(confidence), np.maximum.reduce(confidence)
    if smallest >= 0:
        x, descending, top = confidence + 0.0, True, largest   # + 0.0: -0.0 becomes +0.0
    elif largest <= 0:
        x, descending, top = 0.0 - confidence, False, -smallest
    else:
        return None
    if top >= 2.0:
        factor = 2.0 ** (1 - int(np.frexp(top)[1]))
        least = np.min(x, where=x > 0, initial=np.inf)
        if least * factor < _SMALLEST_NORMAL:
            return None
        x *= factor
    keys = x.view(np.uint64) << np.uint64(1)
    keys |= ones
    return keys, descending


def accuracy_rejection_curve(confidence: ArrayLike, correct: ArrayLike
                             ) -> tuple[np.ndarray, np.ndarray]:
    """Accuracy of the k most confident samples, k = 1..n.

    Returns
    -------
    coverage : array of shape (n,)
        k / n.
    accuracy : array of shape (n,)
        Expected accuracy of the k most confident samples (tie rule in the module docstring).
    """
    conf = as_float_1d(confidence, "confidence")
    target = as_unit_interval(correct, "correct")
    n = same_length(confidence=conf, correct=target)
    if n == 0:
        raise ValueError("need at least one sample")
    k = np.arange(1, n + 1, dtype=np.float64)
    return k / n, np.cumsum(_sorted_by_confidence(conf, target)) / k


def risk_coverage_curve(confidence: ArrayLike, loss: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Selective risk (mean loss of the k most confident samples) against coverage k/n.

    ``loss`` is any per-sample loss, e.g. ``1 - correct``. Ties as in the module docstring.
    """
    conf = as_float_1d(confidence, "confidence")
    loss = as_float_1d(loss, "loss")
    n = same_length(confidence=conf, loss=loss)
    if n == 0:
        raise ValueError("need at least one sample")
    k = np.arange(1, n + 1, dtype=np.float64)
    return k / n, np.cumsum(_sorted_by_confidence(conf, loss)) / k


def auarc(confidence: ArrayLike, correct: ArrayLike, *, integration: str = "mean",
          ties: str = "average") -> float:
    r"""Area under the accuracy-rejection curve.

    ``integration="mean"`` (default): :math:`\frac1n\sum_{k=1}^{n}\mathrm{acc}_k`, the
    accuracy averaged over the n coverage levels k/n.
    ``integration="trapezoid"``: trapezoid rule over coverages ``linspace(0, 1, n)``, as in the
    UQ-NLG code of Lin et al. (2024); use it to compare with their published numbers.
    ``ties="average"`` (default) is the module's order-free tie rule; ``ties="input-order"``
    breaks ties by row order (a stable sort), as tools such as UQ-NLG do — for reproducing their
    numbers only, since it depends on how the rows happen to be ordered.

    References
    ----------
    Nadeem, Zucker and Hanczar (2009), "Accuracy-rejection curves (ARCs) for comparing
    classification methods with a reject option", MLSB.

    Examples
    --------
    >>> auarc([0.9, 0.5, 0.1], [1, 0, 1])
    0.7222222222222222
    """
    if integration not in ("mean", "trapezoid"):
        raise ValueError(f"integration must be 'mean' or 'trapezoid', got {integration!r}")
    if ties not in ("average", "input-order"):
        raise ValueError(f"ties must be 'average' or 'input-order', got {ties!r}")
    conf = as_float_1d(confidence, "confidence")
    target = as_unit_interval(correct, "correct")
    n = same_length(confidence=conf, correct=target)
    if n == 0:
        raise ValueError("need at least one sample")
    if ties == "input-order":
        running = np.cumsum(target[np.argsort(-conf, kind="stable")]) / np.arange(1, n + 1)
        area, first = float(running.mean()), float(running[0])
    else:
        area, first = _running_mean_area(conf, target)
    if integration == "mean" or n < 2:
        return area if integration == "mean" else first
    return float((area * n - 0.5 * (first + target.mean())) / (n - 1))


def aurc(confidence: ArrayLike, loss: ArrayLike) -> float:
    """Area under the risk-coverage curve (mean selective risk over coverages k/n).

    References
    ----------
    Geifman, Uziel and El-Yaniv (2019), "Bias-reduced uncertainty estimation for deep neural
    classifiers", ICLR.
    """
    conf = as_float_1d(confidence, "confidence")
    loss = as_float_1d(loss, "loss")
    if same_length(confidence=conf, loss=loss) == 0:
        raise ValueError("need at least one sample")
    return _running_mean_area(conf, loss)[0]


def prediction_rejection_ratio(confidence: ArrayLike, correct: ArrayLike) -> float:
    r"""Prediction rejection ratio.

    .. math:: \mathrm{PRR} = \frac{\mathrm{AUARC}(c) - \mathrm{AUARC}_{\text{random}}}
                                  {\mathrm{AUARC}_{\text{oracle}} - \mathrm{AUARC}_{\text{random}}}

    with the mean integration of :func:`auarc`. A random (or constant) confidence scores 0, the
    oracle that ranks every correct sample first scores 1; negative values are worse than
    random. NaN (with a warning) when all samples have the same correctness.

    References
    ----------
    Malinin et al. (2017), "Incorporating uncertainty into deep learning for spoken language
    assessment", ACL. Vashurin et al. (2024), "Benchmarking uncertainty quantification methods
    for large language models with LM-Polygraph".
    """
    target = as_unit_interval(correct, "correct")
    return _rejection_ratio(lambda: auarc(confidence, target), target)


def _rejection_ratio(area, target: np.ndarray) -> float:
    """PRR from the AUARC of the confidence (``area()``, called only when PRR is defined)."""
    random_area = float(target.mean()) if target.size else float("nan")
    oracle_area = auarc(target, target)
    if np.isclose(oracle_area, random_area, rtol=0, atol=1e-15):
        warnings.warn("PRR is undefined when every sample has the same correctness; returning NaN",
                      UndefinedMetricWarning, stacklevel=3)
        return float("nan")
    return (area() - random_area) / (oracle_area - random_area)


class RCEOverOrders(NamedTuple):
    """RCE averaged over random orders of tied rows: the mean, its standard error (the std of
    the per-order values over sqrt(n_orders)), and the number of orders drawn."""

    mean: float
    std_error: float
    n_orders: int


RCE_TIES = ("block", "orders")


def _rce_layout(u: np.ndarray, n_bins: int):
    """Positions sorted by uncertainty, equal-mass bin of each position (the authors' edges
    ``round(linspace(0, n, B + 1))``), bin sizes, and the tie block of each position."""
    order = np.argsort(u, kind="stable")
    edges, bin_of, sizes = _rce_bins(u.size, n_bins)
    u_sorted = u[order]
    block = np.concatenate([[0], np.cumsum(u_sorted[1:] != u_sorted[:-1])])
    return order, edges, bin_of, sizes, block


def _at_most_one_bin_a_position(n: int, n_bins: int) -> int:
    """The bins RCE is computed with: more bins than positions give bins of one position or
    none (the edges round(linspace(0, n, B + 1)) rise by at most 1 a step when B > n), which
    is the estimator of one bin a position, B = n (equal for B = n ... 10 n + 7, tested); so
    n bins are used, in memory of the sample's size rather than of B (--rce-bins 10^8 on 300
    rows once took 8.8 GB)."""
    return min(n_bins, n)


def _rce_bins(n: int, n_bins: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The equal-mass bins of n sorted positions: edges ``round(linspace(0, n, B + 1))``,
    the bin of each position and the bin sizes."""
    edges = np.round(np.linspace(0, n, n_bins + 1)).astype(np.int64)
    sizes = np.diff(edges)
    return edges, np.repeat(np.arange(n_bins), sizes), sizes.astype(np.float64)


def _sizes_at_or_above(means: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """For each row of ``means`` (R, B) and each bin b, the total ``weights`` of the bins j
    with ``means[r, j] >= means[r, b]`` (an empty bin, NaN mean, weighs 0 and its own total is
    never read). Each row sorted once: O(R B log B) time and O(R B) memory, where comparing
    every pair of bins took R x B x B (a ``--rce-bins`` of 10^4 needed ~10^9 bytes a row).
    The same integers: equal means are found by exact comparison after the sort."""
    r, b = means.shape
    keyed = np.where(np.isnan(means), -np.inf, means)
    order = np.argsort(keyed, axis=1, kind="stable")
    ranked = np.take_along_axis(keyed, order, axis=1)
    from_top = np.cumsum(weights[order][:, ::-1], axis=1)[:, ::-1]   # weight at or after
    # each sorted place reads the total from the first place of its run of equal means
    first = np.ones((r, b), dtype=bool)
    first[:, 1:] = ranked[:, 1:] != ranked[:, :-1]
    start = np.maximum.accumulate(np.where(first, np.arange(b), 0), axis=1)
    out = np.empty((r, b))
    np.put_along_axis(out, order, np.take_along_axis(from_top, start, axis=1), axis=1)
    return out


def _rce_from_bin_means(means: np.ndarray, sizes: np.ndarray, edges: np.ndarray,
                        n: int) -> np.ndarray:
    """RCE for each row of bin means (R, B): every position of bin b has the de-tied CDF of
    regressed correctness c_b = (#{j: reg_j >= reg_b} - 1)/(n-1) - (m_b - 1)/(2(n-1)), the
    uncertainty CDF i/(n-1); the sum of |c_b - i/(n-1)| over a bin's positions is in closed
    form (an arithmetic sequence split at i = c_b (n-1))."""
    d = float(n - 1)
    used = sizes > 0
    count_ge = _sizes_at_or_above(means, np.where(used, sizes, 0.0))
    c = (count_ge - 1) / d - (sizes - 1) / (2 * d)
    lo = edges[:-1].astype(np.float64)[None, :]
    hi = edges[1:].astype(np.float64)[None, :] - 1  # last position of the bin
    k = np.clip(np.floor(c * d + 1e-9), lo - 1, hi)  # positions lo..k lie at or below c
    n_below, n_above = k - lo + 1, hi - k

    def arith(a, b):  # sum of the integers a..b (0 when b < a)
        return np.where(b >= a, (a + b) * (b - a + 1) / 2, 0.0)

    total = (n_below * c - arith(lo, k) / d) + (arith(k + 1, hi) / d - n_above * c)
    return np.where(used[None, :], total, 0.0).sum(axis=1) / n


def _rce_over_orders(u: np.ndarray, a: np.ndarray, n_bins: int, n_orders: int,
                     seed: int) -> np.ndarray:
    """The authors' estimator for ``n_orders`` random orders of the tied rows. Only tie blocks
    that straddle a bin edge can change a bin's mean, so only their values are permuted."""
    n = u.size
    n_bins = _at_most_one_bin_a_position(n, n_bins)
    order, edges, bin_of, sizes, block = _rce_layout(u, n_bins)
    a_sorted = a[order]
    starts = np.r_[0, np.flatnonzero(np.diff(block)) + 1]
    ends = np.r_[starts[1:], n]
    block_bins_differ = bin_of[starts] != bin_of[ends - 1]
    straddling = block_bins_differ[block]
    fixed = np.bincount(bin_of[~straddling], weights=a_sorted[~straddling], minlength=n_bins)
    idx = np.flatnonzero(straddling)
    rng = np.random.default_rng(seed)
    values = np.empty(n_orders)
    if idx.size == 0:
        with np.errstate(invalid="ignore", divide="ignore"):
            means = (fixed / sizes)[None, :]
        values[:] = _rce_from_bin_means(means, sizes, edges, n)[0]
        return values
    blk, bins, vals = block[idx].astype(np.float64), bin_of[idx], a_sorted[idx]
    chunk = max(1, 4_000_000 // idx.size)  # bounds the (orders x straddling rows) arrays
    for start in range(0, n_orders, chunk):
        r = min(chunk, n_orders - start)
        # sorting block id + a uniform key shuffles the values within each block only
        perm = np.argsort(blk[None, :] + rng.random((r, idx.size)), axis=1)
        flat = (np.arange(r)[:, None] * n_bins + bins[None, :]).ravel()
        moving = np.bincount(flat, weights=vals[perm].ravel(), minlength=r * n_bins)
        with np.errstate(invalid="ignore", divide="ignore"):
            means = (fixed[None, :] + moving.reshape(r, n_bins)) / sizes[None, :]
        values[start:start + r] = _rce_from_bin_means(means, sizes, edges, n)
    return values


def rank_calibration_error(confidence: ArrayLike, correctness: ArrayLike, *, n_bins: int = 20,
                           is_uncertainty: bool = False, ties: str = "block",
                           n_orders: int = 1000, seed: int = 0) -> float:
    r"""Rank-calibration error (RCE) of Huang et al. (2024), plug-in estimator, O(n log n).

    RCE asks whether a higher confidence goes with a higher expected correctness, without
    requiring confidences to be probabilities. In uncertainty form (their Eq. for U):

    .. math:: \mathrm{RCE} = \mathbb{E}_U\Bigl|\,\mathbb{P}_{U'}\{\mathrm{reg}(U') \ge
              \mathrm{reg}(U)\} - \mathbb{P}_{U'}\{U' \le U\}\Bigr|,\qquad
              \mathrm{reg}(u) = \mathbb{E}[A \mid U = u].

    A confidence C is handled as the uncertainty U = -C. (MCQA-Eval, Eq. 5, prints the formula
    with C in place of U but keeps ``C' <= C``; with confidences the second probability must be
    ``C' >= C``, which is what negating gives.)

    Estimator, following the authors' code (``plugin_RCE_est``): sort by uncertainty; split the
    n sorted positions into ``n_bins`` equal-mass bins (edges ``round(linspace(0, n, B + 1))``);
    reg is the mean correctness of the bin; the empirical CDF of U at sorted position i is
    i/(n-1); the CDF of reg is the share of *other* samples with reg greater or equal, de-tied
    within each bin (minus (m-1)/(2(n-1)) for a bin of m samples). RCE is the mean absolute
    gap. Without ties in the confidence both rules below are exactly that estimator.

    Ties in the confidence: the authors sort with ``numpy.argsort``, so tied rows fall into
    bins in an order that depends on the input order, and their value with it. Two rules:

    ``ties="block"`` (default; deterministic)
        Tied samples first share the mean correctness of their tie block, then the estimator
        runs. Order-free, but *not* the expectation over orders: binning is non-linear, and on
        tied data this value lies systematically below that expectation (n = 50 Likert
        confidences: 0.186 against 0.220).
    ``ties="orders"``
        The expectation of the authors' estimator over uniformly random orders of the tied
        rows, estimated from ``n_orders`` seeded orders (:func:`rank_calibration_error_orders`
        also gives its standard error). Only tie blocks that straddle a bin edge are permuted,
        so it costs O(n log n + n_orders * rows in such blocks).

    Undefined (NaN, with an :class:`UndefinedMetricWarning`) when every confidence is the same
    or every correctness is: the confidence then ranks nothing, and the estimator's value
    (~0.5 for one class, from the confidences' CDF alone; 0.48 under ``"block"`` and 0.34 over
    orders for 50 identical confidences) would be a number about no ranking at all.

    Parameters
    ----------
    confidence : array of shape (n,), any real values (uncertainties if ``is_uncertainty``)
    correctness : array of shape (n,), values in [0, 1] (binary or graded)
    n_bins : int, default 20
    is_uncertainty : bool, default False
        Set when the first argument is an uncertainty (higher = less confident).
    ties : {"block", "orders"}, default "block"
    n_orders, seed : int
        ``ties="orders"`` only: random orders drawn, and their seed.

    References
    ----------
    Huang et al. (2024), "Uncertainty in language models: assessment through
    rank-calibration", EMNLP. Section 3.2 of MCQA-Eval (Lin et al.).

    Examples
    --------
    >>> rank_calibration_error([0.1, 0.2, 0.3, 0.4], [0.0, 0.3, 0.6, 1.0], n_bins=4)
    0.0
    >>> c, a = [0.6] * 4 + [0.9] * 4, [0, 1, 0, 0, 1, 1, 0, 1]
    >>> round(rank_calibration_error(c, a, n_bins=4), 4)
    0.1786
    >>> round(rank_calibration_error(c, a, n_bins=4, ties="orders", n_orders=4000), 2)
    0.24
    """
    if ties not in RCE_TIES:
        raise ValueError(f"ties must be one of {RCE_TIES}, got {ties!r}")
    if ties == "orders":
        return rank_calibration_error_orders(confidence, correctness, n_bins=n_bins,
                                             is_uncertainty=is_uncertainty,
                                             n_orders=n_orders, seed=seed).mean
    u, a = _rce_inputs(confidence, correctness, n_bins, is_uncertainty)
    if _rce_undefined(u, a):
        return float("nan")
    order = np.argsort(u, kind="stable")
    return _rce_of_sorted(tie_group_means(u[order], a[order]), n_bins)


def _rce_undefined(confidence: np.ndarray, correctness: np.ndarray) -> bool:
    """Whether RCE is undefined here (one confidence or one correctness for every row):
    warned, and the caller returns NaN."""
    for values, what in ((correctness, "correctness"), (confidence, "confidence")):
        if values[0] == values[-1] and np.ptp(values) == 0:
            warnings.warn(f"RCE is undefined when every sample has the same {what} (nothing "
                          "is ranked); returning NaN", UndefinedMetricWarning, stacklevel=3)
            return True
    return False


def _rce_of_sorted(a_sorted: np.ndarray, n_bins: int) -> float:
    """The ``ties="block"`` RCE from the correctness sorted from the least to the most
    uncertain, each tie block at its mean."""
    n = a_sorted.size
    n_bins = _at_most_one_bin_a_position(n, n_bins)
    _, bin_of, sizes = _rce_bins(n, n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        bin_mean = np.bincount(bin_of, weights=a_sorted, minlength=n_bins) / sizes
    # the positions whose bin mean is at least a bin's own, counted over the bins (the same
    # integers as sorting the n positions' means and searching each), as over tie orders
    count_ge = _sizes_at_or_above(bin_mean[None, :], np.where(sizes > 0, sizes, 0.0))[0]
    reg_cdf = ((count_ge - 1) / (n - 1) - (sizes - 1) / (2 * (n - 1)))[bin_of]
    u_cdf = np.arange(n) / (n - 1)
    return float(np.abs(reg_cdf - u_cdf).mean())


def rank_calibration_error_orders(confidence: ArrayLike, correctness: ArrayLike, *,
                                  n_bins: int = 20, is_uncertainty: bool = False,
                                  n_orders: int = 1000, seed: int = 0) -> RCEOverOrders:
    """RCE as the expectation of the authors' estimator over random orders of tied rows (see
    :func:`rank_calibration_error`, ``ties="orders"``), with its standard error.

    Examples
    --------
    >>> res = rank_calibration_error_orders([0.5] * 8 + [0.9] * 2, [1, 0] * 5, n_bins=2,
    ...                                     n_orders=200)
    >>> 0 < res.mean < 1 and res.std_error > 0 and res.n_orders
    200
    """
    u, a = _rce_inputs(confidence, correctness, n_bins, is_uncertainty)
    n_orders = check_positive_int(n_orders, "n_orders")
    if _rce_undefined(u, a):
        return RCEOverOrders(float("nan"), float("nan"), n_orders)
    values = _rce_over_orders(u, a, n_bins, n_orders, seed)
    se = float(values.std(ddof=1) / np.sqrt(n_orders)) if n_orders > 1 else float("nan")
    return RCEOverOrders(float(values.mean()), se, n_orders)


def _rce_inputs(confidence, correctness, n_bins, is_uncertainty):
    values = as_float_1d(confidence, "confidence")
    a = as_unit_interval(correctness, "correctness")
    n = same_length(confidence=values, correctness=a)
    check_positive_int(n_bins, "n_bins")
    if n < 2:
        raise ValueError("rank-calibration error needs at least two samples")
    return (values if is_uncertainty else -values), a


def rank_calibration_diagram(conf: ArrayLike, correct: ArrayLike, n_bins: int = 20) -> dict:
    """Equal-mass bins of the confidence: each bin's relative rank (its centre, 0-1) against
    the relative rank of its mean correctness among the bins (tied means share their mean
    rank). A rank-calibrated measure lies on the diagonal (Huang et al., 2024, Fig. 1); the
    picture of :func:`rank_calibration_error`.

    Examples
    --------
    >>> d = rank_calibration_diagram([0.1, 0.2, 0.3, 0.4], [0, 0, 1, 1], n_bins=2)
    >>> d["confidence_rank"], d["correctness_rank"]
    ([0.25, 0.75], [0.25, 0.75])
    """
    conf, correct = np.asarray(conf, dtype=np.float64), np.asarray(correct, dtype=np.float64)
    order = np.argsort(conf, kind="stable")
    bins = np.array_split(order, min(n_bins, conf.size))
    means = np.array([correct[b].mean() for b in bins])
    k = len(bins)
    x = (np.arange(k) + 0.5) / k
    y = (mid_ranks(means) - 0.5) / k
    return {"confidence_rank": x.tolist(), "correctness_rank": y.tolist(),
            "mean_correctness": means.tolist()}


class Ranking:
    """One sample sorted once by confidence, most confident first (tied rows by target,
    ascending): the prepared input of every ranking metric, so that
    :func:`~confeval.evaluate.evaluate_confidence` sorts its confidences once — its AUROC,
    AUARC, AURC, PRR, risk-coverage curve and RCE here, and the bootstrap's
    :class:`~confeval.metrics.weighted.SortedSample` — instead of once per metric.

    Each method is the public metric's own kernel (:func:`auroc_from_ranks`,
    :func:`tie_block_areas`, ...) given the sorted sample, equal to the metric on the
    unsorted arrays to rounding (the tie rule averages tied rows, so their order inside a tie
    block cannot matter; tested, ties included). Arrays are taken validated
    (:func:`~confeval._validation.as_unit_interval` and the like) and not copied.

    Examples
    --------
    >>> r = Ranking(np.array([0.9, 0.8, 0.8, 0.1]), np.array([1.0, 1.0, 0.0, 0.0]))
    >>> r.auroc(), round(r.auarc(), 4)
    (0.875, 0.7292)
    """

    def __init__(self, confidence: np.ndarray, target: np.ndarray) -> None:
        confidence = np.asarray(confidence, dtype=np.float64)
        target = np.asarray(target, dtype=np.float64)
        self.n = confidence.size
        order = np.argsort(-confidence)
        c = confidence[order]
        tie = c[1:] == c[:-1]
        if tie.any():   # identical rows next to each other: within a tie, by target
            order = np.lexsort((target, -confidence))
            c = confidence[order]
            tie = c[1:] == c[:-1]
        self.order = order
        """The permutation: ``c = confidence[order]``."""
        self.c = c
        self.t = target[order]
        self.tie = tie
        """``tie[i]``: sorted positions i and i + 1 share a confidence."""

    def _area(self, values: np.ndarray) -> tuple[float, float]:
        return _area_of_running_sums(self.tie, np.cumsum(values))

    def auroc(self) -> float:
        """:func:`auroc` (0/1 targets): each position's mid-rank from its tie block."""
        if _one_class(self.t):
            return float("nan")
        n = self.n
        if not self.tie.any():   # position i (most confident first) has rank n - i
            ranks = np.arange(n, 0, -1, dtype=np.float64)
        else:
            starts = np.flatnonzero(np.r_[True, ~self.tie])
            ends = np.r_[starts[1:], n]
            ranks = np.repeat(n - (starts + ends - 1) / 2, ends - starts)
        return float(auroc_from_ranks(ranks, self.t))

    def auarc(self) -> float:
        """:func:`auarc` with its defaults (mean integration, ties averaged)."""
        return self._area(self.t)[0]

    def aurc(self) -> float:
        """:func:`aurc` of the loss 1 - target."""
        return self._area(1.0 - self.t)[0]

    def prediction_rejection_ratio(self) -> float:
        """:func:`prediction_rejection_ratio`."""
        return _rejection_ratio(self.auarc, self.t)

    def risk_coverage_curve(self) -> tuple[np.ndarray, np.ndarray]:
        """:func:`risk_coverage_curve` of the loss 1 - target."""
        k = np.arange(1, self.n + 1, dtype=np.float64)
        return k / self.n, np.cumsum(tie_group_means(self.c, 1.0 - self.t)) / k

    def rank_calibration_error(self, n_bins: int = 20) -> float:
        """:func:`rank_calibration_error` with ``ties="block"``."""
        check_positive_int(n_bins, "n_bins")
        if self.n < 2:
            raise ValueError("rank-calibration error needs at least two samples")
        if _rce_undefined(self.c, self.t):
            return float("nan")
        return _rce_of_sorted(tie_group_means(self.c, self.t), n_bins)
