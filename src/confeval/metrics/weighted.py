"""The confidence metrics of one sample under many bootstrap resamples at once, without
re-sorting: a resample with replacement is a vector of counts over the original rows, and with
the rows sorted by confidence once, every metric is a weighted sum over the sorted rows or
their tie blocks. Metrics take the sorted weights, ``SortedSample.sort(counts)``.

Used for large inputs (``evaluate_confidence`` with at least :data:`FAST_BOOTSTRAP_ROWS` rows),
where re-sorting a million rows a thousand times took minutes: one sort, then O(n) work per
resample. The counts come from the package's one resampling engine,
:func:`confeval.metrics.bootstrap.resample_counts`. Each function is exact for given counts:
the metric of the sample in which row i is repeated ``counts[i]`` times (tested against
:func:`numpy.repeat`). Ties follow the package's
rule (AUROC: a tied pair counts one half; AUARC: the expectation over orders of a tie block).
"""

from __future__ import annotations

import numpy as np

from .calibration import uniform_bin_indices

__all__ = ["FAST_BOOTSTRAP_ROWS", "SortedSample"]

FAST_BOOTSTRAP_ROWS = 200_000
"""From this many rows on, ``evaluate_confidence`` bootstraps with counts (this module)."""


class SortedSample:
    """One sample sorted once by confidence (descending), with its tie blocks and ECE bins;
    metrics of count-weighted resamples, ``counts`` of shape (b, n) in the original order."""

    def __init__(self, confidence: np.ndarray, target: np.ndarray, n_bins: int | None = None
                 ) -> None:
        self.order = np.argsort(-confidence)
        c = confidence[self.order]
        self.t = target[self.order]
        starts = np.r_[True, c[1:] != c[:-1]]
        self.block = np.cumsum(starts) - 1          # tie block of each sorted row
        self.n_blocks = int(self.block[-1]) + 1 if c.size else 0
        self.conf = c
        self.n_bins = n_bins
        self.bins = None if n_bins is None else uniform_bin_indices(c, n_bins)
        self._harmonic = np.zeros(1)

    def harmonic(self, k: np.ndarray) -> np.ndarray:
        """H_k = sum_{j <= k} 1/j for integer-valued k (the table grows as resamples need)."""
        k = k.astype(np.int64)
        top = int(k.max()) if k.size else 0
        if top >= self._harmonic.size:
            size = max(top + 1, 2 * self._harmonic.size)
            self._harmonic = np.r_[0.0, np.cumsum(1.0 / np.arange(1, size))]
        return self._harmonic[k]

    def sort(self, counts: np.ndarray) -> np.ndarray:
        """Counts (b, n) in the original row order -> the weights of the sorted rows, which
        every metric below takes."""
        return counts[:, self.order]

    def _w(self, w: np.ndarray) -> np.ndarray:
        return w

    def _per_block(self, w: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Sum of weight x value over each tie block, per resample: (b, blocks)."""
        weighted = w * values
        if self.n_blocks == self.conf.size:  # no ties: a block is a row
            return weighted
        return np.stack([np.bincount(self.block, weights=row, minlength=self.n_blocks)
                         for row in weighted])

    def mean(self, counts: np.ndarray) -> np.ndarray:
        w = self._w(counts)
        return (w * self.t).sum(axis=1) / w.sum(axis=1)

    def brier(self, counts: np.ndarray) -> np.ndarray:
        w = self._w(counts)
        return (w * (self.conf - self.t) ** 2).sum(axis=1) / w.sum(axis=1)

    def ece(self, counts: np.ndarray) -> np.ndarray:
        w = self._w(counts)
        diff = w * (self.t - self.conf)
        gap = np.stack([np.bincount(self.bins, weights=row, minlength=self.n_bins)
                        for row in diff])
        return np.abs(gap).sum(axis=1) / w.sum(axis=1)

    def auroc(self, counts: np.ndarray) -> np.ndarray:
        """Weighted Mann-Whitney over tie blocks (binary targets); NaN with one class."""
        w = self._w(counts)
        pos = self._per_block(w, self.t)
        neg = self._per_block(w, 1.0 - self.t)
        # blocks are in descending confidence: a positive beats the negatives after it
        neg_below = neg[:, ::-1].cumsum(axis=1)[:, ::-1] - neg
        wins = (pos * (neg_below + 0.5 * neg)).sum(axis=1)
        total = pos.sum(axis=1) * neg.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(total > 0, wins / np.where(total > 0, total, 1), np.nan)

    def auarc(self, counts: np.ndarray) -> np.ndarray:
        """The mean of the running accuracies over k = 1..n of the resample, tie blocks in
        closed form (see :func:`confeval.metrics.selective.auarc`)."""
        w = self._w(counts)
        length = self._per_block(w, np.ones_like(self.t))
        sums = self._per_block(w, self.t)
        ends = length.cumsum(axis=1)
        starts = ends - length
        c_start = sums.cumsum(axis=1) - sums
        with np.errstate(invalid="ignore", divide="ignore"):
            m = np.where(length > 0, sums / np.where(length > 0, length, 1), 0.0)
        harmonic = self.harmonic(ends) - self.harmonic(starts)
        total = ((c_start - starts * m) * harmonic + length * m).sum(axis=1)
        return total / ends[:, -1]
