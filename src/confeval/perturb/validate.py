"""Automatic checks that a rewritten reasoning step kept what a perturbation must not touch.

ConfProBench's perturbations must preserve meaning: "do not change numbers or mathematical
expressions, including LaTeX formulas", keep the length "within 2–3 words", and (lexical)
replace at least one non-technical word. Its authors checked this by hand; here it is
checked mechanically, conservatively (a rewrite that might have changed a quantity is
rejected, and the generator retries).

Protected content, compared as multisets between the original and the rewrite:

* **numbers** — integers, decimals, thousands separators and signs (``-3``, ``1,200``,
  ``2.5e3``, ``½`` is text);
* **LaTeX spans** — ``$...$``, ``$$...$$``, ``\\(...\\)``, ``\\[...\\]``, compared with inner
  whitespace removed;
* **formula tokens** — maximal runs of non-space characters that contain a mathematical
  operator or relation (``=``, ``+``, ``−``, ``×``, ``÷``, ``^``, ``_``, ``/``, ``<``, ``>``,
  ``≤``, ``≥``, ``√``), e.g. ``F=ma``, ``v_0``, ``x^2``; trailing punctuation stripped;
* **variables** — single letters standing alone (other than the English words "a", "A"
  and "I"), and letters followed by digits or primes (``x1``, ``T2``, ``f'``).
"""

from __future__ import annotations

import re
from collections import Counter

__all__ = ["SYNTACTIC_TRANSFORMATIONS", "protected_content", "validate_rewrite"]

SYNTACTIC_TRANSFORMATIONS = {
    "voice": "active and passive voice exchanged",
    "adverbial_position": "an adverbial moved",
    "clause_order": "clause order or sentence structure changed",
    "phrase_length": "a phrase simplified or expanded",
    "inversion": "inversion or an emphatic construction",
    "condition_purpose_result": "a conditional, purpose or result construction recast",
}
"""The six syntactic transformations of the paper, by the names our prompt asks for."""

_LATEX = re.compile(r"\$\$.+?\$\$|\$.+?\$|\\\(.+?\\\)|\\\[.+?\\\]", re.S)
_NUMBER = re.compile(r"(?<![\w.])[-−+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?|(?<![\w.])[-−+]?\d+(?:\.\d+)?"
                     r"(?:[eE][-+]?\d+)?")
_OPERATORS = set("=+−×÷^_/<>≤≥√*")
_VARIABLE = re.compile(r"(?<![\w'])(?:[A-Za-z](?:\d+|'+)|[B-HJ-Zb-z])(?![\w'])")
_TRAIL = ".,;:!?)]}\"'"
_LEAD = "([{\"'"


def _without_latex(text: str) -> str:
    return _LATEX.sub(" ", text)


def protected_content(text: str) -> dict[str, Counter]:
    """The multisets of numbers, LaTeX spans, formula tokens and variables in ``text``."""
    latex = Counter(re.sub(r"\s+", "", m) for m in _LATEX.findall(text))
    rest = _without_latex(text)
    formulas = Counter()
    for token in rest.split():
        token = token.strip(_TRAIL).lstrip(_LEAD)
        if token and any(ch in _OPERATORS for ch in token) and any(ch.isalnum() for ch in token):
            formulas[token] += 1
    numbers = Counter(n.replace("−", "-").replace(",", "").lstrip("+")
                      for n in _NUMBER.findall(rest))
    variables = Counter(_VARIABLE.findall(rest))
    return {"numbers": numbers, "latex": latex, "formulas": formulas, "variables": variables}


def _words(text: str) -> list[str]:
    return re.findall(r"[A-Za-z]+(?:'[a-z]+)?", _without_latex(text).lower())


def validate_rewrite(original: str, rewrite: str, *, kind: str, max_word_diff: int = 3
                     ) -> list[str]:
    """Problems with a rewrite of ``original`` (empty list: valid).

    ``kind`` is ``"lexical"`` (synonyms: at least one word replaced) or ``"syntactic"``
    (structure: the text must differ). Both: protected content unchanged, word count within
    ``max_word_diff``, not empty.

    Examples
    --------
    >>> validate_rewrite("Then F = ma gives 12 N.", "So F = ma yields 12 N.", kind="lexical")
    []
    >>> validate_rewrite("Then F = ma gives 12 N.", "So F = ma yields 13 N.", kind="lexical")
    ['numbers_changed']
    """
    if kind not in ("lexical", "syntactic"):
        raise ValueError("kind must be 'lexical' or 'syntactic'")
    if not isinstance(rewrite, str) or not rewrite.strip():
        return ["empty"]
    problems = []
    before, after = protected_content(original), protected_content(rewrite)
    for part in ("numbers", "latex", "formulas", "variables"):
        if before[part] != after[part]:
            problems.append(f"{part}_changed")
    w0, w1 = _words(original), _words(rewrite)
    if abs(len(w0) - len(w1)) > max_word_diff:
        problems.append("length_changed")
    if re.sub(r"\s+", " ", rewrite.strip()) == re.sub(r"\s+", " ", original.strip()):
        problems.append("unchanged")
    elif kind == "lexical" and not (Counter(w1) - Counter(w0)):
        problems.append("no_word_replaced")
    return problems
