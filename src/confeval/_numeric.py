"""Numeric helpers shared by every layer (the one softmax of the package)."""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["LOGPROB_SLACK", "aggregate_tree", "as_logprob", "as_logprobs", "mean_std",
           "mid_ranks", "ones", "rank_bounds", "softmax"]


def softmax(values: ArrayLike, dtype=np.float64, *, axis: int = -1) -> np.ndarray:
    """Softmax along ``axis``, computed in ``dtype``.

    ``exp(z - max z) / sum exp(z - max z)``, the same operations as
    :func:`scipy.special.softmax` (so results are bit-identical to it in float64). NaN entries
    (options a question does not have, rating tokens never scored) get probability 0. The sets
    suite passes ``dtype=np.float32`` to match the published benchmark, which worked in float32.

    Examples
    --------
    >>> softmax([[0.0, 0.0], [0.0, float("nan")]]).tolist()
    [[0.5, 0.5], [1.0, 0.0]]
    """
    z = np.asarray(values, dtype=dtype)
    z = np.where(np.isnan(z), -np.inf, z)
    z = z - np.max(z, axis=axis, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


LOGPROB_SLACK = 1e-6
"""How far above 0 a log-probability read from a file may lie and still be read (as 0): a
log-softmax computed in low precision can leave a near-certain token a rounding error above
0, where +5.0 or +inf is no probability at all."""


def as_logprob(value: float) -> float | None:
    """``value`` read as a log-probability: itself (up to :data:`LOGPROB_SLACK` above 0 read as
    0), or None when it cannot be one (NaN, +-inf, above 0).

    Examples
    --------
    >>> as_logprob(-0.5), as_logprob(1e-9), as_logprob(5.0), as_logprob(float("-inf"))
    (-0.5, 0.0, None, None)
    """
    if not math.isfinite(value) or value > LOGPROB_SLACK:
        return None
    return min(value, 0.0)


def as_logprobs(values: ArrayLike) -> np.ndarray | None:
    """:func:`as_logprob` of every value, or None when any cannot be a log-probability."""
    arr = np.asarray(values, dtype=np.float64)
    if not np.isfinite(arr).all() or (arr > LOGPROB_SLACK).any():
        return None
    return np.minimum(arr, 0.0)


def _tie_blocks(values: ArrayLike, axis: int, *, nan_ties: bool = False
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(ascending order, first and last sorted index of each sorted position's block of
    equal values) of ``values`` along ``axis`` (moved last); NaNs sort last, each a block of
    its own unless ``nan_ties``."""
    x = np.moveaxis(np.asarray(values, dtype=np.float64), axis, -1)
    n = x.shape[-1]
    order = np.argsort(x, axis=-1)
    ordered = np.take_along_axis(x, order, axis=-1)
    position = np.broadcast_to(np.arange(n), x.shape)
    new = np.ones(x.shape, dtype=bool)
    new[..., 1:] = ordered[..., 1:] != ordered[..., :-1]
    if nan_ties:
        new[..., 1:] &= ~(np.isnan(ordered[..., 1:]) & np.isnan(ordered[..., :-1]))
    # each position's block: first index (running max of block starts) and last index
    # (running min, from the right, of block ends)
    first = np.maximum.accumulate(np.where(new, position, 0), axis=-1)
    last_of_block = np.ones(x.shape, dtype=bool)
    last_of_block[..., :-1] = new[..., 1:]
    last = np.flip(np.minimum.accumulate(np.flip(np.where(last_of_block, position, n), -1),
                                         axis=-1), -1)
    return order, first, last


def _unsorted(order: np.ndarray, sorted_values: np.ndarray, axis: int) -> np.ndarray:
    out = np.empty(order.shape)
    np.put_along_axis(out, order, sorted_values, axis=-1)
    return np.moveaxis(out, -1, axis)


def mid_ranks(values: ArrayLike, axis: int = -1) -> np.ndarray:
    """Ranks 1..n along ``axis`` with tied values given the mean of their ranks — exactly
    ``scipy.stats.rankdata(values, method="average", axis=axis)`` (mid-ranks are halves, so
    the floats are the same), in numpy so that the metrics do not import scipy.stats (half a
    second of start-up).

    Examples
    --------
    >>> mid_ranks([0.5, 0.1, 0.5, 0.9]).tolist()
    [2.5, 1.0, 2.5, 4.0]
    """
    order, first, last = _tie_blocks(values, axis)
    return _unsorted(order, (first + last) / 2 + 1, axis)


def rank_bounds(values: ArrayLike, axis: int = -1) -> tuple[np.ndarray, np.ndarray]:
    """(lowest, highest) rank 1..n of each value along ``axis``, smallest value first: a
    value tied with others takes the lowest rank of its block in the first array and the
    highest in the second — ``scipy.stats.rankdata`` with ``method="min"`` and
    ``method="max"`` — as integers. NaN sorts after every number; NaNs tie with each other.

    Examples
    --------
    >>> [r.tolist() for r in rank_bounds([0.5, 0.1, 0.5, 0.9])]
    [[2, 1, 2, 4], [3, 1, 3, 4]]
    """
    order, first, last = _tie_blocks(values, axis, nan_ties=True)
    return (_unsorted(order, first + 1, axis).astype(np.int64),
            _unsorted(order, last + 1, axis).astype(np.int64))


@functools.lru_cache(maxsize=256)
def ones(n: int) -> np.ndarray:
    """A read-only float64 vector of ``n`` ones, made once per length: ``a.dot(ones(n))`` sums
    the rows of a small matrix in one BLAS call, cheaper than a ufunc reduction's set-up, and
    ``np.matmul(stack, ones(n))`` sums a stack's rows in the same order, matrix by matrix."""
    out = np.ones(n)
    out.flags.writeable = False
    return out


def mean_std(values: Sequence, ddof: int) -> dict | None:
    """``{"mean", "std"}`` of the non-None values (None if there are none)."""
    vals = np.array([v for v in values if v is not None], dtype=np.float64)
    if vals.size == 0:
        return None
    return {"mean": float(vals.mean()),
            "std": float(vals.std(ddof=ddof)) if vals.size > 1 else 0.0}


def aggregate_tree(items: Sequence, ddof: int):
    """:func:`mean_std` of every numeric leaf across per-seed trees of dicts; a key missing in
    some trees is aggregated over the trees that have it."""
    present = [v for v in items if v is not None]
    if not present:
        return None
    if isinstance(present[0], Mapping):
        keys = sorted(set().union(*present), key=str)
        return {k: aggregate_tree([v.get(k) for v in present], ddof) for k in keys}
    return mean_std(present, ddof)
