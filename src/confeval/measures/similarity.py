"""Black-box confidence measures from a similarity matrix W over m responses to one question
(Lin, Trivedi and Sun, 2024, "Generating with confidence"; their UQ-NLG code is the reference
read for every definition, and MCQA-Eval, Sec. 3, uses the same measures).

With D = diag(W 1) and the normalised Laplacian L = I - D^{-1/2} W D^{-1/2}:

``degree``        response j: C = D_jj / m (higher = more central); set: U = mean_j (m - D_jj).
``eccentricity``  embed each response by the eigenvectors of L with eigenvalue below
                  ``threshold`` (0.9, as UQ-NLG); response j: C = -||v_j - mean v||, set:
                  U = the Frobenius norm of the centred embedding. Responses whose rows of W are
                  identical (the same text) get exactly the same value, not float noise (UQ-NLG
                  breaks such ties arbitrarily; see the measures notes).
``eigenvalue``    set: U = sum_k max(0, 1 - lambda_k(L)) (spectral "EigV"); it has no
                  per-response form, so every response gets C = -U.

On UQ-NLG's TriviaQA demo the Jaccard degree and EigV numbers reproduce to 1e-6 (tested). Ecc
does not, and cannot uniquely: several questions have exactly equal uncertainties (2.0, √5, √7),
so the published AUARC depends on how float noise in the authors' arithmetic ordered those ties
(overall AUARC: 0.7920 printed; 0.7894 with the tie-averaged rule, 0.7879 with input order).

Batched forms (``degree_batch``, ``eccentricity_batch``, ``eigenvalue_batch``,
``option_confidences_batch``) take the matrices of many questions as one stacked (q, m, m)
array with each question's size (its first ``sizes[i]`` rows and columns are its matrix), are
validated once, and decompose every Laplacian in one batched ``eigh``: a question smaller than
m is padded with nodes decoupled from it whose Laplacian eigenvalue (3) lies above every
threshold and every eigenvalue of a normalised Laplacian (<= 2), so they change nothing. The
single-matrix functions check and compute what the batched ones do on a batch of one (Deg and
Ecc on 2-d arrays, in fewer numpy calls; equal to 1e-12, tested). Identical rows (the same
response) are found exactly and in linear time (sorted row keys, neighbours compared; one
matrix's rows in a dict), so their Ecc values tie exactly. With torch imported in the process,
a batched Ecc of 32 matrices or more uses torch's ``eigh`` (the same measures to 1e-12; see
``_eigh_for``).

Each function returns :class:`SimilarityMeasure` ``(confidence, uncertainty)``: a per-response
confidence array of length m and the set-level uncertainty. W must be square, symmetric for
eccentricity and eigenvalue (symmetrise an NLI matrix first), with entries in [0, 1].
"""

from __future__ import annotations

import contextlib
import functools
import sys
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from .._numeric import ones
from .._threads import parallel_map, row_parts, usable_cores

__all__ = ["SimilarityMeasure", "degree", "degree_batch", "eccentricity", "eccentricity_batch",
           "eigenvalue", "eigenvalue_batch", "jaccard_similarity", "laplacian_eigen",
           "option_confidences", "option_confidences_batch"]

_MAX, _MIN, _SUM = np.maximum.reduce, np.minimum.reduce, np.add.reduce
_PAD_EIGENVALUE = 3.0   # above any normalised Laplacian's spectrum (<= 2) and any threshold
_UNIT_BITS = np.float64(1 + 1e-12).view(np.uint64)   # the largest similarity's bit pattern


class SimilarityMeasure(NamedTuple):
    """A black-box measure: per-response ``confidence`` (higher = more confident) and the
    set-level ``uncertainty``. From a batched form: (q, m) confidences, NaN beyond each
    question's size, and (q,) uncertainties."""

    confidence: np.ndarray
    uncertainty: float | np.ndarray


class _Batch(NamedTuple):
    w: np.ndarray                 # (q, m, m), zero outside each question's matrix
    sizes: np.ndarray | int       # (q,) sizes, or m when every question has all m responses
    real: np.ndarray | None       # (q, m) booleans, None when every question is full

    def column(self):
        """The sizes broadcastable against (q, m)."""
        return self.sizes if self.real is None else self.sizes[:, None]


def _numbers(W: ArrayLike, ndim: int) -> np.ndarray:
    """W as float64 with square (non-empty) last two axes: one matrix (``ndim`` 2) or a
    stack (3)."""
    try:
        w = np.asarray(W, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("W must be a matrix of numbers") from None
    if w.ndim != ndim or w.shape[-1] != w.shape[-2] or w.shape[-1] == 0:
        what = "a non-empty square matrix" if ndim == 2 else \
            "a stack of non-empty square matrices (q, m, m)"
        raise ValueError(f"W must be {what}, got shape {w.shape}")
    return w


def _stack(W: ArrayLike) -> np.ndarray:
    return _numbers(W, 3)


def _single(W: ArrayLike) -> np.ndarray:
    """One matrix as a stack of one."""
    return _numbers(W, 2)[None]


def _batch(w: np.ndarray, sizes: ArrayLike | None = None, *, spectral: bool = False) -> _Batch:
    """A (q, m, m) stack of similarity matrices validated once: entries in [0, 1] within each
    question's matrix, a positive diagonal (a response is similar to itself; a zero row would
    make the Laplacian's D^{-1/2} infinite) and, for the spectral measures, symmetry
    (an NLI matrix is symmetrised first: eigh would silently read only one triangle). What lies
    outside a question's size is ignored."""
    q, m = w.shape[:2]
    real = None
    if sizes is not None:
        sizes = np.asarray(sizes)
        if sizes.shape != (q,) or (q and sizes.dtype.kind not in "iu"):
            raise ValueError(f"sizes must be {q} integers, one per matrix")
        sizes = sizes.astype(np.int64, copy=False)
        if q and (sizes.min() < 1 or sizes.max() > m):
            raise ValueError(f"sizes must be in [1, {m}]")
        if q and sizes.min() < m:
            real = np.arange(m) < sizes[:, None]
            w = np.where(real[:, :, None] & real[:, None, :], w, 0.0)
        else:
            sizes = None
    if not _in_unit_interval(w):
        raise ValueError("W must hold similarities in [0, 1]")
    _check_diagonal(w, real)
    if spectral:
        w = _symmetric(w)
    return _Batch(w, m if sizes is None else sizes, real)


def _in_unit_interval(w: np.ndarray) -> bool:
    """Whether every entry of the float64 array ``w`` lies in [0, 1 + 1e-12] (NaN does not), in
    one pass over the entries' bits.

    Read as unsigned integers, the bit patterns of the floats from +0.0 up are in the floats'
    order, and every negative float (sign bit set) and every NaN reads above the pattern of
    1 + 1e-12; so does -0.0, a valid similarity. One maximum of the patterns therefore accepts
    what the two comparisons of the minimum and maximum accept, except -0.0, and what it
    refuses those two comparisons decide. Hand-written because numpy has no one-call minimum
    and maximum, and on a 20 x 20 matrix each reduction costs about as much as a step of the
    reference formulas (half of Deg's time was its two reductions)."""
    if not w.size:
        return True
    if _MAX(w.view(np.uint64), axis=None) <= _UNIT_BITS:
        return True
    return bool(_MIN(w, axis=None) >= 0 and _MAX(w, axis=None) <= 1 + 1e-12)


def _check_diagonal(w: np.ndarray, real: np.ndarray | None) -> None:
    diagonal = w.diagonal(0, 1, 2)
    if real is not None:
        diagonal = np.where(real, diagonal, 1.0)
    if diagonal.size and not _MIN(diagonal, axis=None) > 0:
        k, i = np.argwhere(diagonal <= 0)[0]
        where = f"W[{i}, {i}]" if len(w) == 1 else f"W[{k}][{i}, {i}]"
        raise ValueError(f"W's diagonal must be positive (a response is similar to itself); "
                         f"{where} = {w[k, i, i]}")


def _symmetric(w: np.ndarray) -> np.ndarray:
    """W itself when exactly symmetric; within 1e-9, its symmetric part; else an error."""
    transposed = w.transpose(0, 2, 1)
    if (w == transposed).all():
        return w
    asymmetry = np.abs(w - transposed)
    if _MAX(asymmetry, axis=None) > 1e-9:
        k, i, j = np.unravel_index(np.argmax(asymmetry), w.shape)
        where = "" if len(w) == 1 else f" in matrix {k}"
        raise ValueError(f"W must be symmetric for a spectral measure{where} (W[{i}, {j}] = "
                         f"{w[k, i, j]} but W[{j}, {i}] = {w[k, j, i]}); symmetrise it first, "
                         "(W + W.T) / 2")
    return (w + transposed) / 2


def _over_cores(function, batch: _Batch, *extra: np.ndarray):
    """``function(batch, *extra)`` with the questions split between the machine's cores (numpy's
    LAPACK and array loops release the GIL). Every step is per question, so the results do not
    depend on the split or the number of cores."""
    parts = row_parts(len(batch.w), _QUESTIONS_PER_THREAD, _cores())
    if len(parts) == 1:
        return function(batch, *extra)

    def part(rows: slice):
        sub = batch if batch.real is None else batch._replace(sizes=batch.sizes[rows],
                                                               real=batch.real[rows])
        return function(sub._replace(w=batch.w[rows]), *(e[rows] for e in extra))

    done = list(parallel_map(part, parts))
    joined = [np.concatenate(field) for field in zip(*done)]
    return SimilarityMeasure(*joined) if isinstance(done[0], SimilarityMeasure) else tuple(joined)


_QUESTIONS_PER_THREAD = 64


def _cores() -> int:
    return usable_cores()


def _eigh(matrices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    try:
        return np.linalg.eigh(matrices)
    except np.linalg.LinAlgError as exc:  # no convergence: a clear error, not numpy's
        raise ValueError(f"the Laplacian's eigendecomposition failed ({exc})") from None


def _eigvalsh(matrices: np.ndarray) -> np.ndarray:
    try:
        return np.linalg.eigvalsh(matrices)
    except np.linalg.LinAlgError as exc:
        raise ValueError(f"the Laplacian's eigendecomposition failed ({exc})") from None


_EIGH_ROUTE = "auto"
"""Whose ``eigh`` a batched eccentricity uses: ``"auto"`` torch's when torch is imported
already and the batch has at least :data:`_TORCH_MIN_MATRICES` matrices, else numpy's;
``"numpy"``; ``"torch"`` (imported if need be)."""
_TORCH_MIN_MATRICES = 32


def _eigh_for(count: int):
    """The ``eigh`` for a batch of ``count`` matrices (:data:`_EIGH_ROUTE`), chosen once per
    call so that every part of a split batch uses the same one.

    torch's (MKL's ``syevd``) takes ~15% less CPU than numpy's (OpenBLAS's) on 20 x 20
    Laplacians and agrees with it to 1e-12 in every measure (eigenvectors may differ in sign,
    and within an eigenvalue of several vectors in basis, which no measure sees: Ecc reads the
    projection onto all eigenvectors below the threshold; tested). confeval never imports torch
    for this: importing it costs ~1.3 s of CPU, repaid only after a quarter of a million
    matrices; a process that has imported it (a model run, or ``import torch``) gets it free.
    """
    if _EIGH_ROUTE == "numpy" or (_EIGH_ROUTE == "auto" and (
            count < _TORCH_MIN_MATRICES or sys.modules.get("torch") is None)):
        return _eigh
    if _EIGH_ROUTE == "torch":
        import torch  # noqa: F401  (the route asked for by name)
    return _torch_eigh


def _torch_eigh(matrices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    torch = sys.modules["torch"]
    with _one_torch_thread(torch):
        try:
            values, vectors = torch.linalg.eigh(torch.from_numpy(matrices))
        except RuntimeError as exc:   # torch's LinAlgError: no convergence
            raise ValueError(f"the Laplacian's eigendecomposition failed ({exc})") from None
    return values.numpy(), vectors.numpy()


@contextlib.contextmanager
def _one_torch_thread(torch):
    """torch at one thread in the calling thread for the duration, then as it was.

    The batch is already split between the cores (:func:`_over_cores`, one part per core), and
    a 20 x 20 ``eigh`` gains nothing from more threads: at torch's default (one per core) each
    part's MKL calls start OpenMP teams that oversubscribe the cores (1,000 Laplacians: 42 ms
    of CPU at two threads against 34 ms at one). ``torch.set_num_threads`` sets the calling
    thread's OpenMP and MKL counts, so setting it here, in the thread that runs the part, and
    restoring it in ``finally`` leaves every other thread's setting alone and this thread's as
    it was; the one process-wide trace is torch's default for threads that first use torch
    while a part runs (they would start with one thread)."""
    previous = torch.get_num_threads()
    if previous == 1:
        yield
        return
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def _laplacians(batch: _Batch, degrees: np.ndarray | None = None) -> np.ndarray:
    """I - D^{-1/2} W D^{-1/2} of every matrix (``degrees``: W's row sums, if computed
    already), padding nodes decoupled with eigenvalue :data:`_PAD_EIGENVALUE`. W is exactly
    symmetric (:func:`_symmetric`) and the scaling -d_i^{-1/2} d_j^{-1/2} is one commutative
    product, so the Laplacian is exactly symmetric (and its sign is taken in that product, the
    same numbers as negating W's scaled entries, without another pass over them)."""
    w, real = batch.w, batch.real
    if degrees is None:
        degrees = _SUM(w, axis=2)
    if real is not None:   # padding nodes: no degree, scaled by 0 (their rows of W are 0)
        degrees = np.where(real, degrees, np.inf)
    inv_sqrt = 1.0 / np.sqrt(degrees)
    lap = w * (np.negative(inv_sqrt)[:, :, None] * inv_sqrt[:, None, :])
    diagonal = lap.reshape(len(lap), -1)[:, ::w.shape[1] + 1]   # a view of every diagonal
    diagonal += 1.0 if real is None else np.where(real, 1.0, _PAD_EIGENVALUE)
    return lap


def _first_equal_rows(rows: np.ndarray, sums: np.ndarray | None = None,
                      real: np.ndarray | None = None) -> np.ndarray | None:
    """For every row of every (q, m, n) stack, the index of the first identical row (its own
    index when none comes before), or ``None`` when no two rows are identical.

    Linear in the rows' entries. Identical rows have equal sums (the same numpy operations on
    the same numbers; ``sums``, the rows' sums if computed already), so a stack whose sorted
    sums are all different has none. In the other stacks each row gets a key, a weighted sum
    of its entries, the keys are sorted once, and only rows that sort next to an equal key are
    compared, exactly, with their neighbour; a run of identical rows sorts together, the first
    of them first (the sort is stable). Two different rows with the same key (a coincidence of
    the weights, or the all-zero rows beyond a question's size, which never equal a real row:
    its diagonal is positive) could interleave a run; the few stacks where a key is shared by
    different rows are re-sorted by the rows themselves (:func:`numpy.lexsort`, still one
    sort). Rows are equal when all their entries are ``==`` (-0.0 equals 0.0; no NaN gets this
    far). ``real`` (q, m), if given, marks the rows within each question's size: the others
    (all zero) make no stack a candidate and never tie with a real row, only, in a candidate
    stack, with each other (their values are NaN anyway).

    Hand-written because :func:`numpy.unique` (``axis=0``) finds the identical rows of one
    matrix, not of each stack of a batch, and sorts whole rows where one key per row does.
    """
    q, m, n = rows.shape
    if sums is None:
        sums = _SUM(rows, axis=2)
    if real is not None:   # padding rows: distinct negative sums, never a candidate
        sums = np.where(real, sums, -1.0 - np.arange(m))
    ordered = np.sort(sums, axis=1)
    candidates = np.flatnonzero((ordered[:, 1:] == ordered[:, :-1]).any(axis=1))
    if not candidates.size:
        return None
    first = None
    # the gathered rows of a chunk of stacks: memory bounded whatever q, m and n
    chunk = max(1, _COMPARISON_ELEMENTS // (m * n))
    for start in range(0, candidates.size, chunk):
        part = candidates[start:start + chunk]
        sub = rows[part]
        found = _first_in_stacks(sub, _SUM(sub * _row_weights(n), axis=2))
        if found is not None:
            if first is None:
                first = np.broadcast_to(np.arange(m), (q, m)).copy()
            first[part] = found
    return first


def _first_equal_rows_of(rows: np.ndarray) -> list[int] | None:
    """:func:`_first_equal_rows` of one (m, n) matrix: each row's bytes looked up in a dict,
    linear in the entries. Hand-written for the single-matrix call, where the vectorised form's
    two dozen numpy calls on 20 rows cost more than the eigendecomposition saves; adding 0.0
    turns -0.0 into 0.0, so equal bytes are equal floats (no NaN gets this far)."""
    size = rows.shape[1] * 8
    data = (rows + 0.0).tobytes()
    seen: dict[bytes, int] = {}
    first = [seen.setdefault(data[i:i + size], j) for j, i in enumerate(range(0, len(data), size))]
    return first if len(seen) < len(first) else None


def _first_in_stacks(rows: np.ndarray, keys: np.ndarray) -> np.ndarray | None:
    """:func:`_first_equal_rows` of stacks whose keys are given."""
    order = np.argsort(keys, axis=1, kind="stable")
    same, clash = _neighbours(rows, keys, order)
    if clash.size:   # different rows with one key: sort those stacks by the rows themselves
        sub = rows[clash]
        order[clash] = np.lexsort(sub.transpose(2, 0, 1)[::-1], axis=-1)
        same[clash] = _neighbours(sub, keys[clash], order[clash])[0]
    if not same.any():
        return None
    s, m = order.shape
    # the sorted position where each row's run starts, then the row there (the run's first)
    starts = np.zeros((s, m), dtype=np.int64)
    starts[:, 1:] = np.where(same, 0, np.arange(1, m))
    np.maximum.accumulate(starts, axis=1, out=starts)
    first = np.empty_like(order)
    np.put_along_axis(first, order, np.take_along_axis(order, starts, axis=1), axis=1)
    return first


def _neighbours(rows: np.ndarray, keys: np.ndarray, order: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
    """For stacks sorted by ``order``: whether each sorted row equals the previous one
    ((s, m - 1) booleans; only rows with equal keys are compared) and the stacks where two
    neighbours share a key but not their entries."""
    s, m, n = rows.shape
    ordered_keys = np.take_along_axis(keys, order, axis=1)
    stack, position = np.nonzero(ordered_keys[:, 1:] == ordered_keys[:, :-1])
    flat = rows.reshape(s * m, n)
    base = stack * m
    equal = (flat[base + order[stack, position]] == flat[base + order[stack, position + 1]]
             ).all(axis=1)
    same = np.zeros((s, m - 1), dtype=bool)
    same[stack, position] = equal
    return same, np.unique(stack[~equal])


@functools.cache
def _row_weights(n: int) -> np.ndarray:
    """Weights in [1, 2) of the row keys of :func:`_first_equal_rows`, fixed (seeded) random
    numbers: different rows share a key only by a coincidence of the last bits (plain sums
    collide whenever two rows hold the same numbers in another order, and weights in
    arithmetic progression on rational similarities such as Jaccard's)."""
    weights = np.random.default_rng(20241126).uniform(1.0, 2.0, n)
    weights.flags.writeable = False
    return weights


_COMPARISON_ELEMENTS = 1 << 24


def _tie(values: np.ndarray, first: np.ndarray | None) -> np.ndarray:
    """Each row's value replaced by its first identical row's (:func:`_first_equal_rows`)."""
    return values if first is None else np.take_along_axis(values, first, axis=1)


def _padding_nan(values: np.ndarray, real: np.ndarray | None) -> np.ndarray:
    if real is not None:
        values[~real] = np.nan
    return values


def _degree(batch: _Batch) -> SimilarityMeasure:
    d = np.matmul(batch.w, ones(batch.w.shape[2]))   # row sums, as degree() computes them
    sizes = batch.sizes
    return SimilarityMeasure(_padding_nan(d / batch.column(), batch.real),
                             sizes - _SUM(d, axis=1) / sizes)


def degree_batch(W: ArrayLike, sizes: ArrayLike | None = None) -> SimilarityMeasure:
    """Degree measure of every matrix of a (q, m, m) stack (module docstring).

    Examples
    --------
    >>> out = degree_batch([[[1, 1, 0], [1, 1, 0], [0, 0, 1]], [[1, 0, 0], [0, 1, 0], [0, 0, 0]]],
    ...                    sizes=[3, 2])
    >>> out.uncertainty.tolist()
    [1.3333333333333333, 1.0]
    """
    return _degree(_batch(_stack(W), sizes))


def degree(W: ArrayLike) -> SimilarityMeasure:
    """Degree measure (module docstring).

    Examples
    --------
    >>> degree([[1, 1, 0], [1, 1, 0], [0, 0, 1]]).uncertainty
    1.3333333333333333
    """
    # One matrix: the checks of _batch in one pass over the entries (_in_unit_interval) and
    # a count of the diagonal's zeros (entries are >= 0, so no zero means positive), the
    # formula of _degree on it — a 20 x 20 matrix costs a few numpy calls, and the unvalidated
    # reference formulas are not many more, so every call counts.
    w = _numbers(W, 2)
    if not _in_unit_interval(w):
        raise ValueError("W must hold similarities in [0, 1]")
    m = w.shape[0]
    if np.count_nonzero(w.diagonal()) < m:
        _check_diagonal(w[None], None)
    d = w.dot(ones(m))
    return SimilarityMeasure(d / m, float(m - _SUM(d) / m))


def laplacian_eigen(W: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvalues (ascending) and eigenvectors of the normalised Laplacian of W (symmetric)."""
    values, vectors = _eigh(_laplacians(_batch(_single(W), spectral=True)))
    return values[0], vectors[0]


def _eccentricity(batch: _Batch, threshold: float) -> SimilarityMeasure:
    eigh = _eigh_for(len(batch.w))
    return _over_cores(functools.partial(_eccentricity_part, threshold=threshold, eigh=eigh),
                       batch)


def _eccentricity_part(batch: _Batch, threshold: float, eigh=_eigh) -> SimilarityMeasure:
    degrees = _SUM(batch.w, axis=2)
    values, vectors = eigh(_laplacians(batch, degrees))
    # the embedding of response j: its row of the eigenvectors with eigenvalue < threshold,
    # among the first `width` columns (eigenvalues ascend), centred over the real responses
    keep = values < threshold
    width = int(_MAX(np.count_nonzero(keep, axis=1))) if keep.size else 0
    real = batch.real
    # (q, width, m), contiguous: each mean sums its column's m entries in the same order
    # whatever the width and whoever's eigh laid the vectors out
    columns = np.ascontiguousarray(vectors[:, :, :width].transpose(0, 2, 1))
    if real is not None:
        columns = columns * real[:, None, :]
    sizes = batch.sizes if real is None else batch.sizes[:, None, None]
    centred = columns - _SUM(columns, axis=2)[:, :, None] / sizes
    centred *= keep[:, :width, None] if real is None else keep[:, :width, None] & real[:, None]
    centred *= centred
    # each response's squares added column after column: the same numbers in the same order
    # whatever the widest matrix of the part (a column beyond a matrix's own count adds 0)
    squares = centred[:, 0].copy() if width else np.zeros(values.shape)
    for k in range(1, width):
        squares += centred[:, k]
    distance = np.sqrt(squares)
    # identical rows of W are the same response: the first one's value, so they tie exactly
    distance = _tie(distance, _first_equal_rows(batch.w, degrees, real))
    uncertainty = np.sqrt(_SUM(distance * distance, axis=1))
    return SimilarityMeasure(_padding_nan(-distance, batch.real), uncertainty)


def eccentricity_batch(W: ArrayLike, sizes: ArrayLike | None = None, *,
                       threshold: float = 0.9) -> SimilarityMeasure:
    """Eccentricity of every matrix of a (q, m, m) stack (module docstring). With torch
    imported in the process, batches of 32 matrices or more use torch's ``eigh``
    (:func:`_eigh_for`)."""
    return _eccentricity(_batch(_stack(W), sizes, spectral=True), threshold)


def eccentricity(W: ArrayLike, *, threshold: float = 0.9) -> SimilarityMeasure:
    """Eccentricity measure (module docstring).

    Examples
    --------
    >>> res = eccentricity([[1, 1, 0], [1, 1, 0], [0, 0, 1]])
    >>> bool(res.confidence[0] == res.confidence[1] > res.confidence[2])
    True
    """
    # One matrix: _eccentricity_part's steps with the kept eigenvectors as one slice (the
    # batched form goes column by column to be independent of the widest matrix) and numpy's
    # eigh (torch's costs more per call than it saves on one matrix), on 2-d arrays: a 20 x 20
    # matrix costs a few dozen numpy calls besides eigh, and each costs about a microsecond.
    w = _spectral_matrix(W)
    m = len(w)
    inv_sqrt = 1.0 / np.sqrt(_SUM(w, axis=1))
    lap = w * np.multiply.outer(np.negative(inv_sqrt), inv_sqrt)   # as _laplacians
    lap.ravel()[::m + 1] += 1.0
    values, vectors = _eigh(lap)
    kept = vectors[:, :np.count_nonzero(values < threshold)]   # eigenvalues ascend
    centred = kept - _SUM(kept, axis=0) / m
    distance = np.sqrt(_SUM(centred * centred, axis=1))
    first = _first_equal_rows_of(w)
    if first is not None:
        distance = distance[first]
    return SimilarityMeasure(-distance, float(np.sqrt(_SUM(distance * distance))))


def _spectral_matrix(W: ArrayLike) -> np.ndarray:
    """One matrix checked as ``_batch(_single(W), spectral=True)`` checks it, with the same
    errors, in fewer numpy calls: the entries in one pass, the diagonal by a count of its zeros
    (entries are >= 0 by then), the symmetry in one comparison."""
    w = _numbers(W, 2)
    if not _in_unit_interval(w):
        raise ValueError("W must hold similarities in [0, 1]")
    if np.count_nonzero(w.diagonal()) < len(w):
        _check_diagonal(w[None], None)
    if not (w == w.T).all():
        w = _symmetric(w[None])[0]
    return w


def _eigenvalue(batch: _Batch) -> SimilarityMeasure:
    return _over_cores(_eigenvalue_part, batch)


def _eigenvalue_part(batch: _Batch) -> SimilarityMeasure:
    values = _eigvalsh(_laplacians(batch))
    u = _SUM(np.clip(1.0 - values, 0.0, None), axis=1)   # padding (eigenvalue 3) adds 0
    confidence = np.repeat(-u[:, None], values.shape[1], axis=1)
    return SimilarityMeasure(_padding_nan(confidence, batch.real), u)


def eigenvalue_batch(W: ArrayLike, sizes: ArrayLike | None = None) -> SimilarityMeasure:
    """Spectral (EigV) measure of every matrix of a (q, m, m) stack (module docstring)."""
    return _eigenvalue(_batch(_stack(W), sizes, spectral=True))


def eigenvalue(W: ArrayLike) -> SimilarityMeasure:
    """Spectral (EigV) measure (module docstring).

    Examples
    --------
    >>> round(eigenvalue(np.ones((3, 3))).uncertainty, 12)
    1.0
    """
    confidence, uncertainty = _eigenvalue(_batch(_single(W), spectral=True))
    return SimilarityMeasure(confidence[0], float(uncertainty[0]))


def jaccard_similarity(texts: list[str]) -> np.ndarray:
    """Jaccard similarity of the lower-cased whitespace tokens of every pair of texts, as
    UQ-NLG (punctuation stays on its word); 0 when both are empty, 1 on the diagonal. A
    missing text (None, NaN) is an empty answer, never the word "none" or "nan".

    Examples
    --------
    >>> jaccard_similarity(["The cat", "the dog", "cat"]).round(3).tolist()
    [[1.0, 0.333, 0.5], [0.333, 1.0, 0.0], [0.5, 0.0, 1.0]]
    """
    sets = [frozenset(_text(t).lower().split()) for t in texts]
    m = len(sets)
    out = np.eye(m)
    for i in range(m):
        for j in range(i + 1, m):
            union = len(sets[i] | sets[j])
            out[i, j] = out[j, i] = len(sets[i] & sets[j]) / union if union else 0.0
    return out


def _text(value) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return ""
    return str(value)


def option_confidences(samples_w: ArrayLike, cross_w: ArrayLike, *,
                       threshold: float = 0.9) -> dict[str, np.ndarray]:
    """MCQA-Eval's Algorithm 1: the black-box confidence of each injected option.

    ``samples_w`` (n, n) is the similarity among the n sampled answers of one question,
    computed once; ``cross_w`` (k, n) the similarity of each of the k options to each sample.
    Option a's matrix is the samples' with a's row and column added (and 1 on its diagonal);
    its confidence is its own entry of each measure: ``degree`` (its row sum / (n + 1)) and
    ``eccentricity`` (minus its distance in the eigen-embedding, the k decompositions done as
    one batched call). Returns ``{"degree": (k,), "eccentricity": (k,)}``.

    Examples
    --------
    >>> w = np.ones((3, 3))
    >>> out = option_confidences(w, [[1, 1, 1], [0, 0, 0]])
    >>> out["degree"].tolist()
    [1.0, 0.25]
    """
    out = option_confidences_batch(_single(samples_w), np.asarray(cross_w, dtype=np.float64)[None],
                                   threshold=threshold)
    return {name: values[0] for name, values in out.items()}


def option_confidences_batch(samples_w: ArrayLike, cross_w: ArrayLike, sizes: ArrayLike | None
                             = None, *, threshold: float = 0.9) -> dict[str, np.ndarray]:
    """Algorithm 1 (:func:`option_confidences`) for q questions at once: ``samples_w``
    (q, n, n) with each question's number of samples in ``sizes`` (all n when ``None``),
    ``cross_w`` (q, k, n) — k options each, their similarities to the samples (columns beyond a
    question's size ignored). All q x k (n + 1)-node Laplacians go to one batched ``eigh``.
    Returns ``{"degree": (q, k), "eccentricity": (q, k)}``."""
    base = _batch(_stack(samples_w), sizes, spectral=True)
    q, n = base.w.shape[:2]
    cross = np.asarray(cross_w, dtype=np.float64)
    if cross.ndim != 3 or cross.shape[0] != q or cross.shape[2] != n:
        raise ValueError(f"cross_w must be (options, {n}) per question, got shape "
                         f"{cross.shape[1:] if cross.ndim == 3 else cross.shape}")
    if base.real is not None:
        cross = np.where(base.real[:, None, :], cross, 0.0)
    if cross.size and not (_MIN(cross, axis=None) >= 0 and _MAX(cross, axis=None) <= 1 + 1e-12):
        raise ValueError("cross_w must hold similarities in [0, 1]")
    degree, eccentricity = _over_cores(
        functools.partial(_option_confidences_part, threshold=threshold), base, cross)
    return {"degree": degree, "eccentricity": eccentricity}


def _option_confidences_part(base: _Batch, cross: np.ndarray, threshold: float
                             ) -> tuple[np.ndarray, np.ndarray]:
    q, n = base.w.shape[:2]
    k = cross.shape[1]
    # options with the same similarity row (the same text) are one computation, so their
    # measures are the very same floats, never two decompositions a last bit apart
    first = _first_equal_rows(cross)
    stacked = np.empty((q, k, n + 1, n + 1))
    stacked[:, :, :n, :n] = base.w[:, None]
    stacked[:, :, n, :n] = cross
    stacked[:, :, :n, n] = cross
    stacked[:, :, n, n] = 1.0
    real = None if base.real is None else np.repeat(
        np.concatenate([base.real, np.ones((q, 1), dtype=bool)], axis=1), k, axis=0)
    option = _Batch(stacked.reshape(q * k, n + 1, n + 1),
                    n + 1 if real is None else np.repeat(base.sizes + 1, k), real)
    values, vectors = _eigh(_laplacians(option))
    embedding = vectors * (values < threshold)[:, None, :]
    if real is not None:
        embedding *= real[:, :, None]
    centre = _SUM(embedding, axis=1) / option.column()
    centred = embedding[:, n, :] - centre
    degree_sum = _SUM(stacked[:, :, n, :], axis=2)
    eccentricity = -np.sqrt(_SUM(centred * centred, axis=1)).reshape(q, k)
    return (_tie(degree_sum / (base.column() + 1), first), _tie(eccentricity, first))
