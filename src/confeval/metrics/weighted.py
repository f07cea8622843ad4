"""The confidence metrics of one sample under many bootstrap resamples at once, without
re-sorting: a resample with replacement is a vector of counts over the original rows, and with
the rows sorted by confidence once, every metric is a weighted sum over the sorted rows or
their tie blocks. Metrics take the sorted weights, ``SortedSample.sort(counts)``.

Used for large inputs (``evaluate_confidence`` with at least :data:`FAST_BOOTSTRAP_ROWS` rows),
where re-sorting a million rows a thousand times took minutes: one sort, then a few passes over
the (b, n) weights per block of b resamples — the weighted sums as one matrix product, the ECE
bins and tie blocks as contiguous ranges of the sorted rows, AUROC and AUARC from the running
position of each row (one cumulative sum) in closed form. The counts come from the package's
one resampling engine, :func:`confeval.metrics.bootstrap.resample_counts`. Each function is
exact for given counts: the metric of the sample in which row i is repeated ``counts[i]`` times
(tested against :func:`numpy.repeat`). Ties follow the package's
rule (AUROC: a tied pair counts one half; AUARC: the expectation over orders of a tie block).
"""

from __future__ import annotations

import numpy as np

from .calibration import ece_from_bin_sums, uniform_bin_indices
from .selective import harmonic_numbers, tie_block_areas

__all__ = ["FAST_BOOTSTRAP_ROWS", "SortedSample"]

FAST_BOOTSTRAP_ROWS = 200_000
"""From this many rows on, ``evaluate_confidence`` bootstraps with counts (this module)."""


class SortedSample:
    """One sample sorted once by confidence (descending), with its tie blocks and ECE bins;
    metrics of count-weighted resamples, ``counts`` of shape (b, n) in the original order,
    taken as weights of the sorted rows (:meth:`sort`).

    :meth:`metrics` computes them all from one block, sharing the passes they have in common;
    the single-metric methods are the same formulas one at a time."""

    def __init__(self, confidence: np.ndarray, target: np.ndarray, n_bins: int | None = None
                 ) -> None:
        self.order = np.argsort(-confidence)
        c = confidence[self.order]
        self.t = target[self.order]
        self.conf = c
        starts = np.r_[True, c[1:] != c[:-1]]
        self.block_starts = np.flatnonzero(starts)   # tie blocks: contiguous sorted rows
        self.n_blocks = self.block_starts.size
        self.tied = self.n_blocks < c.size
        self.binary = bool(((self.t == 0) | (self.t == 1)).all())
        # the weighted sums every resample needs, as one (n, 3) matrix: target, 1, squared error
        self._columns = np.stack([self.t, np.ones_like(c), (c - self.t) ** 2], axis=1)
        self.n_bins = n_bins
        self.bins = None if n_bins is None else uniform_bin_indices(c, n_bins)
        if self.bins is not None:   # descending confidences: each bin is a contiguous range
            cuts = np.flatnonzero(self.bins[1:] != self.bins[:-1]) + 1
            self._bin_ranges = list(zip(np.r_[0, cuts], np.r_[cuts, c.size]))
        self._gap = self.t - c
        self._scored = np.flatnonzero(self.t != 0)   # rows whose target adds to AUARC
        self._harmonic = np.zeros(1)

    def harmonic(self, k: np.ndarray) -> np.ndarray:
        """H_k for integer-valued k >= 0 from a table (:func:`~.selective.harmonic_numbers`,
        grown as resamples need)."""
        k = k.astype(np.int64)
        top = int(k.max()) if k.size else 0
        if top >= self._harmonic.size:
            self._harmonic = harmonic_numbers(np.arange(max(top + 1, 2 * self._harmonic.size),
                                                        dtype=np.float64))
        return self._harmonic[k]

    def sort(self, counts: np.ndarray) -> np.ndarray:
        """Counts (b, n) in the original row order -> the weights of the sorted rows, which
        every metric below takes. (A resample's counts are exchangeable over rows, so a
        bootstrap may also draw them for the sorted rows directly.)"""
        return counts[:, self.order]

    # ------------------------------------------------------------------ metrics
    def metrics(self, w: np.ndarray) -> dict[str, np.ndarray]:
        """Every metric of the b resamples of ``w`` (b, n): accuracy (the mean target), Brier
        and ECE (when bins were given), AUROC (binary targets) and AUARC."""
        sums = w @ self._columns                  # (b, 3): sum w t, sum w, sum w (c - t)^2
        total = sums[:, 1]
        out = {"accuracy": sums[:, 0] / total}
        if self.bins is not None:
            out["brier"] = sums[:, 2] / total
            out["ece"] = self._ece(w, total)
        ends = np.cumsum(w, axis=1)               # each sorted row's last position
        if self.binary:
            out["auroc"] = self._auroc(w, ends, sums[:, 0], total)
        out["auarc"] = self._auarc(w, ends, total)
        return out

    def mean(self, w: np.ndarray) -> np.ndarray:
        sums = w @ self._columns
        return sums[:, 0] / sums[:, 1]

    def brier(self, w: np.ndarray) -> np.ndarray:
        sums = w @ self._columns
        return sums[:, 2] / sums[:, 1]

    def ece(self, w: np.ndarray) -> np.ndarray:
        return self._ece(w, w.sum(axis=1))

    def auroc(self, w: np.ndarray) -> np.ndarray:
        """Weighted Mann-Whitney (binary targets): a tied pair counts one half; NaN with one
        class."""
        return self._auroc(w, np.cumsum(w, axis=1), w @ self.t, w.sum(axis=1))

    def auarc(self, w: np.ndarray) -> np.ndarray:
        """The mean of the running accuracies over k = 1..N of the resample, tie blocks in
        closed form (see :func:`confeval.metrics.selective.auarc`)."""
        return self._auarc(w, np.cumsum(w, axis=1), w.sum(axis=1))

    # ------------------------------------------------------------------ formulas
    def _ece(self, w: np.ndarray, total: np.ndarray) -> np.ndarray:
        # the items sorted by confidence hold each bin in one contiguous range
        gaps = np.stack([w[:, a:b] @ self._gap[a:b] for a, b in self._bin_ranges], axis=1)
        return ece_from_bin_sums(gaps, total)

    def _blocks(self, w: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(weight, weighted target) of every tie block, (b, blocks)."""
        last = np.r_[self.block_starts[1:], w.shape[1]] - 1
        block_ends = ends[:, last]
        length = np.diff(block_ends, axis=1, prepend=0.0)
        cum_t = np.cumsum(w * self.t, axis=1)[:, last]
        return length, np.diff(cum_t, axis=1, prepend=0.0)

    def _auroc(self, w, ends, positives, total) -> np.ndarray:
        negatives = total - positives
        if self.tied:
            length, pos = self._blocks(w, ends)
            neg = length - pos
            neg_after = negatives[:, None] - np.cumsum(neg, axis=1)
            wins = (pos * (neg_after + 0.5 * neg)).sum(axis=1)
        else:
            # every copy of a negative row j is outranked by the positive copies before it:
            # its end position e_j minus the negative copies up to it, C_j; and
            # sum_j w_j C_j = (N-^2 + sum_j w_j^2) / 2 over the negative rows
            neg_t = 1.0 - self.t
            at_negatives = np.einsum("ij,ij,j->i", w, ends, neg_t)
            squares = np.einsum("ij,ij,j->i", w, w, neg_t)
            wins = at_negatives - (negatives ** 2 + squares) / 2
        pairs = positives * negatives
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(pairs > 0, wins / np.where(pairs > 0, pairs, 1.0), np.nan)

    def _auarc(self, w, ends, total) -> np.ndarray:
        if self.tied:
            length, sums = self._blocks(w, ends)
            block_ends = np.cumsum(length, axis=1)
            starts = block_ends - length
            c_start = np.cumsum(sums, axis=1) - sums
            with np.errstate(invalid="ignore", divide="ignore"):
                m = np.where(length > 0, sums / np.where(length > 0, length, 1), 0.0)
            return tie_block_areas(c_start, starts, block_ends, m,
                                   self.harmonic).sum(axis=1) / total
        # rows untied: row i's k copies hold positions (s, e], each target t_i, and
        # N AUARC = sum_i t_i sum_{p=s+1}^{e} (H_N - H_{p-1})
        #         = sum_i t_i [k (H_N + 1) - e H_e + s H_s]   (sum_{j<e} H_j = e H_e - e)
        scored = self._scored
        k, e, t = w[:, scored], ends[:, scored], self.t[scored]
        s = e - k
        h_total = self.harmonic(total)
        inner = k * (h_total[:, None] + 1) - e * self.harmonic(e) + s * self.harmonic(s)
        return (inner @ t) / total
