"""A sample's confidence read from its Inspect output: what the ``confeval/confidence`` scorer
attaches to a verdict.

Three methods:

* ``letters`` — for multiple choice: the option letters' log-probabilities at the answer
  position (the first generated token that is a letter, or whose top alternatives list one),
  renormalised over the letters, at the verdict's letter (where its answer names none, the
  most likely letter): what ``confeval score LOG.eval`` reads from an Inspect log
  (:func:`confeval.parse.extract_from_tokens`, then
  :func:`confeval.ingest.layout.answered_letter` and :func:`~confeval.ingest.layout.softmax_at`;
  a letter missing from the top alternatives gets ln 1e-5). Needs ``logprobs=True`` and
  ``top_logprobs`` (5 or more) in the generate config.
* ``answer_logprobs`` — the probability of the answer's own tokens: the generated tokens that
  overlap the verdict's ``answer`` (its last occurrence in the reply; ``span="reply"``: every
  generated token), pooled as ``tokens`` says — ``sequence`` (exp of the sum of their
  log-probabilities: the answer's probability), ``normalised`` (exp of their mean: the
  length-normalised one) or ``first`` (the first token's probability). Needs ``logprobs=True``.
* ``verbalised`` — the confidence the model states in its reply
  (:func:`confeval.parse.parse_stated_confidence`: "Confidence: 85%").

Each returns ``(confidence, details)`` — confidence None when it cannot be read, with the
reason in ``details["confidence_missing"]`` (the metrics then leave the sample out and count
it).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..parse.answer_tokens import POOLINGS, SPANS

__all__ = ["METHODS", "POOLINGS", "SPANS", "answer_confidence", "generated_tokens",
           "letters_confidence", "sample_confidence", "stated_confidence"]

METHODS = ("letters", "answer_logprobs", "verbalised")


def generated_tokens(output: Any) -> list | None:
    """The first choice's generated tokens with their log-probabilities and top alternatives
    (confeval's ``TokenLogprob``), tokens without a finite log-probability left out, as
    confeval's Inspect reader reads them; None without log-probabilities."""
    from ..backends.base import TokenLogprob

    choices = getattr(output, "choices", None) or []
    logprobs = getattr(choices[0], "logprobs", None) if choices else None
    content = getattr(logprobs, "content", None) if logprobs is not None else None
    if not content:
        return None
    return [TokenLogprob(str(t.token), float(t.logprob),
                         tuple((str(a.token), float(a.logprob))
                               for a in (t.top_logprobs or ())))
            for t in content if t.logprob is not None and math.isfinite(t.logprob)]


def _missing(reason: str, **details: Any) -> tuple[None, dict]:
    return None, {"confidence_missing": reason, **details}


def letters_confidence(output: Any, n_choices: int, answer: str | None = None
                       ) -> tuple[float | None, dict]:
    """The probability of the verdict's letter (its ``answer``; where it names none, the most
    likely letter: ``letter_imputed``), renormalised over the letters — as ``confeval score``
    reads a multiple-choice log (:func:`confeval.ingest.layout.answered_letter`)."""
    from ..ingest.layout import answered_letter, option_letters, softmax_at
    from ..parse import extract_from_tokens

    if n_choices < 2:
        return _missing("no_choices")
    tokens = generated_tokens(output)
    if tokens is None:
        return _missing("no_logprobs")
    letters = option_letters(n_choices)
    read = extract_from_tokens(tokens, letters)
    if read["raw"] is None:
        return _missing("no_letter_in_top_logprobs")
    letter, imputed = answered_letter(read["raw"], letters, answer)
    confidence = softmax_at(np.array([read["raw"][L] for L in letters]), letters.index(letter))
    return confidence, {"letter": letter, "letter_imputed": imputed,
                        "n_missing": read["n_missing"]}


def answer_confidence(output: Any, answer: str | None, *, tokens: str = "sequence",
                      span: str = "answer") -> tuple[float | None, dict]:
    """The answer tokens' probability, pooled as ``tokens`` says
    (:func:`confeval.parse.answer_tokens.answer_probability`: the one formula, which
    ``confeval score`` uses on a log too)."""
    from ..parse.answer_tokens import answer_probability

    generated = generated_tokens(output)
    if generated is None:
        return _missing("no_logprobs")
    confidence, details = answer_probability(generated, answer, pooling=tokens, span=span)
    if confidence is None:
        return _missing(details["confidence_missing"])
    return confidence, details


def stated_confidence(output: Any, *, fallback: str = "none") -> tuple[float | None, dict]:
    """The confidence stated in the reply."""
    from ..parse import parse_stated_confidence

    stated = parse_stated_confidence(getattr(output, "completion", "") or "", fallback=fallback)
    details: dict[str, Any] = {"flags": list(stated.flags)} if stated.flags else {}
    if stated.value is None:
        return _missing(stated.flags[-1] if stated.flags else "no_number", **details)
    return stated.value, details


def sample_confidence(method: str, output: Any, *, n_choices: int, answer: str | None,
                      tokens: str = "sequence", span: str = "answer",
                      fallback: str = "none") -> tuple[float | None, dict]:
    """The confidence of one sample's output by ``method`` (see the module docstring)."""
    if method == "letters":
        return letters_confidence(output, n_choices, answer)
    if method == "answer_logprobs":
        return answer_confidence(output, answer, tokens=tokens, span=span)
    return stated_confidence(output, fallback=fallback)


def check_method(method: str, tokens: str, span: str) -> None:
    """A :class:`ValueError` naming the choices unless every name is known."""
    for what, value, choices in (("method", method, METHODS), ("tokens", tokens, POOLINGS),
                                 ("span", span, SPANS)):
        if value not in choices:
            raise ValueError(f"confeval/confidence: {what} must be one of "
                             f"{', '.join(choices)}, got {value!r}")
