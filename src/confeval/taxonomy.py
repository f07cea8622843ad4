"""The one error-type vocabulary: every error taxonomy a suite uses, its canonical keys, display
names and the spellings models and datasets use for them.

Records always store canonical keys (``numerical_calculation``, ``vpe``), never letters or free
spellings; :func:`normalise` maps what a judge wrote onto a key.

``confprobench``
    The seven step-error types of ConfProBench (process judges; the steps suite).
``mmerror``
    The four error types of MMErroR plus "no error", as the authors' evaluation code fixes them
    (the diagnose suite): visual perception, reasoning, question comprehension and knowledge
    deployment ("knowledge application" and "knowledge deficiency" are its aliases).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ._registry import Registry

__all__ = ["MMERROR_AUTHOR_LABELS", "MMERROR_LETTER_ORDER", "TAXONOMIES", "ErrorType", "aliases",
           "error_types", "normalise"]


@dataclass(frozen=True)
class ErrorType:
    """One error type: canonical ``key``, display ``name`` and other ``spellings``."""

    key: str
    name: str
    spellings: tuple[str, ...] = ()


TAXONOMIES: Registry[tuple[ErrorType, ...]] = Registry("taxonomy", {
    "confprobench": (
        ErrorType("numerical_calculation", "Numerical calculation error",
                  ("numerical calculation", "numerical", "calculation", "nce", "arithmetic")),
        ErrorType("symbolic_calculation", "Symbolic calculation error",
                  ("symbolic calculation", "symbolic", "sce", "algebra", "algebraic")),
        ErrorType("visual_interpretation", "Visual interpretation error",
                  ("visual interpretation", "visual", "vie", "image", "diagram")),
        ErrorType("reasoning", "Reasoning error", ("reasoning", "re", "logic", "logical")),
        ErrorType("knowledge", "Knowledge error",
                  ("knowledge", "ke", "fact", "factual", "concept", "conceptual")),
        ErrorType("question_understanding", "Question understanding error",
                  ("question understanding", "que", "misunderstanding", "understanding")),
        ErrorType("no_solution_provided", "No solution provided",
                  ("no solution provided", "no solution", "nspe", "nsp", "missing solution")),
    ),
    "mmerror": (
        ErrorType("vpe", "Visual Perception Error",
                  ("visual perception error", "visual perception", "perception error",
                   "perception")),
        ErrorType("re", "Reasoning Error", ("reasoning error", "reasoning")),
        ErrorType("qce", "Question Comprehension Error",
                  ("question comprehension error", "question comprehension",
                   "comprehension error", "comprehension")),
        ErrorType("kde", "Knowledge Deployment Error",
                  ("knowledge deployment error", "knowledge deployment",
                   "knowledge application error", "knowledge application", "kae",
                   "knowledge deficiency error", "knowledge deficiency")),
        ErrorType("no_error", "No error", ("no error", "none", "no errors")),
    ),
})


MMERROR_LETTER_ORDER = ("vpe", "re", "qce", "kde", "no_error")
"""The option letters of MMErroR's prompts as the authors' code fixes them: A = VPE, B = RE,
C = QCE, D = KDE, E = no error (not the order the paper lists the types in)."""

MMERROR_AUTHOR_LABELS = {"vpe": "A_Visual_Perception_Error", "re": "B_Reasoning_Error",
                         "qce": "C_Question_Comprehension_Error",
                         "kde": "D_Knowledge_Deployment_Error", "no_error": "E_NoError"}
"""The label strings of the authors' data and code, by type key."""


def error_types(taxonomy: str) -> dict[str, ErrorType]:
    """Key -> :class:`ErrorType` of ``taxonomy``, in its documented order."""
    return {t.key: t for t in TAXONOMIES[taxonomy]}


def aliases(taxonomy: str) -> dict[str, str]:
    """Every lower-case spelling (the key with spaces, and each listed spelling) -> key."""
    return {alias: t.key for t in error_types(taxonomy).values()
            for alias in (t.key.replace("_", " "), *t.spellings)}


def normalise(text: Any, taxonomy: str = "confprobench") -> tuple[str, bool]:
    """(key, True) for an error type as a judge wrote it; ("", True) for none; (cleaned text,
    False) when it matches no spelling (kept, so that out-of-vocabulary answers are counted).

    Matching is on lower-case letters with " error" removed; failing an exact spelling, the
    longest spelling of more than three letters contained in the text wins.

    Examples
    --------
    >>> normalise("Numerical Calculation Error")
    ('numerical_calculation', True)
    >>> normalise("n/a")
    ('', True)
    """
    if text is None or isinstance(text, bool):
        return "", True
    clean = re.sub(r"[^a-z ]+", " ", str(text).lower())
    clean = re.sub(r"\s+", " ", clean.replace(" error", " ")).strip()
    if clean in ("", "none", "n a", "na", "null", "correct"):
        return "", True
    table = aliases(taxonomy)
    if clean in table:
        return table[clean], True
    for alias, key in sorted(table.items(), key=lambda kv: -len(kv[0])):
        if len(alias) > 3 and alias in clean:
            return key, True
    return clean.replace(" ", "_"), False
