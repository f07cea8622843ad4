"""P(true): the model's own probability that an answer is right (Kadavath et al., 2022).

The prompt is MCQA-Eval's (App. A.2), ended with "(" as UQ-NLG does so that the next token is
the option letter; P(true) is the probability of "A" renormalised over "A" and "B" (UQ-NLG and
ContextSL read the same two tokens; LM-Polygraph instead reads log P("True") over the whole
vocabulary, not done here).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["P_TRUE_CONTINUATIONS", "p_true", "p_true_batch", "p_true_prompt"]

P_TRUE_CONTINUATIONS = ("A", "B")
"""The continuations scored after the prompt: (A) True and (B) False."""


def p_true_prompt(question: str, answer: str) -> str:
    """The P(true) prompt for ``answer`` to ``question``, ending in "(".

    Examples
    --------
    >>> print(p_true_prompt("2+2?", "4"))
    Question: '2+2?'
    Possible Answer: '4'
    Is the possible answer:
    (A) True
    (B) False
    The possible answer is: (
    """
    return (f"Question: '{question.strip()}'\nPossible Answer: '{answer.strip()}'\n"
            "Is the possible answer:\n(A) True\n(B) False\nThe possible answer is: (")


def p_true(logprob_a: float, logprob_b: float) -> float:
    """P(A) renormalised over A and B: 1 / (1 + exp(l_B - l_A)).

    Examples
    --------
    >>> round(p_true(math.log(0.6), math.log(0.2)), 6)
    0.75
    """
    a, b = float(logprob_a), float(logprob_b)
    if math.isnan(a) or math.isnan(b) or a > 0 or b > 0:
        raise ValueError("log-probabilities must be <= 0 and not NaN")
    if a == b == -math.inf:
        return float("nan")
    diff = b - a
    return 1.0 / (1.0 + math.exp(diff)) if diff < 700 else 0.0


def p_true_batch(logprob_a: ArrayLike, logprob_b: ArrayLike) -> np.ndarray:
    """:func:`p_true` of n answers at once: (n,) log-probabilities of "A" and of "B" -> (n,);
    NaN where both are -inf.

    Examples
    --------
    >>> p_true_batch([math.log(0.6), 0.0], [math.log(0.2), float("-inf")]).round(6).tolist()
    [0.75, 1.0]
    """
    a = np.asarray(logprob_a, dtype=np.float64)
    b = np.asarray(logprob_b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError("logprob_a and logprob_b must be two 1-D arrays of one length")
    if a.size and not (np.maximum.reduce(a) <= 0 and np.maximum.reduce(b) <= 0):
        raise ValueError("log-probabilities must be <= 0 and not NaN")
    with np.errstate(invalid="ignore", over="ignore"):
        out = 1.0 / (1.0 + np.exp(b - a))   # exp overflows to inf -> 0, as the single form
    out[(a == -np.inf) & (b == -np.inf)] = np.nan
    return out
