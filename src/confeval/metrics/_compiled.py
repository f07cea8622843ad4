"""The bootstrap's pass over an untied chunk, compiled with numba when it is installed (the
optional extra ``fast``; :mod:`confeval.metrics.weighted` decides when to use it).

Why compiled code here and nowhere else: at 10^7 rows the bootstrap's numpy pass makes about
ten passes over every (resamples, chunk) array — count the draws, the weighted sums, the running
positions, the table look-ups — and memory traffic, not arithmetic, sets its time (1,000
resamples of 10^7 rows took 76 s on two cores, 2026-11-26). One loop per resample does the same
work while the chunk's counts stay in the processor's first-level cache: about half the wall
time at 10^6 rows (docs/performance.md). numba rather than C or Cython: no compiler
at install time and no platform wheels of our own; it is imported only when a sample is large
enough to repay compiling (1.4-2 s, in every process: :mod:`confeval._jit`).

The kernel computes what :meth:`~confeval.metrics.weighted.SortedSample._pass` computes for such
a chunk from the counts — the weighted sums, each run end's rise of F and its squared position,
the draws in the chunk — and the caller turns them into the metrics with the same code as the
numpy pass (one formula). Given the same random words it gives the same resamples; sums of
integers (the draws, and with 0/1 targets the positives and squared positions) are exact either
way, so with 0/1 targets accuracy and AUROC are equal bit for bit, and the float sums (Brier,
ECE, AUARC, and accuracy with graded targets) are added in another order (equal to 1e-10
relative, tested).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._jit import compiled

__all__ = ["unavailable", "untied_pass"]


def untied_pass() -> Callable | None:
    """The compiled kernel, or ``None`` when numba is not installed or fails to compile (the
    numpy pass is always there; :func:`unavailable` says why)."""
    return compiled(_untied_pass, _warm)[0]


def unavailable() -> str:
    """Why :func:`untied_pass` is ``None`` ("" when it is not)."""
    return compiled(_untied_pass, _warm)[1]


def _warm(kernel: Callable) -> None:
    """Compile now, on the argument types every call uses (one signature)."""
    sums, rise, squares, total = (np.zeros((1, 1)), np.zeros(1), np.zeros(1), np.zeros(1))
    kernel(np.zeros(1, np.uint16), np.ones(1, np.int64), np.ones((1, 1)), np.zeros(1),
           np.zeros(0, np.int64), True, np.zeros(2), np.zeros(1, np.int64), sums, rise,
           squares, total)


def _untied_pass(draws, draws_per_resample, cols, dt, ends, every_cell, f, start,
                 sums, rise, squares, total):   # pragma: no cover (compiled)
    """For each resample r of a chunk of m untied cells (one row each):

    counts of its ``draws_per_resample[r]`` draws (cell numbers, consecutive in ``draws``);
    ``sums[r] = counts @ cols``; with local_k the draws up to cell k and e_k = start[r] +
    local_k, ``rise[r] = sum_k (f[e_k] - f[start[r]]) dt_k`` and ``squares[r] = sum_k local_k^2
    dt_k`` over the cells where dt is kept (every cell, or the cells ``ends`` with ``dt`` at
    those only); ``total[r]`` = its draws in the chunk.

    Every sum adds its terms cell after cell, k = 0, 1, ..., m - 1, as a plain loop would. The
    first four columns' sums (a chunk has 1-4 columns unless it spans several ECE bins) are
    kept in four local variables in the one loop that also takes the running count and, at
    every cell, the position terms: each sum is a chain of additions, one every ~4 cycles, and
    the chains run side by side. The kernel before this kept them in an array the loop read
    and wrote (a store and a load in each chain) and took the position terms in a second loop:
    the same numbers bit for bit, 1.2-1.5x the time (docs/performance.md)."""
    m, width = cols.shape
    counts = np.zeros(m, np.int64)
    prefix = np.empty(m, np.int64)
    at = 0
    # no data-dependent branch in the loops over the cells (a third of the counts are 0 and
    # the run ends fall anywhere: branches on them were mispredicted, and slower than numpy);
    # the branches on the width and on every_cell are the same at every cell
    for r in range(draws_per_resample.size):
        for i in range(at, at + draws_per_resample[r]):
            counts[draws[i]] += 1
        at += draws_per_resample[r]
        base = start[r]
        f_base = f[base]
        local = 0
        a0 = a1 = a2 = a3 = 0.0
        area = 0.0
        square = 0.0
        for k in range(m):
            c = counts[k]
            counts[k] = 0   # ready for the next resample
            local += c
            prefix[k] = local
            a0 += c * cols[k, 0]
            if width > 1:
                a1 += c * cols[k, 1]
            if width > 2:
                a2 += c * cols[k, 2]
            if width > 3:
                a3 += c * cols[k, 3]
            if every_cell:
                area += (f[base + local] - f_base) * dt[k]
                square += float(local) * float(local) * dt[k]
        sums[r, 0] = a0
        if width > 1:
            sums[r, 1] = a1
        if width > 2:
            sums[r, 2] = a2
        if width > 3:
            sums[r, 3] = a3
        for j in range(4, width):   # more columns: each cell's count from the running count
            acc = 0.0
            before = 0
            for k in range(m):
                acc += (prefix[k] - before) * cols[k, j]
                before = prefix[k]
            sums[r, j] = acc
        if not every_cell:
            for i in range(ends.size):
                e = prefix[ends[i]]
                area += (f[base + e] - f_base) * dt[i]
                square += float(e) * float(e) * dt[i]
        rise[r] = area
        squares[r] = square
        total[r] = local
