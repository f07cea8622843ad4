"""A confidence the model states in its reply ("Confidence: 85%", "how sure: 0.9").

Verbalised confidence is read after the **last** anchor word (``confidence``, ``sure``,
``certain``, ``certainty``, ``probability``; any case, an optional colon or "is"), as the first
number within ``window`` characters — or a percentage written just before such a word ("90%
sure"), when that comes later: a model that revises itself ends with its final word. A number
followed by ``%`` is a percentage; a number above 1 and at most 100 without the sign is read
as a percentage too and flagged (``percent_without_sign``: "Confidence: 85" means 85%).
Without an anchor, ``fallback="last_number"`` reads the reply's last number (the lm-eval
fixture's "4, 90" replies), flagged ``no_anchor``. Anything else — no number, a number above
100, a negative one — is no confidence (``value`` None, with the reason in ``flags``).

Model output is untrusted: regular expressions only, linear in the reply's length, and a reply
longer than :data:`~confeval.parse.MAX_REPLY_CHARS` is not read (``reply_too_long``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ._tokens import MAX_REPLY_CHARS

__all__ = ["StatedConfidence", "parse_stated_confidence"]

_ANCHOR = re.compile(r"\b(?:confidence|confident|sure|certain(?:ty)?|probability)\b\s*"
                     r"(?:level\s*)?(?:is\s*|of\s*)?[:：=]?", re.IGNORECASE)
_NUMBER = re.compile(r"(?<![\w.])(-?\d+(?:\.\d+)?|-?\.\d+)\s*(%?)")
_BEFORE = re.compile(r"(?<![\w.])(-?\d+(?:\.\d+)?|-?\.\d+)\s*(%)\s*(?:sure|confident|certain)\b",
                     re.IGNORECASE)
FALLBACKS = ("none", "last_number")
"""What to read when no anchor word is found: nothing, or the reply's last number."""


@dataclass(frozen=True)
class StatedConfidence:
    """A stated confidence in [0, 1] (None: none could be read), the character offset of the
    number read (None: not found), and flags (``percent``, ``percent_without_sign``,
    ``no_anchor``; or why nothing was read: ``no_number``, ``out_of_range``,
    ``reply_too_long``)."""

    value: float | None
    position: int | None = None
    flags: tuple[str, ...] = field(default_factory=tuple)


def _read(match: re.Match, flags: list[str]) -> StatedConfidence:
    number, percent = float(match.group(1)), bool(match.group(2))
    if percent:
        flags.append("percent")
        number /= 100
    elif 1 < number <= 100:
        flags.append("percent_without_sign")
        number /= 100
    if not 0 <= number <= 1:
        return StatedConfidence(None, match.start(1), (*flags, "out_of_range"))
    return StatedConfidence(number, match.start(1), tuple(flags))


def _last_anchored(text: str, window: int) -> re.Match | None:
    """The number after the last anchor word that has one within ``window``, or a
    percentage written just before one ("90% sure"), whichever comes last."""
    after = None
    for anchor in reversed(list(_ANCHOR.finditer(text))):
        after = _NUMBER.search(text, anchor.end(), anchor.end() + window)
        if after:
            break
    before = next(reversed(list(_BEFORE.finditer(text))), None)
    found = [m for m in (after, before) if m is not None]
    return max(found, key=lambda m: m.start()) if found else None


def parse_stated_confidence(reply: str | None, *, window: int = 40,
                            fallback: str = "none") -> StatedConfidence:
    """The confidence stated in ``reply``.

    Parameters
    ----------
    reply : str or None
        The model's reply (untrusted text).
    window : int, default 40
        Characters after the anchor word searched for the number.
    fallback : {"none", "last_number"}
        Without an anchor word: read nothing, or the reply's last number.

    Returns
    -------
    StatedConfidence

    Examples
    --------
    >>> parse_stated_confidence("The answer is B. Confidence: 85%").value
    0.85
    >>> parse_stated_confidence("B (I am 0.7 sure... no: confidence 0.9)").value
    0.9
    >>> s = parse_stated_confidence("Answer: 4. Confidence: 80")
    >>> s.value, s.flags
    (0.8, ('percent_without_sign',))
    >>> parse_stated_confidence("4, 90", fallback="last_number").value
    0.9
    >>> parse_stated_confidence("Confidence: 250").flags
    ('out_of_range',)
    """
    if fallback not in FALLBACKS:
        raise ValueError(f"fallback must be one of {', '.join(FALLBACKS)}, got {fallback!r}")
    text = reply or ""
    if len(text) > MAX_REPLY_CHARS:
        return StatedConfidence(None, None, ("reply_too_long",))
    found = _last_anchored(text, window)
    if found is not None:
        return _read(found, [])
    if fallback == "last_number":
        numbers = list(_NUMBER.finditer(text))
        if numbers:
            return _read(numbers[-1], ["no_anchor"])
    return StatedConfidence(None, None, ("no_number",))
