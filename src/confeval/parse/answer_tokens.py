"""The probability of an answer from the log-probabilities of the tokens that spell it.

A generated reply's tokens (each with its log-probability) and the answer a scorer read from it
(Inspect's ``Score.answer``): the answer's tokens are those overlapping its **last** occurrence
in the reply (found as written, else ignoring case; ``span="reply"``: every generated token),
and their log-probabilities are pooled into one probability (:data:`POOLINGS`):

* ``sequence`` — exp of their sum: the probability of the answer's tokens (SL,
  :func:`confeval.measures.likelihood.sequence_likelihood`);
* ``normalised`` — exp of their mean: the length-normalised probability
  (:func:`~confeval.measures.likelihood.normalised_likelihood`);
* ``first`` — the first answer token's probability.

The one formula of each, used by ``confeval score`` on an Inspect log
(:mod:`confeval.ingest.inspect_log`) and by the ``confeval/confidence`` scorer inside Inspect
(:mod:`confeval.integrations.inspect_confidence`). Model output is untrusted: tokens are only
compared, never evaluated.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["POOLINGS", "SPANS", "answer_probability", "answer_tokens", "pooled_probability",
           "surface"]

POOLINGS = ("sequence", "normalised", "first")
SPANS = ("answer", "reply")


_SURFACE = str.maketrans({"\u2581": " ", "\u0120": " ", "\u010a": "\n", "\u0109": "\t"})
"""Tokenizer markers as the characters they stand for, one for one (SentencePiece ▁ and
byte-level BPE Ġ a space, Ċ a newline, ĉ a tab): a provider logging raw tokens
(``ĠConfidence``) spells the reply with the offsets of its text."""


def surface(token: str) -> str:
    """A token as the text it spells (markers replaced, one character for one)."""
    return token.translate(_SURFACE)


def answer_tokens(tokens: Sequence[Any], answer: str | None, span: str = "answer"
                  ) -> list | str:
    """The tokens of ``answer`` (its last occurrence in the reply the tokens spell — markers
    read as the spaces they stand for — as written, else ignoring case), or the reason there
    are none (``no_answer``, ``answer_not_in_tokens``, ``no_tokens``)."""
    if span == "reply":
        return list(tokens) if tokens else "no_tokens"
    if not answer or not answer.strip():
        return "no_answer"
    text = "".join(surface(t.token) for t in tokens)
    wanted = answer.strip()
    start = text.rfind(wanted)
    if start < 0 and len(text.lower()) == len(text):   # lower() kept every offset
        start = text.lower().rfind(wanted.lower())
    if start < 0:
        return "answer_not_in_tokens"
    end = start + len(wanted)
    chosen, position = [], 0
    for token in tokens:
        following = position + len(token.token)
        if following > start and position < end:
            chosen.append(token)
        position = following
    return chosen or "no_tokens"


def pooled_probability(logprobs: np.ndarray, pooling: str) -> float:
    """The probability of tokens with log-probabilities ``logprobs`` pooled as ``pooling``
    says (:data:`POOLINGS`)."""
    from ..measures.likelihood import normalised_likelihood, sequence_likelihood

    if pooling == "sequence":
        return float(np.exp(sequence_likelihood(logprobs)))
    if pooling == "normalised":
        return float(np.exp(normalised_likelihood(logprobs)))
    if pooling == "first":
        return float(np.exp(logprobs[0]))
    raise ValueError(f"pooling must be one of {', '.join(POOLINGS)}, got {pooling!r}")


def answer_probability(tokens: Sequence[Any], answer: str | None, *, pooling: str = "sequence",
                       span: str = "answer") -> tuple[float | None, dict]:
    """(the answer's probability pooled as ``pooling`` says, details), or (None, the reason
    under ``confidence_missing``)."""
    chosen = answer_tokens(tokens, answer, span)
    if isinstance(chosen, str):
        return None, {"confidence_missing": chosen}
    lps = np.array([t.logprob for t in chosen], dtype=np.float64)
    return pooled_probability(lps, pooling), {
        "n_tokens": len(chosen), "answer_tokens": "".join(t.token for t in chosen)}
