"""Option-letter log-probabilities from generated tokens with their top-k alternatives.

The first generated token that is an option letter is read (or, if none is, the first token
whose top-k lists one). Tokenizer markers are normalised (" A", "▁A", "ĠA", "A)", "A." all mean
A, and their masses add up); a letter missing from the top-k gets ``floor`` (default ln 1e-5 =
-11.51) and is counted. Model output is untrusted: tokens are only compared, never evaluated.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ._tokens import DEFAULT_FLOOR, MAX_REPLY_CHARS, TOKENIZER_MARKERS

__all__ = ["extract_from_tokens", "normalise_token"]

_MARKERS = TOKENIZER_MARKERS


def normalise_token(token: str) -> str:
    """Strip tokenizer markers, whitespace and trailing punctuation: " A)" -> "A"."""
    return token.strip(_MARKERS).rstrip(").:,").lstrip("(").strip(_MARKERS)


def extract_from_tokens(tokens: Sequence[Any], letters: Sequence[str],
                        floor: float = DEFAULT_FLOOR) -> dict[str, Any]:
    """Letter log-probabilities from generated tokens with top-k alternatives.

    Returns ``raw`` (letter -> log-prob before renormalising), ``position`` (index of the token
    read, or None), ``n_missing`` (letters not in the top-k, given ``floor``), ``missing``
    (those letters, when read) and ``reason`` (None, or why nothing usable was found).
    """
    if sum(len(getattr(t, "token", "")) for t in tokens) > MAX_REPLY_CHARS:
        return {"raw": None, "position": None, "n_missing": len(letters),
                "reason": "reply_too_long"}
    wanted = set(letters)
    position = next((i for i, t in enumerate(tokens) if normalise_token(t.token) in wanted),
                    None)
    if position is None:
        position = next((i for i, t in enumerate(tokens)
                         if any(normalise_token(a) in wanted for a, _ in t.top)), None)
    if position is None:
        return {"raw": None, "position": None, "n_missing": len(letters),
                "reason": "no option letter among the generated tokens or their top-k"}
    tok = tokens[position]
    by_letter: dict[str, list[float]] = {}
    alternatives = list(tok.top)
    # The generated token counts only if the top-k did not list its letter already.
    if normalise_token(tok.token) not in {normalise_token(a) for a, _ in alternatives}:
        alternatives.append((tok.token, tok.logprob))
    for alt, lp in alternatives:
        key = normalise_token(alt)
        if key in wanted:
            by_letter.setdefault(key, []).append(lp)
    from scipy.special import logsumexp  # scipy only when a reply is read, not at start-up

    raw = {L: float(logsumexp(by_letter[L])) if L in by_letter else floor for L in letters}
    return {"raw": raw, "position": position,
            "n_missing": sum(L not in by_letter for L in letters),
            "missing": [L for L in letters if L not in by_letter], "reason": None}
