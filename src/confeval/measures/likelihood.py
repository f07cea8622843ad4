"""White-box measures from the per-token log-probabilities of one answer (injected or
generated): l_t = log p(z_t | z_<t, x), t = 1..L.

``sequence_likelihood``   SL: sum_t l_t (ContextSL ``nll|unnorm``; LM-Polygraph's maximum
                          sequence probability is its negative).
``normalised_likelihood`` SL(norm): mean_t l_t — what MCQA-Eval's tables call "Perplexity"
                          (ContextSL ``nll|norm``).
``perplexity``            exp(-mean_t l_t), the perplexity proper (lower = more confident; its
                          negative is rank-equivalent to SL(norm)).
``token_sar``             sum_t R~_t l_t with relevance weights R~ from :func:`token_relevance`
                          (Duan et al., 2024; the confidence form of TokenSAR).

Each has a batched form (``*_batch``) over n answers at once: the log-probabilities as one
(n, T) array padded on the right with each answer's length (:mod:`.ragged`), validated once for
the batch. The single-answer functions are the same formulas on one row (tested equal to 1e-12
on random ragged batches).

For a one-token answer SL, SL(norm) and TokenSAR coincide (tested): about half of the CommonsenseQA
options are single tokens for SmolLM2, so these measures cannot separate them there.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import ArrayLike

from .ragged import checked_lengths, token_mask

__all__ = ["normalised_likelihood", "normalised_likelihood_batch", "perplexity",
           "perplexity_batch", "sequence_likelihood", "sequence_likelihood_batch",
           "token_relevance", "token_sar", "token_sar_batch", "weighted_logprob"]

_MAX, _MIN, _SUM = np.maximum.reduce, np.minimum.reduce, np.add.reduce
_LOGPROB_RULE = "token log-probabilities must be <= 0 and not NaN"


def _tokens(token_logprobs: ArrayLike) -> np.ndarray:
    """One answer's log-probabilities, validated (the ufunc reductions are called directly:
    on a 10-token answer numpy's wrappers would cost more than the measure)."""
    lp = np.asarray(token_logprobs, dtype=np.float64)
    if lp.ndim != 1 or lp.size == 0:
        raise ValueError("token_logprobs must be a non-empty 1-D array (one per token)")
    if not _MAX(lp) <= 0:   # a NaN fails the comparison too
        raise ValueError(_LOGPROB_RULE)
    return lp


def _short_sum(token_logprobs: ArrayLike) -> float | None:
    """The sum of one short answer's log-probabilities in plain floats, or ``None`` where
    :func:`_tokens` must decide (not a short non-empty 1-D array, a NaN or a positive value):
    two numpy reductions on a 10-token answer cost more than the unvalidated reference."""
    lp = np.asarray(token_logprobs, dtype=np.float64)
    if lp.ndim != 1 or not 0 < lp.size <= _SHORT:
        return None
    tokens = lp.tolist()
    total = sum(tokens)
    return total if max(tokens) <= 0 and total == total else None   # NaN != NaN


def token_batch(token_logprobs: ArrayLike, lengths: ArrayLike | None = None
                ) -> tuple[np.ndarray, np.ndarray]:
    """A padded (n, T) batch of log-probabilities with its lengths, validated once: the padding
    is zeroed (so sums over a row are over its tokens) and every token must be <= 0."""
    lp = np.asarray(token_logprobs, dtype=np.float64)
    if lp.ndim != 2:
        raise ValueError(f"token_logprobs must be (answers, tokens) padded, got shape {lp.shape}")
    lengths = checked_lengths(lengths, *lp.shape)
    if lengths.size and lengths.min() < lp.shape[1]:
        lp = np.where(token_mask(lengths, lp.shape[1]), lp, 0.0)
    if lp.size and not _MAX(lp, axis=None) <= 0:
        row = int(np.flatnonzero(~(lp <= 0).all(axis=1))[0])
        raise ValueError(f"{_LOGPROB_RULE} (row {row})")
    return lp, lengths


def weighted_logprob(weights: np.ndarray, lp: np.ndarray) -> np.ndarray:
    """sum_t w_t l_t over the last axis, where a token of weight 0 adds nothing even when its
    log-probability is -inf (0 x -inf would be NaN); a weighted -inf token gives -inf, the
    lowest confidence, which rankings keep (last), never drop."""
    with np.errstate(invalid="ignore"):
        return np.where(weights > 0, weights * lp, 0.0).sum(axis=-1)


def _weighted_sum(weights: np.ndarray, lp: np.ndarray) -> np.ndarray | float:
    """sum_t w_t l_t over the last axis (:func:`weighted_logprob`); the guarded form only when
    some token is impossible, a plain dot product otherwise."""
    if _MIN(lp, axis=None) == -np.inf:
        return weighted_logprob(weights, lp)
    if lp.ndim == 1:
        return np.dot(weights, lp)
    return np.einsum("ij,ij->i", weights, lp)


def sequence_likelihood(token_logprobs: ArrayLike) -> float:
    """SL: the answer's log-likelihood, the sum of its token log-probabilities.

    Examples
    --------
    >>> sequence_likelihood([-0.5, -1.5])
    -2.0
    """
    total = _short_sum(token_logprobs)
    return float(_SUM(_tokens(token_logprobs))) if total is None else total


def sequence_likelihood_batch(token_logprobs: ArrayLike, lengths: ArrayLike | None = None
                              ) -> np.ndarray:
    """SL of every answer of a padded (n, T) batch (:mod:`.ragged`): (n,).

    Examples
    --------
    >>> sequence_likelihood_batch([[-0.5, -1.5], [-1.0, 0.0]], lengths=[2, 1]).tolist()
    [-2.0, -1.0]
    """
    lp, _ = token_batch(token_logprobs, lengths)
    return _SUM(lp, axis=1)


def normalised_likelihood(token_logprobs: ArrayLike) -> float:
    """SL(norm): the mean token log-probability ("Perplexity" in MCQA-Eval's tables).

    Examples
    --------
    >>> normalised_likelihood([-0.5, -1.5])
    -1.0
    """
    lp = np.asarray(token_logprobs, dtype=np.float64)
    total = _short_sum(lp)
    if total is None:
        lp = _tokens(lp)
        return float(_SUM(lp) / lp.size)
    return total / lp.size


def normalised_likelihood_batch(token_logprobs: ArrayLike, lengths: ArrayLike | None = None
                                ) -> np.ndarray:
    """SL(norm) of every answer of a padded (n, T) batch: (n,).

    Examples
    --------
    >>> normalised_likelihood_batch([[-0.5, -1.5], [-1.0, 0.0]], lengths=[2, 1]).tolist()
    [-1.0, -1.0]
    """
    lp, lengths = token_batch(token_logprobs, lengths)
    return _SUM(lp, axis=1) / lengths


def perplexity(token_logprobs: ArrayLike) -> float:
    """exp(-mean log-probability): lower means more confident.

    Examples
    --------
    >>> round(perplexity([-0.5, -1.5]), 6)
    2.718282
    """
    return float(np.exp(-normalised_likelihood(token_logprobs)))


def perplexity_batch(token_logprobs: ArrayLike, lengths: ArrayLike | None = None) -> np.ndarray:
    """Perplexity of every answer of a padded (n, T) batch: (n,)."""
    return np.exp(-normalised_likelihood_batch(token_logprobs, lengths))


def token_relevance(tokens: Sequence[str], similarity: Callable[[str, list[str]], ArrayLike],
                    *, prefix: str = "") -> np.ndarray:
    """R(z_i) = 1 - sim(x + s, x + s without token i), one value per token (Duan et al.,
    2024, TokenSAR). Tokens are removed by position (not by text, which would remove every
    occurrence), ``prefix`` x is the question, and ``similarity(a, [b_1, ..., b_L])`` returns
    the similarities of ``a`` to each ``b`` in [0, 1] — any sentence-similarity model
    (the papers used an STS cross-encoder; offline, the embedding cosine). One call per answer.

    Examples
    --------
    >>> overlap = lambda a, bs: [len(set(a.split()) & set(b.split())) / len(set(a.split()))
    ...                          for b in bs]
    >>> token_relevance([" the", " red", " car"], overlap).round(3).tolist()
    [0.333, 0.333, 0.333]
    """
    tokens = list(tokens)
    full = prefix + "".join(tokens)
    reduced = [prefix + "".join(tokens[:i] + tokens[i + 1:]) for i in range(len(tokens))]
    sims = np.clip(np.asarray(similarity(full, reduced), dtype=np.float64), 0.0, 1.0)
    if sims.shape != (len(tokens),):
        raise ValueError(f"similarity returned {sims.shape} values for {len(tokens)} tokens")
    return 1.0 - sims


_RELEVANCE_RULE = "relevance must be one finite value >= 0 per token"


def _relevance_totals(relevance: np.ndarray) -> np.ndarray | float:
    """Each answer's total relevance (last axis), after checking every value is finite and
    >= 0 (a NaN fails the minimum's comparison, an infinity makes the total infinite)."""
    if not _MIN(relevance, axis=None) >= 0:
        raise ValueError(_RELEVANCE_RULE)
    totals = _SUM(relevance, axis=-1)
    if not (totals < np.inf if relevance.ndim == 1 else _MAX(totals, axis=None) < np.inf):
        raise ValueError(_RELEVANCE_RULE)
    return totals


def _token_sar(lp: np.ndarray, relevance: np.ndarray, totals, n_tokens):
    """TokenSAR over the last axis: relevance-weighted log-probability with the weights
    normalised to sum to 1; uniform weights (SL(norm)) where no token is relevant."""
    if lp.ndim == 1:
        if totals > 0:
            return _weighted_sum(relevance / totals, lp)
        return _SUM(lp) / n_tokens
    relevant = totals > 0
    weights = relevance / np.where(relevant, totals, 1.0)[:, None]
    if not relevant.all():   # rows with no relevant token: uniform over their own tokens
        uniform = token_mask(n_tokens, lp.shape[1]) / n_tokens[:, None]
        weights = np.where(relevant[:, None], weights, uniform)
    return _weighted_sum(weights, lp)


def token_sar(token_logprobs: ArrayLike, relevance: ArrayLike) -> float:
    """TokenSAR as a confidence: -sum_i R~(z_i) (-l_i) = sum_i R~(z_i) l_i, with the relevance
    normalised to sum to 1 (Duan et al., 2024). When no token is relevant (all R = 0) the
    weights are uniform, which makes it SL(norm). For one token it is that token's l.

    Examples
    --------
    >>> token_sar([-0.1, -2.0], [0.0, 1.0])
    -2.0
    >>> token_sar([float("-inf"), -2.0], [0.0, 1.0])   # an irrelevant impossible token
    -2.0
    """
    lp = np.asarray(token_logprobs, dtype=np.float64)
    r = np.asarray(relevance, dtype=np.float64)
    if lp.ndim == 1 and 0 < lp.size <= _SHORT and r.shape == lp.shape:
        value = _token_sar_short(lp.tolist(), r.tolist())
        if value is not None:
            return value
    lp = _tokens(lp)   # the general form: its checks say what is wrong, its rules apply
    if r.shape != lp.shape:
        raise ValueError(_RELEVANCE_RULE)
    return float(_token_sar(lp, r, _relevance_totals(r), lp.size))


_SHORT = 64
"""Answers up to this many tokens are first tried in one Python loop: on an answer of ten
tokens each numpy call costs ~0.5 us of overhead, as much as a whole step of the unvalidated
reference formulas this must not be slower than. Above it, numpy."""

_TINY_TOTAL = 2.0 ** -900
"""Below this total relevance the products r_t l_t could lose digits to underflow before the
division by the total; such answers take the normalise-first form."""


def _token_sar_short(lp: list[float], relevance: list[float]) -> float | None:
    """:func:`_token_sar` of one short answer in plain floats — sum_t r_t l_t / sum_t r_t, which
    equals the normalise-first form to a few ulps — or ``None`` for anything but the common
    case (a NaN, a positive log-probability, a negative or infinite relevance, no relevant
    token, an impossible token, a total too small): the general form then decides, with its
    messages and rules. One token weighs exactly 1."""
    total = weighted = 0.0
    for l_t, r_t in zip(lp, relevance):
        if not (l_t <= 0 and r_t >= 0):   # a NaN fails the comparisons too
            return None
        total += r_t
        weighted += r_t * l_t
    if not (_TINY_TOTAL < total < math.inf and -math.inf < weighted):   # NaN: 0 x -inf
        return None
    return weighted / total if len(lp) > 1 else lp[0]


def token_sar_batch(token_logprobs: ArrayLike, relevance: ArrayLike,
                    lengths: ArrayLike | None = None) -> np.ndarray:
    """TokenSAR of every answer of a padded (n, T) batch, ``relevance`` padded alike: (n,).

    Examples
    --------
    >>> token_sar_batch([[-0.1, -2.0], [-1.0, 0.0]], [[0.0, 1.0], [0.0, 0.0]],
    ...                 lengths=[2, 1]).tolist()
    [-2.0, -1.0]
    """
    lp, lengths = token_batch(token_logprobs, lengths)
    r = np.asarray(relevance, dtype=np.float64)
    if r.shape != lp.shape:
        raise ValueError(f"relevance must have the log-probabilities' shape {lp.shape}, "
                         f"got {r.shape}")
    if lengths.size and lengths.min() < lp.shape[1]:
        r = np.where(token_mask(lengths, lp.shape[1]), r, 0.0)
    return _token_sar(lp, r, _relevance_totals(r), lengths)
