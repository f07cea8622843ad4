"""White-box measures from the per-token log-probabilities of one answer (injected or
generated): l_t = log p(z_t | z_<t, x), t = 1..L.

``sequence_likelihood``   SL: sum_t l_t (ContextSL ``nll|unnorm``; LM-Polygraph's maximum
                          sequence probability is its negative).
``normalised_likelihood`` SL(norm): mean_t l_t — what MCQA-Eval's tables call "Perplexity"
                          (ContextSL ``nll|norm``).
``perplexity``            exp(-mean_t l_t), the perplexity proper (lower = more confident; its
                          negative is rank-equivalent to SL(norm)).

For a one-token answer SL and SL(norm) coincide (tested): about half of the CommonsenseQA
options are single tokens for SmolLM2, so these measures cannot separate them there.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["normalised_likelihood", "perplexity", "sequence_likelihood"]


def _tokens(token_logprobs: ArrayLike) -> np.ndarray:
    lp = np.asarray(token_logprobs, dtype=np.float64)
    if lp.ndim != 1 or lp.size == 0:
        raise ValueError("token_logprobs must be a non-empty 1-D array (one per token)")
    if np.isnan(lp).any() or (lp > 0).any():
        raise ValueError("token log-probabilities must be <= 0 and not NaN")
    return lp


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
