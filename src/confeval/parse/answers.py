"""Checking a model's answer to a question against its key, strictly: numbers by value, option
letters exactly, short texts as whole normalised strings — never by substring (the authors'
``simple_match`` took "2" for "12" and "-3" for "3").

The answer read from a reply is the text after the last answer marker ("final answer", "the
answer is", "answer:", ``\\boxed{}``) on its line, else the whole reply when it is short
(at most ``MAX_BARE`` characters), else its last line. A numeric key takes the first number of
that text, after its last "=" if any (thousands separators and a leading minus understood;
"12" is not "120", "-3" is not "3"); a one-letter key takes a single letter in any wrapping;
any other key must equal the text after lower-casing and dropping punctuation and articles.
Linear in the reply's length, with the package's length cap.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from ._tokens import MAX_REPLY_CHARS

__all__ = ["AnswerCheck", "check_answer", "is_strict_key"]

MAX_BARE = 200
_MARKER = re.compile(r"(?i)\b(?:final\s+answer|the\s+answer\s+is|answer)\s*(?:is\s*)?[:\-=]?"
                     r"\s*|\\boxed\{")
_NUMBER = re.compile(r"(?<![\w.])-?\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\d])|(?<![\w.])-?\d+(?:\.\d+)?")
_LETTER = re.compile(r"[\s*_`(\[{$]*([A-Za-z])[\s*_`)\]}$.!?:,;]*")
_ARTICLES = re.compile(r"\b(?:a|an|the)\b")


@dataclass(frozen=True)
class AnswerCheck:
    """Whether the reply's answer equals the key (``None`` when no answer could be read), the
    answer read, and why it could not be."""

    correct: bool | None
    answer: str | None
    failure: str | None = None


def _answer_text(reply: str) -> str:
    last = None
    for m in _MARKER.finditer(reply):
        last = m
    if last is not None:
        end = reply.find("\n", last.end(), last.end() + MAX_BARE)
        return reply[last.end(): end if end >= 0 else last.end() + MAX_BARE].strip()
    stripped = reply.strip()
    if len(stripped) <= MAX_BARE:
        return stripped
    return stripped[stripped.rfind("\n") + 1:][-MAX_BARE:]


def _number(text: str) -> float | None:
    m = _NUMBER.search(text)
    return None if m is None else float(m.group(0).replace(",", ""))


def _key_number(key: Any) -> float | None:
    if isinstance(key, bool):
        return None
    if isinstance(key, (int, float)):
        return float(key) if math.isfinite(float(key)) else None
    text = str(key).strip()
    m = _NUMBER.fullmatch(text)
    return float(text.replace(",", "")) if m else None


def is_strict_key(key: Any) -> bool:
    """Whether ``key`` is checked by value or letter (a number, or one letter) rather than as
    free text (the only kind an LLM judge may grade).

    Examples
    --------
    >>> is_strict_key(12), is_strict_key("1,204"), is_strict_key("B"), is_strict_key("Paris")
    (True, True, True, False)
    """
    text = str(key).strip()
    return _key_number(key) is not None or (len(text) == 1 and text.isalpha())


def _normal(text: str) -> str:
    text = re.sub(r"[^\w\s]", " ", text.lower())
    return " ".join(_ARTICLES.sub(" ", text).split())


def check_answer(reply: str | None, key: Any) -> AnswerCheck:
    """The reply's answer against ``key`` (module docstring).

    Examples
    --------
    >>> check_answer("So the shop has 1,204 pens. The answer is 1204.", 1204).correct
    True
    >>> check_answer("120", 12).correct, check_answer("-3", "3").correct
    (False, False)
    >>> check_answer("The answer is (B).", "B").correct
    True
    >>> check_answer("I am not sure.", 7).failure
    'no_number'
    """
    if key is None or (isinstance(key, float) and math.isnan(key)) or not str(key).strip():
        return AnswerCheck(None, None, "no_key")
    text = "" if reply is None else str(reply)
    if len(text) > MAX_REPLY_CHARS:
        return AnswerCheck(None, None, "reply_too_long")
    if not text.strip():
        return AnswerCheck(None, None, "empty")
    answer = _answer_text(text)
    number = _key_number(key)
    if number is not None:
        # "82 + 24 = 106 pens": the result is what follows the last "=".
        got = _number(answer.rsplit("=", 1)[-1])
        if got is None:
            return AnswerCheck(None, None, "no_number")
        return AnswerCheck(math.isclose(got, number, rel_tol=1e-9, abs_tol=1e-9), f"{got:g}")
    key_text = str(key).strip()
    if len(key_text) == 1 and key_text.isalpha():
        m = _LETTER.fullmatch(answer)
        if m is None:
            return AnswerCheck(None, None, "no_letter")
        return AnswerCheck(m.group(1).upper() == key_text.upper(), m.group(1).upper())
    return AnswerCheck(_normal(answer) == _normal(key_text), answer)
