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

For a one-token answer SL, SL(norm) and TokenSAR coincide (tested): about half of the CommonsenseQA
options are single tokens for SmolLM2, so these measures cannot separate them there.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["normalised_likelihood", "perplexity", "sequence_likelihood", "token_relevance",
           "token_sar", "weighted_logprob"]


def _tokens(token_logprobs: ArrayLike) -> np.ndarray:
    lp = np.asarray(token_logprobs, dtype=np.float64)
    if lp.ndim != 1 or lp.size == 0:
        raise ValueError("token_logprobs must be a non-empty 1-D array (one per token)")
    if np.isnan(lp).any() or (lp > 0).any():
        raise ValueError("token log-probabilities must be <= 0 and not NaN")
    return lp


def weighted_logprob(weights: np.ndarray, lp: np.ndarray) -> np.ndarray:
    """sum_t w_t l_t over the last axis, where a token of weight 0 adds nothing even when its
    log-probability is -inf (0 x -inf would be NaN); a weighted -inf token gives -inf, the
    lowest confidence, which rankings keep (last), never drop."""
    with np.errstate(invalid="ignore"):
        return np.where(weights > 0, weights * lp, 0.0).sum(axis=-1)


def sequence_likelihood(token_logprobs: ArrayLike) -> float:
    """SL: the answer's log-likelihood, the sum of its token log-probabilities.

    Examples
    --------
    >>> sequence_likelihood([-0.5, -1.5])
    -2.0
    """
    return float(_tokens(token_logprobs).sum())


def normalised_likelihood(token_logprobs: ArrayLike) -> float:
    """SL(norm): the mean token log-probability ("Perplexity" in MCQA-Eval's tables).

    Examples
    --------
    >>> normalised_likelihood([-0.5, -1.5])
    -1.0
    """
    return float(_tokens(token_logprobs).mean())


def perplexity(token_logprobs: ArrayLike) -> float:
    """exp(-mean log-probability): lower means more confident.

    Examples
    --------
    >>> round(perplexity([-0.5, -1.5]), 6)
    2.718282
    """
    return float(np.exp(-_tokens(token_logprobs).mean()))


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
    lp = _tokens(token_logprobs)
    r = np.asarray(relevance, dtype=np.float64)
    if r.shape != lp.shape or not np.isfinite(r).all() or (r < 0).any():
        raise ValueError("relevance must be one finite value >= 0 per token")
    weights = r / r.sum() if r.sum() > 0 else np.full(lp.size, 1.0 / lp.size)
    return float(weighted_logprob(weights, lp))
