"""Asking a model a multiple-choice question and reading its option-letter distribution.

Two ways to get P(option), chosen by what the backend can do (see
:func:`confeval.suites.base.read_method`):

``score`` (exact; ``hf:`` and ``local`` backends)
    The log-probability of each option letter as the assistant's whole reply.
``top_logprobs`` (any OpenAI-compatible server)
    Generate greedily with ``top_logprobs=k`` and read the letters among the top-k
    alternatives with :func:`confeval.parse.option_tokens.extract_from_tokens`.

Either way the letter log-probabilities are renormalised over the options, and the mass that
fell outside the letters (1 - sum of their raw probabilities) is recorded as ``mass_outside``.
"""

from __future__ import annotations

import math
import string
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from scipy.special import logsumexp

from ..backends import Backend, GenerateParams
from ..parse._tokens import DEFAULT_FLOOR
from ..parse.option_tokens import extract_from_tokens
from .base import read_method

__all__ = ["build_messages", "letters_for", "option_distribution", "valid_logprobs"]

IDK = "I don't know"
NOTA = "None of the above"


def valid_logprobs(values) -> bool:
    """Log-probabilities a model may have given: finite (or -inf, probability 0) and not
    above 0 (a little float slack allowed). A NaN or a positive value from a server is not
    a distribution: the record is unparseable (``invalid_logprobs``), never scored."""
    arr = np.asarray(list(values), dtype=np.float64)
    return bool(arr.size) and not np.isnan(arr).any() and not (arr > 1e-6).any() and \
        bool(np.isfinite(arr).any())


def letters_for(n_options: int) -> list[str]:
    """The option letters A, B, ... of ``n_options`` options (1 to 26)."""
    if not 1 <= n_options <= 26:
        raise ValueError("between 1 and 26 options are supported")
    return list(string.ascii_uppercase[:n_options])


def build_messages(question: str, options: Sequence[str], *, idk: bool = False,
                   nota: bool = False, system: str | None = None) -> tuple[list[dict], list[str]]:
    """Chat messages asking for the letter of the right option, and the letters offered.

    ``idk``/``nota`` append "I don't know" / "None of the above" as extra options (as in the
    uncertainty benchmarks' prompts), so a model has an honest way out.
    """
    opts = list(options) + ([IDK] if idk else []) + ([NOTA] if nota else [])
    letters = letters_for(len(opts))
    listing = "\n".join(f"{letter}. {text}" for letter, text in zip(letters, opts))
    user = (f"{question.strip()}\n\n{listing}\n\n"
            f"Reply with the letter of the correct option ({', '.join(letters)}) and nothing "
            "else.")
    messages = [{"role": "system", "content": system or
                 "You answer multiple-choice questions with a single option letter."},
                {"role": "user", "content": user}]
    return messages, letters


def _summarise(raw: Mapping[str, float], letters: Sequence[str]) -> dict[str, Any]:
    lp = np.array([raw[L] for L in letters], dtype=np.float64)
    total = logsumexp(lp)
    norm = lp - total
    return {"logprobs": dict(zip(letters, norm.tolist())),
            "mass_outside": float(max(0.0, 1.0 - math.exp(min(total, 0.0))))}


async def option_distribution(backend: Backend, messages: Sequence[dict],
                              letters: Sequence[str], *, method: str = "auto", top_k: int = 20,
                              floor: float = DEFAULT_FLOOR) -> dict[str, Any]:
    """Ask once and return the renormalised option distribution (see module docstring).

    Returns ``method, logprobs (letter -> log-prob, renormalised), mass_outside, text,
    n_missing, status ("ok" or "unparseable"), reason``.
    """
    method = read_method(backend, method)
    if method == "score":
        raw = dict(zip(letters, await backend.score(messages, list(letters))))
        if not valid_logprobs(raw.values()):
            return {"method": method, "logprobs": None, "mass_outside": None, "text": None,
                    "n_missing": 0, "status": "unparseable", "reason": "invalid_logprobs"}
        return {"method": method, **_summarise(raw, letters), "text": None, "n_missing": 0,
                "status": "ok", "reason": None}
    params = GenerateParams(max_tokens=8, temperature=0.0, logprobs=True, top_logprobs=top_k)
    gen = (await backend.generate(messages, params))[0]
    found = extract_from_tokens(gen.tokens or (), letters, floor)
    if found["raw"] is not None and not valid_logprobs(found["raw"].values()):
        found = {**found, "raw": None, "reason": "invalid_logprobs"}
    if found["raw"] is None:
        return {"method": method, "logprobs": None, "mass_outside": None, "text": gen.text,
                "n_missing": found["n_missing"], "status": "unparseable",
                "reason": found["reason"]}
    return {"method": method, **_summarise(found["raw"], letters), "text": gen.text,
            "n_missing": found["n_missing"], "status": "ok", "reason": None}
