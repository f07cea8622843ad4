"""The confidence metrics of one sample under many bootstrap resamples at once, without
re-sorting: a resample with replacement is a vector of counts over the rows, and with the rows
sorted by confidence once, every metric is a weighted sum over the sorted rows or their tie
blocks.

The rows are sorted once (by confidence, descending) and identical rows — the same confidence
and the same target — merged into *cells* with their multiplicity g: a resample's count of a
cell is the sum of its rows' counts, and every metric below depends on the counts only through
these sums. The cells are cut into *chunks* of about :data:`CHUNK_CELLS` cells at tie-block
boundaries, and a block of resamples is processed chunk by chunk, carrying each resample's
running position, positives and negatives from one chunk to the next: every pass works on a
(resamples, chunk) array that stays in the processor's cache.

From :data:`COMPILED_BOOTSTRAP_ROWS` rows on, with numba installed, the pass over an untied
chunk is one compiled loop per resample (:mod:`._compiled`): the same random words, the same
resamples, the same formulas from its sums on.

:meth:`SortedSample.bootstrap` draws the ordinary (multinomial) bootstrap directly as counts of
the cells, chunk by chunk, exactly in distribution: the number of a resample's n draws that
fall in each chunk is Multinomial(n, rows of the chunk / n) (``numpy``'s multinomial over the
chunks); given that, the draws in a chunk are uniform over its rows — drawn as row numbers and
counted (``bincount``), or, in a chunk with many rows per cell (heavy ties), as one
Multinomial over its cells. A row number is ``Generator.integers``'s, or, in a chunk of 2^k rows
(k <= 16: every chunk but the last of untied confidences, 8,192 = 2^13 rows), the top k of 16
uniform bits of the bit generator's raw output, four from each 64-bit word — uniform over the
2^k rows with no rejection, at a third of the cost. Nothing is approximated: the counts have
the distribution of ``bincount(rng.integers(0, n, n))`` summed over the cells. Each metric is
exact for given counts: the metric of the sample in which row i is repeated ``counts[i]`` times
(tested against :func:`numpy.repeat` and against the index bootstrap given the same resample
indices).

Formulas, for a resample with N draws and cells in descending confidence, a tie block B of
cells holding positions (s_B, e_B] with L_B = e_B - s_B draws of which S_B are positive (the
weighted target):

* accuracy = sum S / N; Brier = sum_w (c - t)^2 / N; ECE from each bin's sum of w (t - c)
  (a bin is a contiguous range of cells);
* AUROC (binary targets) = 1 - A / (P N-), A = sum_B pos_B (negatives up to B) - pos_B neg_B / 2
  = sum_B pos_B e_B - (P^2 + sum_B pos_B^2) / 2 - sum_B pos_B neg_B / 2 (a tied pair counts one
  half; untied cells have pos neg = 0);
* AUARC: N AUARC = sum_p target_p (H_N - H_{p-1}) = (H_N + 1) sum S - sum_B m_B (F(e_B) -
  F(s_B)), F(k) = k H_k, m_B = S_B / L_B the block's mean target (a tie block counts at its
  mean: the expectation over the orders of its rows, as :func:`~.selective.auarc`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator

import numpy as np

from .calibration import uniform_bin_indices
from .selective import Ranking, harmonic_numbers

__all__ = ["CHUNK_CELLS", "COMPILED_BOOTSTRAP_ROWS", "FAST_BOOTSTRAP_ROWS", "RESAMPLE_BLOCK",
           "SortedSample"]

FAST_BOOTSTRAP_ROWS = 50
"""From this many rows on, the bootstrap of ``evaluate_confidence`` draws counts over one sort
(this module); below, the index route (``bootstrap_ci`` per metric). Why 50: the two routes
cost the same CPU time between 20 and 40 rows (1,000 resamples of five metrics, index vs
counts, best of 5 on a loaded 2-core machine, 2026-11-26: 20 rows 6 vs 9 ms, 40 rows 15 vs 8 ms,
60 rows 19 vs 9 ms, 200 rows 69 vs 11 ms; the counts route is faster from 50 rows on), and
the recorded lm-eval run of ``tests/fixtures/integrations/lm_eval`` (40 rows, its ECE interval
reported by lm-eval through confeval's aggregation) stays what confeval gives; it can only be
remade by running lm-eval."""

CHUNK_CELLS = 8192
"""Cells per chunk: a (resamples, chunk) float64 array of :data:`RESAMPLE_BLOCK` rows is 1 MB."""

RESAMPLE_BLOCK = 16
"""Resamples drawn and evaluated together; each block has its own random stream."""

_DENSE = 16
"""A chunk with more rows per cell than this draws its cells' counts as one multinomial per
resample (about 50 ns a cell) rather than one row number per draw (about 6 ns a draw)."""

_RUN_SHARE = 0.75
"""An untied chunk whose targets change at fewer than this share of its cells evaluates the
position terms at those cells only (0/1 targets change at about a third of them)."""

_TABLE_PIECE = 1 << 20
"""Entries of the F(k) = k H_k table computed at once."""

_MAX_BLOCK_ELEMENTS = 2_000_000
"""Resamples x cells of one chunk held at once (a chunk larger than a block of resamples
allows, e.g. one tie block of a million distinct graded targets, is taken a few rows at a
time)."""


COMPILED_BOOTSTRAP_ROWS = 1_000_000
"""From this many rows on, :meth:`SortedSample.bootstrap` passes over untied chunks with the
compiled kernel when numba is installed (the extra ``fast``; :mod:`._compiled`). Why 10^6:
importing numba and compiling take ~2 s in each process, and the kernel saves ~4 s of the
~9 s that 1,000 resamples of 10^6 rows take on two cores (2026-11-27): below ~5 x 10^5 rows
compiling costs more than it saves."""

_ROUTE = "auto"
"""The untied chunks' pass: ``"auto"`` compiled from :data:`COMPILED_BOOTSTRAP_ROWS` rows on
when numba is installed, ``"numpy"``, or ``"compiled"`` at any size (numba required; tests
and benchmarks)."""

_NO_ENDS = np.zeros(0, dtype=np.int64)

_PREFIX_BLOCK = 16
_PREFIX_ONES = np.triu(np.ones((_PREFIX_BLOCK, _PREFIX_BLOCK)))


def _prefix_sums(w: np.ndarray) -> np.ndarray:
    """Running sums along the rows of ``w`` (b, m): integral float64 counts, so every partial
    sum is an exact integer below 2^53 and the order of additions does not matter.

    Why not ``np.cumsum``: numpy's accumulate holds the GIL (numpy 2.4: two threads each
    running it take as long as one running both), which kept the bootstrap's blocks from
    sharing the cores. Here the sums within runs of 16 are one matrix product (BLAS, which
    releases the GIL, and about 3x faster than the accumulate), and only the 16-times-shorter
    sums of the runs' totals are accumulated."""
    b, m = w.shape
    runs = m // _PREFIX_BLOCK
    head = runs * _PREFIX_BLOCK
    if not runs:
        return np.cumsum(w, axis=1)
    within = w[:, :head].reshape(b, runs, _PREFIX_BLOCK) @ _PREFIX_ONES   # (a new array)
    totals = within[:, :, -1]
    before = np.cumsum(totals, axis=1)
    before -= totals
    within += before[:, :, None]
    sums = within.reshape(b, head)
    if head == m:
        return sums
    rest = np.cumsum(w[:, head:], axis=1)
    rest += sums[:, -1:]
    return np.concatenate([sums, rest], axis=1)


class _Chunk:
    """One chunk of cells [a, z): what every resample's pass over it needs."""

    __slots__ = ("a", "bits", "blocks", "cellmap", "cols", "compilable", "dense", "dt", "dt_sum",
                 "gap", "m", "p", "rows", "run_ends", "seg_bins", "seg_starts", "t", "z")

    def __init__(self, sample: SortedSample, a: int, z: int, bins: np.ndarray | None,
                 sq: np.ndarray, gap: np.ndarray) -> None:
        self.a, self.z, self.m = a, z, z - a
        g = sample.g[a:z]
        self.rows = int(g.sum())
        self.dense = self.rows > _DENSE * self.m
        # rows a power of two up to 2^16: a row number is the top bits of 16 random bits
        self.bits = self.rows.bit_length() - 1 \
            if self.rows & (self.rows - 1) == 0 and 1 < self.rows <= 1 << 16 else None
        self.p = g / self.rows if self.dense else None
        self.cellmap = None if self.dense or self.rows == self.m else \
            np.repeat(np.arange(self.m, dtype=np.intp), g)
        t = sample.t[a:z]
        self.t = t
        self.dt = t - np.r_[t[1:], 0.0]
        self.dt_sum = float(self.dt.sum())
        # the cells where dt is not 0 (the last of each run of equal targets): only there do
        # the telescoped sums of the untied pass need the running position
        ends = np.flatnonzero(self.dt)
        self.run_ends = ends if ends.size <= _RUN_SHARE * self.m else None
        if self.run_ends is not None:   # only these are read (and kept: less memory)
            self.dt = self.dt[ends]
        bs = sample.block_starts          # sorted: this chunk's tie blocks by bisection
        first, last = np.searchsorted(bs, [a, z])
        starts = bs[first:last] - a
        self.blocks = None if starts.size == self.m else starts   # None: every cell a block
        cols = [t]        # the weighted sums: sum w t, sum w (c - t)^2, each bin's sum w (t - c)
        self.seg_starts = self.seg_bins = None
        self.gap = None
        if bins is not None:
            cols.append(sq[a:z])
            bins = bins[a:z]
            seg = np.flatnonzero(np.r_[True, bins[1:] != bins[:-1]])
            self.seg_bins = bins[seg]
            if seg.size <= 8:      # a few bins: one column each in the one matrix product
                gap = gap[a:z]
                for s, e in zip(seg, np.r_[seg[1:], self.m]):
                    col = np.zeros(self.m)
                    col[s:e] = gap[s:e]
                    cols.append(col)
            else:
                self.seg_starts = seg
                self.gap = gap[a:z]
        self.cols = np.ascontiguousarray(np.stack(cols, axis=1), dtype=np.float64)
        # what the compiled pass takes (:mod:`._compiled`): untied cells of one row each, 2^k
        # of them, with the bins (if any) among the weighted sums
        self.compilable = (self.blocks is None and self.bits is not None and self.rows == self.m
                           and self.seg_starts is None)
        if self.compilable:   # the kernel's argument types, fixed (one compiled signature)
            self.dt = np.ascontiguousarray(self.dt, dtype=np.float64)
            if self.run_ends is not None:
                self.run_ends = self.run_ends.astype(np.int64)


class SortedSample:
    """One sample sorted once by confidence (descending), its identical rows merged into cells,
    with its tie blocks, ECE bins and chunks; metrics of count-weighted resamples.

    ``metrics(w)`` takes counts of the cells (b, K) — :meth:`sort` turns counts of the rows
    (b, n), in the original order, into them — and gives every metric of the b resamples;
    :meth:`bootstrap` draws the ordinary bootstrap's counts itself, chunk by chunk.
    ``ranking`` (:class:`~confeval.metrics.selective.Ranking` of the same arrays) and ``bins``
    (each row's ECE bin, :func:`~confeval.metrics.calibration.bin_indices`) are the sort and the
    binning of the point metrics, taken rather than made again."""

    def __init__(self, confidence: np.ndarray, target: np.ndarray, n_bins: int | None = None,
                 chunk: int = CHUNK_CELLS, ranking: Ranking | None = None,
                 bins: np.ndarray | None = None) -> None:
        # the one sort (by confidence, descending; within a tie by target, so that identical
        # rows are next to each other), shared with the point metrics when ``ranking`` is given
        ranking = ranking or Ranking(confidence, target)
        self.n = n = ranking.n
        c, t, tied = ranking.c, ranking.t, ranking.tie
        self.order = ranking.order
        new_cell = np.r_[True, ~tied | (t[1:] != t[:-1])]
        starts = np.flatnonzero(new_cell)
        self.starts = starts                              # each cell's first sorted row
        self.g = np.diff(np.r_[starts, n])                # rows per cell
        # (no copy when every row is its own cell)
        self.c, self.t = (c, t) if starts.size == n else (c[starts], t[starts])
        self.K = starts.size
        self.binary = bool(((self.t == 0) | (self.t == 1)).all())
        self.block_starts = np.flatnonzero(np.r_[True, self.c[1:] != self.c[:-1]])
        self.tied = self.block_starts.size < n           # rows share a confidence somewhere
        self.n_bins = n_bins
        if n_bins is None:
            bins = None
        elif bins is None:
            bins = uniform_bin_indices(self.c, n_bins)
        else:   # each row's bin, given in the original order (elementwise: the same bins)
            bins = bins[self.order] if starts.size == n else bins[self.order[starts]]
        sq = (self.c - self.t) ** 2
        gap = self.t - self.c
        # chunks: about ``chunk`` cells each, cut where a tie block starts
        wanted = np.arange(0, self.K, max(1, chunk))
        at = np.searchsorted(self.block_starts, wanted)
        cuts = np.unique(self.block_starts[at[at < self.block_starts.size]])
        bounds = np.r_[cuts, self.K]
        self.chunks = [_Chunk(self, int(a), int(z), bins, sq, gap)
                       for a, z in itertools.pairwise(bounds)]
        self.chunk_rows = np.array([ch.rows for ch in self.chunks], dtype=np.float64)
        self.compilable = any(ch.compilable for ch in self.chunks)
        # F(k) for every position a resample of n draws reaches, made once (not grown by the
        # threads that share the blocks)
        self._f = np.zeros(1)
        self._xh(n)

    @property
    def _kernel(self) -> Callable | None:
        """The compiled untied pass if this sample takes it (:data:`_ROUTE`), else ``None``."""
        if _ROUTE == "numpy" or (_ROUTE == "auto" and (
                self.n < COMPILED_BOOTSTRAP_ROWS or not self.compilable)):
            return None   # (a tied sample has no chunk to compile: no numba, no compiling)
        from . import _compiled

        kernel = _compiled.untied_pass()
        if kernel is None and _ROUTE == "compiled":
            raise RuntimeError("the compiled bootstrap pass needs numba (pip install "
                               f"'confeval[fast]'): {_compiled.unavailable()}")
        return kernel

    # ------------------------------------------------------------------ helpers
    def _xh(self, top: int) -> np.ndarray:
        """F(k) = k H_k for k = 0..top (at least), from a table grown as resamples need."""
        if top >= self._f.size:
            size = max(top + 1, 2 * self._f.size)
            f = np.empty(size)
            for a in range(0, size, _TABLE_PIECE):   # in pieces: few temporaries at 10^7
                k = np.arange(a, min(a + _TABLE_PIECE, size), dtype=np.float64)
                f[a:a + k.size] = k * harmonic_numbers(k)
            self._f = f
        return self._f

    def sort(self, counts: np.ndarray) -> np.ndarray:
        """Counts (b, n) of the rows in the original order -> counts (b, K) of the cells, which
        :meth:`metrics` takes."""
        counts = np.atleast_2d(np.asarray(counts, dtype=np.float64))[:, self.order]
        return np.add.reduceat(counts, self.starts, axis=1)

    # ------------------------------------------------------------------ metrics
    def metrics(self, w: np.ndarray) -> dict[str, np.ndarray]:
        """Every metric of the b resamples of cell counts ``w`` (b, K): accuracy (the mean
        target), Brier and ECE (when bins were given), AUROC (binary targets) and AUARC."""
        w = np.atleast_2d(np.asarray(w))
        state = self._state(w.shape[0])
        for ch in self.chunks:
            self._pass(ch, w[:, ch.a:ch.z], state)
        return self._finish(state)

    def bootstrap(self, n_resamples: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
        """Every metric of ``n_resamples`` ordinary bootstrap resamples drawn with ``rng``:
        n draws with replacement each, as counts of the cells, chunk by chunk (exact in
        distribution, see the module docstring)."""
        state = self._state(n_resamples)
        totals = rng.multinomial(self.n, self.chunk_rows / self.n, size=n_resamples)
        kernel = self._kernel
        for j, ch in enumerate(self.chunks):
            if kernel is not None and ch.compilable:
                self._compiled_pass(kernel, ch, totals[:, j], rng, state)
            else:
                self._pass(ch, self._draw(ch, totals[:, j], rng), state)
        return self._finish(state)

    def _draw(self, ch: _Chunk, d: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Counts (b, m) of the chunk's cells given each resample's draws ``d`` in it."""
        b = d.size
        if ch.dense:
            return np.stack([rng.multinomial(int(k), ch.p) for k in d])
        draws = self._row_draws(ch, int(d.sum()), rng)
        if ch.cellmap is not None:
            draws = ch.cellmap[draws]
        # every draw offset by its resample, then one count of them all: a count per
        # resample (16 calls) cost less CPU alone, but two threads counting that way ran no
        # faster than one (numpy 2.4, measured; one count of all 131,072 draws ran 1.7x
        # faster on two), which kept the blocks from sharing the cores
        draws = draws + np.repeat(np.arange(0, b * ch.m, ch.m), d)
        return np.bincount(draws, minlength=b * ch.m).reshape(b, ch.m)

    @staticmethod
    def _row_draws(ch: _Chunk, total: int, rng: np.random.Generator) -> np.ndarray:
        """``total`` row numbers drawn uniformly over the chunk's rows."""
        if ch.bits is None:
            return rng.integers(0, ch.rows, size=total)
        # 2^k rows: the top k of 16 uniform bits, four numbers from each 64-bit word
        draws = rng.bit_generator.random_raw((total + 3) // 4).view(np.uint16)[:total]
        draws >>= 16 - ch.bits
        return draws

    def _compiled_pass(self, kernel: Callable, ch: _Chunk, d: np.ndarray,
                       rng: np.random.Generator, st: dict) -> None:
        """:meth:`_pass` of an untied chunk (:attr:`_Chunk.compilable`) from its draws, the
        counting and the sums done by the compiled kernel (:mod:`._compiled`): the same random
        words, so the same resamples, and the same formulas from the kernel's sums on."""
        b = d.size
        draws = self._row_draws(ch, int(d.sum()), rng)
        sums = np.empty((b, ch.cols.shape[1]))
        rise, squares, total = np.empty(b), np.empty(b), np.empty(b)
        start_at = st["ends"].astype(np.int64)
        every_cell = ch.run_ends is None
        f = self._xh(int((start_at + d).max()))   # positions reached: in the table made once
        kernel(draws, d.astype(np.int64), ch.cols, ch.dt,
               _NO_ENDS if every_cell else ch.run_ends, every_cell, f, start_at, sums, rise,
               squares, total)
        pos_before = self._add_sums(ch, sums, None, st)
        self._add_untied(sums, pos_before, total, rise, squares, st)

    def _state(self, b: int) -> dict:
        z = np.zeros(b)
        state = {"N": z.copy(), "S": z.copy(), "sq": z.copy(), "ends": z.copy(),
                 "pe": z.copy(), "area": z.copy()}
        if self.n_bins is not None:   # closed bins' |sum w (t - c)|, the open bin's sum
            state.update(ece=z.copy(), ece_open=z.copy(), open_bin=np.full(1, -1))
        return state

    def _pass(self, ch: _Chunk, w: np.ndarray, st: dict) -> None:
        """Add one chunk's part of every sum, carrying the running position forward."""
        b = w.shape[0]
        step = max(1, _MAX_BLOCK_ELEMENTS // max(ch.m, 1))
        if b > step:   # a huge chunk: a few resamples at a time (rows are independent)
            for r0 in range(0, b, step):   # (views: each part adds to its resamples' sums)
                part = {k: v.copy() if k == "open_bin" else v[r0:r0 + step]
                        for k, v in st.items()}   # the bin left open is every part's
                self._pass(ch, w[r0:r0 + step], part)
            if "open_bin" in st:
                st["open_bin"][0] = ch.seg_bins[-1]
            return
        w = np.asarray(w, dtype=np.float64)   # counts: drawn integers or integral floats
        sums = w @ ch.cols
        pos_before = self._add_sums(ch, sums, w, st)
        carry = st["ends"]
        if ch.blocks is None:          # every cell its own tie block: cells are blocks
            # with local[k] the draws up to cell k in this chunk and e = carry + local, both
            # sums telescope over the cells (dt = t - the next cell's t, 0 after the last):
            # sum_k t_k (F(e_k) - F(e_{k-1})) = sum_k (F(e_k) - F(carry)) dt_k, and
            # sum_k pos_k e_k - sum_k pos_k^2 / 2 = carry P_chunk + sum_k local_k^2 dt_k / 2,
            # from which the AUROC's sum_k pos_k (negatives up to k) = that - (positives
            # before) P_chunk - P_chunk^2 / 2: exact integers below 2^53
            # (the running positions are sums of integral floats, exact; as integers they
            # index the table F directly)
            # (a cell with dt = 0 adds nothing to either: where they are many, the cells that
            # end a run of equal targets are taken alone)
            local_f = _prefix_sums(w)
            total = local_f[:, -1].copy()
            dt = ch.dt   # (at the run ends only, where they are taken alone)
            if ch.run_ends is not None:
                local_f = local_f[:, ch.run_ends]
            start_at = carry.astype(np.int64)
            f = self._xh(int((start_at + total).max()))
            # F(e) - F(carry), small beside F(e) itself: their sum loses little to rounding
            f_start = f.take(start_at)
            local = local_f.astype(np.int64)
            local += start_at[:, None]
            rise = f.take(local)
            rise -= f_start[:, None]
            squares = None
            if self.binary:
                local_f *= local_f
                squares = local_f @ dt
            self._add_untied(sums, pos_before, total, rise @ dt, squares, st)
            return
        length = np.add.reduceat(w, ch.blocks, axis=1)
        st["N"] += length.sum(axis=1)
        sums_b = np.add.reduceat(w * ch.t, ch.blocks, axis=1)
        neg_before = carry - pos_before
        ends = _prefix_sums(length)
        ends += carry[:, None]
        carry[:] = ends[:, -1]
        if self.binary:   # sum_B pos_B (negatives up to B) - pos_B neg_B / 2
            neg = length - sums_b
            cum_neg = _prefix_sums(neg)   # (binary targets: integral counts)
            cum_neg += neg_before[:, None]
            cum_neg -= neg / 2
            st["pe"] += np.einsum("ij,ij->i", sums_b, cum_neg)
        f = self._xh(int(ends[:, -1].max()))
        diff = f.take(ends.astype(np.int64))
        diff -= f.take((ends - length).astype(np.int64))
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(length > 0, sums_b / np.where(length > 0, length, 1.0), 0.0)
        st["area"] += np.einsum("ij,ij->i", mean, diff)

    def _add_sums(self, ch: _Chunk, sums: np.ndarray, w: np.ndarray | None, st: dict
                  ) -> np.ndarray:
        """Add a chunk's weighted sums (``sums = w @ ch.cols``; ``w``, the counts, only read
        for a chunk whose bins are summed apart) to the positives, the Brier sum and the
        bins; returns the positives before the chunk."""
        pos_before = st["S"].copy()
        st["S"] += sums[:, 0]
        if self.n_bins is not None:
            st["sq"] += sums[:, 1]
            seg = sums[:, 2:] if ch.seg_starts is None else \
                np.add.reduceat(w * ch.gap, ch.seg_starts, axis=1)
            # bins are contiguous ranges of cells: one may go on from the chunk before
            if ch.seg_bins[0] == st["open_bin"][0]:
                seg[:, 0] += st["ece_open"]
            else:
                st["ece"] += np.abs(st["ece_open"])
            st["ece"] += np.abs(seg[:, :-1]).sum(axis=1)
            st["ece_open"][:] = seg[:, -1]
            st["open_bin"][0] = ch.seg_bins[-1]
        return pos_before

    def _add_untied(self, sums: np.ndarray, pos_before: np.ndarray, total: np.ndarray,
                    rise: np.ndarray, squares: np.ndarray | None, st: dict) -> None:
        """Add an untied chunk's position terms (:meth:`_pass`'s telescoped sums: ``rise`` =
        sum_k (F(e_k) - F(carry)) dt_k, ``squares`` = sum_k local_k^2 dt_k) and move each
        resample's running position on by its ``total`` draws in the chunk."""
        carry = st["ends"]
        st["area"] += rise
        if self.binary:
            p_chunk = sums[:, 0]
            st["pe"] += (carry - pos_before - p_chunk / 2) * p_chunk + squares / 2
        st["N"] += total
        carry += total

    def _finish(self, st: dict) -> dict[str, np.ndarray]:
        total, positives = st["N"], st["S"]
        out = {"accuracy": positives / total}
        if self.n_bins is not None:
            out["brier"] = st["sq"] / total
            out["ece"] = (st["ece"] + np.abs(st["ece_open"])) / total
        if self.binary:
            negatives = total - positives
            below = st["pe"]
            pairs = positives * negatives
            with np.errstate(invalid="ignore", divide="ignore"):
                out["auroc"] = np.where(pairs > 0, (pairs - below) / np.where(pairs > 0, pairs,
                                                                             1.0), np.nan)
        h_total = harmonic_numbers(total)
        out["auarc"] = ((h_total + 1) * positives - st["area"]) / total
        return out

    def blocks_of(self, n_resamples: int, block: int = RESAMPLE_BLOCK
                  ) -> list[tuple[int, int]]:
        """(first resample, size) of each block of resamples."""
        return [(s, min(block, n_resamples - s)) for s in range(0, n_resamples, block)]


def bootstrap_metrics(sample: SortedSample, n_resamples: int, seed,
                      parallel: Callable = map,
                      progress: Callable[[int, int], None] | None = None
                      ) -> Iterator[tuple[int, dict[str, np.ndarray]]]:
    """The blocks of :meth:`SortedSample.bootstrap`, each with its own stream spawned from
    ``seed`` (the numbers do not depend on how ``parallel`` shares the blocks)."""
    blocks = sample.blocks_of(n_resamples)
    streams = np.random.SeedSequence(seed).spawn(len(blocks))
    # numba imported and the kernel compiled here, once, before the blocks' threads ask for it
    _ = sample._kernel

    def run(i: int) -> dict[str, np.ndarray]:
        return sample.bootstrap(blocks[i][1], np.random.default_rng(streams[i]))

    done = 0
    for (_, size), found in zip(blocks, parallel(run, range(len(blocks)))):
        done += size
        if progress is not None:
            progress(done, n_resamples)
        yield size, found
