"""Finding a judge's rating in its output and reading the log-probabilities of every rating.

A judge writes free text (often a chain of thought with stray digits: "Step 2", "5 charts")
and, somewhere, its rating. The rating position is located with the three stages of the
VLM-judge paper (App. A.2), in order:

1. ``anchored`` — the text "Score:" (any case, optional markdown bold, full-width colon); the
   first rating token after the **last** such anchor (a judge that revises itself ends with
   its final score);
2. ``keyword`` — "score" or "rating" followed within ``window`` tokens by a rating token
   (the last such pair);
3. ``backward`` — scanning back from the end, the last token that is a rating.

Tokens are compared after normalisation: tokenizer markers (" 5", "▁5", "Ġ5"), markdown
asterisks and trailing punctuation ("4.", "4/" from "4/5", "3)") are stripped. At the rating
position the log-probability of every rating level is read from the token's top-k
alternatives (their masses add when several spellings of one level appear); a level missing
from the top-k gets ``floor`` (default ln 1e-5 = -11.51) and a NaN log-probability (seen with
degenerate repetitions) becomes ``floor`` too. Both are counted in the result's ``flags``.

Any K-point scale works (``levels``: 1–5, 1–10, 0–4, ...). A level written with several
tokens ("10" as "1" + "0") is read by the chain rule along the generated tokens when the model
generated that level; otherwise it gets the floor (flag ``multi_token``).

Model output is untrusted text: it is only matched with regular expressions, never evaluated.
"""

from __future__ import annotations

import bisect
import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._tokens import DEFAULT_FLOOR, MAX_REPLY_CHARS, TOKENIZER_MARKERS

__all__ = ["ScoreExtraction", "extract_score", "extract_score_from_text",
           "normalise_rating_token"]

_MARKERS = TOKENIZER_MARKERS + "\r*_`\"'"  # also markdown emphasis and quotes
_TRAILING = ".,;:!?)]}/*"
_ANCHOR = re.compile(r"score\s*\**\s*[:：]\**", re.IGNORECASE)
_KEYWORD = re.compile(r"\b(score|rating)\b", re.IGNORECASE)


@dataclass
class ScoreExtraction:
    """Where the rating was found and what the judge believed about every level."""

    score: int | None
    logprobs: list[float] | None  # one per level, in the order of ``levels``
    stage: str  # "anchored" | "keyword" | "backward" | "none"
    position: int | None = None  # token index (or character offset for text)
    flags: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.score is not None

    def to_dict(self) -> dict:
        return {"score": self.score, "logprobs": self.logprobs, "stage": self.stage,
                "position": self.position, "flags": list(self.flags)}


def normalise_rating_token(token: str) -> str:
    """' 5' / '▁5' / 'Ġ5' / '**4**' / '4.' / '4/' -> the bare digits ('5', '4')."""
    text = token.strip(_MARKERS)
    while text and text[-1] in _TRAILING:
        text = text[:-1].rstrip(_MARKERS)
    return text.strip(_MARKERS).lstrip("(")


def _as_tokens(tokens: Sequence[Any]) -> list[tuple[str, float, tuple]]:
    out = []
    for t in tokens:
        if isinstance(t, dict):
            out.append((t["token"], float(t.get("logprob", math.nan)),
                        tuple((a, float(lp)) for a, lp in t.get("top", ()))))
        elif hasattr(t, "token"):
            out.append((t.token, float(t.logprob), tuple(t.top)))
        else:
            token, logprob, *rest = t
            out.append((token, float(logprob), tuple(rest[0]) if rest else ()))
    return out


def _char_starts(tokens: list[tuple[str, float, tuple]]) -> tuple[str, list[int]]:
    pieces = [tok.replace("\u0120", " ").replace("\u2581", " ") for tok, _, _ in tokens]
    starts = list(itertools.accumulate((len(p) for p in pieces), initial=0))[:-1]
    return "".join(pieces), starts


def _level_at(tokens, i: int, level_strings: dict[str, int]) -> tuple[int, int] | None:
    """(level, n_tokens) if a rating starts at token i (possibly spread over digit tokens)."""
    first = normalise_rating_token(tokens[i][0])
    if not first.isdigit():
        return None
    digits, j = first, i + 1
    raw_first = tokens[i][0].rstrip(_MARKERS)
    longest = max(map(len, level_strings))
    # Continue a number over following bare-digit tokens ("1" "0" -> 10), unless the first
    # token already ended with punctuation ("4/" of "4/5"); a number longer than every level
    # is no level, so a run of digit tokens is never scanned further (linear time).
    while (j < len(tokens) and raw_first and raw_first[-1].isdigit()
           and tokens[j][0].isdigit() and len(digits) <= longest):
        digits += tokens[j][0]
        raw_first = tokens[j][0]
        j += 1
    if digits in level_strings:
        return level_strings[digits], j - i
    if first in level_strings:
        return level_strings[first], 1
    return None


def _find(tokens, level_strings, window: int) -> tuple[str, int | None]:
    text, starts = _char_starts(tokens)

    ends = [*starts[1:], len(text)]

    def first_rating_from(char_pos: int, limit: int | None = None):
        # the first token reaching past char_pos (a token may carry the space before it)
        begin = bisect.bisect_right(ends, char_pos)
        end = len(tokens) if limit is None else min(len(tokens), begin + limit)
        for k in range(begin, end):
            if _level_at(tokens, k, level_strings):
                return k
        return None

    anchors = list(_ANCHOR.finditer(text))
    for m in reversed(anchors):
        k = first_rating_from(m.end(), window)
        if k is not None:
            return "anchored", k
    for m in reversed(list(_KEYWORD.finditer(text))):
        k = first_rating_from(m.end(), window)
        if k is not None:
            return "keyword", k
    for k in range(len(tokens) - 1, -1, -1):
        if _level_at(tokens, k, level_strings):
            # a multi-token number ends here: step back to its first token
            while k > 0 and tokens[k - 1][0].isdigit() and _level_at(tokens, k - 1,
                                                                     level_strings):
                k -= 1
            return "backward", k
    return "none", None


def extract_score(tokens: Sequence[Any], levels: Sequence[int] = (1, 2, 3, 4, 5), *,
                  floor: float = DEFAULT_FLOOR, window: int = 8) -> ScoreExtraction:
    """Locate the rating in a generated token sequence and read every level's log-prob.

    ``tokens`` are :class:`~confeval.backends.TokenLogprob` objects, dicts with ``token``,
    ``logprob``, ``top`` (as in run records), or ``(token, logprob, top)`` tuples.
    """
    toks = _as_tokens(tokens)
    if sum(len(t[0]) for t in toks) > MAX_REPLY_CHARS:
        return ScoreExtraction(None, None, "none", None, ["reply_too_long"])
    level_strings = {str(v): v for v in levels}
    stage, pos = _find(toks, level_strings, window)
    if pos is None:
        return ScoreExtraction(None, None, "none", None, ["no_rating_found"])
    level, span = _level_at(toks, pos, level_strings)
    flags: list[str] = []
    by_level: dict[int, list[float]] = {}
    alternatives = list(toks[pos][2])
    # The generated token itself counts only if the top-k did not list its level already
    # (servers list it there; counting it twice would double its mass).
    if normalise_rating_token(toks[pos][0]) not in {normalise_rating_token(a)
                                                    for a, _ in alternatives}:
        alternatives.append((toks[pos][0], toks[pos][1]))
    for alt, lp in alternatives:
        key = normalise_rating_token(alt)
        if key in level_strings and len(key) == len(str(level_strings[key])):
            by_level.setdefault(level_strings[key], []).append(lp)
    values = []
    n_floored = n_nan = 0
    for v in levels:
        lps = [lp for lp in by_level.get(v, []) if not math.isnan(lp)]
        if any(math.isnan(lp) for lp in by_level.get(v, [])):
            n_nan += 1
        if len(str(v)) > 1 and v == level and span > 1:
            # chain rule along the generated tokens for a multi-token level
            chain = [toks[pos + k][1] for k in range(span)]
            values.append(floor if any(math.isnan(c) for c in chain) else float(sum(chain)))
            flags.append("multi_token")
        elif lps:
            values.append(float(np.logaddexp.reduce(lps)) if len(lps) > 1 else lps[0])
        else:
            values.append(floor)
            n_floored += 1
            if len(str(v)) > 1:
                flags.append("multi_token")
    if n_floored:
        flags.append(f"floored:{n_floored}")
    if n_nan:
        flags.append(f"nan_replaced:{n_nan}")
    return ScoreExtraction(level, values, stage, pos, sorted(set(flags)))


def extract_score_from_text(text: str, levels: Sequence[int] = (1, 2, 3, 4, 5), *,
                            window: int = 40) -> ScoreExtraction:
    """The same three stages on plain text (no log-probabilities); ``window`` in characters."""
    if len(text) > MAX_REPLY_CHARS:
        return ScoreExtraction(None, None, "none", None, ["reply_too_long"])
    allowed = sorted((str(v) for v in levels), key=len, reverse=True)
    number = re.compile(r"(?<![\d.])(" + "|".join(map(re.escape, allowed)) + r")(?![\d])")

    def first_after(pos: int):
        m = number.search(text, pos, pos + window)
        return m

    for anchor in reversed(list(_ANCHOR.finditer(text))):
        m = first_after(anchor.end())
        if m:
            return ScoreExtraction(int(m.group(1)), None, "anchored", m.start())
    for kw in reversed(list(_KEYWORD.finditer(text))):
        m = first_after(kw.end())
        if m:
            return ScoreExtraction(int(m.group(1)), None, "keyword", m.start())
    matches = list(number.finditer(text))
    if matches:
        return ScoreExtraction(int(matches[-1].group(1)), None, "backward", matches[-1].start())
    return ScoreExtraction(None, None, "none", None, ["no_rating_found"])
