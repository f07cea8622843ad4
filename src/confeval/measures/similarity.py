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

Each function returns :class:`SimilarityMeasure` ``(confidence, uncertainty)``: a per-response
confidence array of length m and the set-level uncertainty. W must be square, symmetric for
eccentricity and eigenvalue (symmetrise an NLI matrix first), with entries in [0, 1].
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["SimilarityMeasure", "degree", "eccentricity", "eigenvalue", "jaccard_similarity",
           "laplacian_eigen", "option_confidences"]


class SimilarityMeasure(NamedTuple):
    """A black-box measure: per-response ``confidence`` (higher = more confident) and the
    set-level ``uncertainty``."""

    confidence: np.ndarray
    uncertainty: float


def _matrix(W: ArrayLike, *, symmetric: bool = False) -> np.ndarray:
    """W validated: square, entries in [0, 1], a positive diagonal (a response is similar to
    itself; a zero row would make the Laplacian's D^{-1/2} infinite) and, for the spectral
    measures, symmetric (an NLI matrix is symmetrised first: eigh would silently read only
    one triangle)."""
    try:
        w = np.asarray(W, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("W must be a matrix of numbers") from None
    if w.ndim != 2 or w.shape[0] != w.shape[1] or w.shape[0] == 0:
        raise ValueError(f"W must be a non-empty square matrix, got shape {w.shape}")
    if not np.isfinite(w).all() or (w < 0).any() or (w > 1 + 1e-12).any():
        raise ValueError("W must hold similarities in [0, 1]")
    zero = np.flatnonzero(np.diagonal(w) <= 0)
    if zero.size:
        raise ValueError(f"W's diagonal must be positive (a response is similar to itself); "
                         f"W[{zero[0]}, {zero[0]}] = {w[zero[0], zero[0]]}")
    if symmetric and not np.allclose(w, w.T, rtol=0.0, atol=1e-9):
        i, j = np.unravel_index(np.argmax(np.abs(w - w.T)), w.shape)
        raise ValueError(f"W must be symmetric for a spectral measure (W[{i}, {j}] = "
                         f"{w[i, j]} but W[{j}, {i}] = {w[j, i]}); symmetrise it first, "
                         "(W + W.T) / 2")
    return w


def _eigh(matrices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    try:
        return np.linalg.eigh(matrices)
    except np.linalg.LinAlgError as exc:  # no convergence: a clear error, not numpy's
        raise ValueError(f"the Laplacian's eigendecomposition failed ({exc})") from None


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


def degree(W: ArrayLike) -> SimilarityMeasure:
    """Degree measure (module docstring).

    Examples
    --------
    >>> degree([[1, 1, 0], [1, 1, 0], [0, 0, 1]]).uncertainty
    1.3333333333333333
    """
    w = _matrix(W)
    m = w.shape[0]
    d = w.sum(axis=1)
    return SimilarityMeasure(d / m, float((m - d).mean()))


def laplacian_eigen(W: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvalues (ascending) and eigenvectors of the normalised Laplacian of W (symmetric)."""
    w = _matrix(W, symmetric=True)
    inv_sqrt = 1.0 / np.sqrt(w.sum(axis=1))
    lap = np.eye(w.shape[0]) - inv_sqrt[:, None] * w * inv_sqrt[None, :]
    return _eigh((lap + lap.T) / 2)   # exactly symmetric despite rounding


def eccentricity(W: ArrayLike, *, threshold: float = 0.9) -> SimilarityMeasure:
    """Eccentricity measure (module docstring).

    Examples
    --------
    >>> res = eccentricity([[1, 1, 0], [1, 1, 0], [0, 0, 1]])
    >>> bool(res.confidence[0] == res.confidence[1] > res.confidence[2])
    True
    """
    w = _matrix(W, symmetric=True)
    values, vectors = laplacian_eigen(w)
    embedding = vectors[:, values < threshold]
    # identical rows of W are the same response: compute once, so they tie exactly
    _, first, inverse = np.unique(w, axis=0, return_index=True, return_inverse=True)
    centred = embedding - embedding.mean(axis=0)
    distance = np.linalg.norm(centred[first], axis=1)[inverse.ravel()]
    return SimilarityMeasure(-distance, float(np.sqrt((distance ** 2).sum())))


def eigenvalue(W: ArrayLike) -> SimilarityMeasure:
    """Spectral (EigV) measure (module docstring).

    Examples
    --------
    >>> round(eigenvalue(np.ones((3, 3))).uncertainty, 12)
    1.0
    """
    values, _ = laplacian_eigen(W)
    u = float(np.clip(1.0 - values, 0.0, None).sum())
    return SimilarityMeasure(np.full(values.size, -u), u)


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
    base = _matrix(samples_w, symmetric=True)
    cross = np.asarray(cross_w, dtype=np.float64)
    n = base.shape[0]
    if cross.ndim != 2 or cross.shape[1] != n:
        raise ValueError(f"cross_w must be (options, {n}), got {cross.shape}")
    if not np.isfinite(cross).all() or (cross < 0).any() or (cross > 1 + 1e-12).any():
        raise ValueError("cross_w must hold similarities in [0, 1]")
    # options with the same similarity row (the same text) are one computation, so their
    # measures are the very same floats, never two decompositions a last bit apart
    cross, inverse = np.unique(cross, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    k = cross.shape[0]
    stacked = np.empty((k, n + 1, n + 1))
    stacked[:, :n, :n] = base
    stacked[:, n, :n] = cross
    stacked[:, :n, n] = cross
    stacked[:, n, n] = 1.0
    degree_sum = stacked.sum(axis=2)
    inv_sqrt = 1.0 / np.sqrt(degree_sum)
    lap = np.eye(n + 1)[None] - inv_sqrt[:, :, None] * stacked * inv_sqrt[:, None, :]
    values, vectors = _eigh((lap + lap.transpose(0, 2, 1)) / 2)
    keep = (values < threshold)[:, None, :]
    embedding = np.where(keep, vectors, 0.0)
    centred = embedding[:, n, :] - embedding.mean(axis=1)
    return {"degree": (degree_sum[:, n] / (n + 1))[inverse],
            "eccentricity": -np.linalg.norm(centred, axis=1)[inverse]}
