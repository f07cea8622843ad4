"""How a suite's records are made from another tool's samples: a :class:`Layout`, which the
suite owns and hands to :func:`confeval.ingest.read_records` (ingest never looks a suite up),
and the helpers the suites' row functions share."""

from __future__ import annotations

import string
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["CONFIDENCE_SOURCES", "CORRECTNESS_METRICS", "Layout", "RowsFn", "answered_letter",
           "letters_at_answer",
           "openai_base", "option_letters", "softmax_at", "softmax_top"]

RowsFn = Callable[[Any, str], "list[dict] | str"]
"""The rows of one sample (``fn(sample, normalise)``) in a suite's layout, or the reason the
sample cannot give them."""


@dataclass(frozen=True)
class Layout:
    """One suite's record layout for the formats it reads.

    ``rows`` maps a format (``lm-eval``, ``inspect``, ``openai``) to the rows of one of its
    samples; ``key`` is the column naming a sample's rows (an unusable sample's placeholder row
    carries it); ``what`` names the records in messages ("sets records"); ``data_rows`` says
    how an OpenAI response's data file is read (``questions``: each row a multiple-choice
    question; ``plain``: the row's columns as they are); ``generation`` lets lm-eval samples
    of a task without options through (their per-sample metrics: the ``score`` layout only);
    ``aligns`` whether unique keys name the items to align models by (``compare``);
    ``averaged`` the columns ``--epochs mean`` averages over a sample's epochs (none: the
    layout refuses it); ``confidences`` the columns, first found first, that become
    ``confidence`` where the rows bring none (:data:`CONFIDENCE_SOURCES` says what each is);
    ``confidence_of`` what the ``confidence`` column the rows of a format bring is;
    ``verdicts``: the rows hold the scorer's verdict (``score``), so a log of several scorers
    is read one scorer at a time; a layout whose rows do not (``sets``: the letters'
    log-probabilities and the gold letter, the same under every scorer) reads the first."""

    rows: Mapping[str, RowsFn]
    key: str = "doc_id"
    what: str = "records"
    data_rows: str = "questions"
    generation: bool = False
    aligns: bool = True
    averaged: tuple[str, ...] = ()
    confidences: tuple[str, ...] = ()
    confidence_of: Mapping[str, str] = field(default_factory=dict)
    verdicts: bool = True
    formats: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        if self.data_rows not in ("questions", "plain"):
            raise ValueError(f"data_rows must be questions or plain, got {self.data_rows!r}")
        object.__setattr__(self, "formats", tuple(self.rows))


def option_letters(n: int) -> list[str]:
    """The letters of ``n`` options in order: A, B, ... (past 26: O1, O2, ...)."""
    return list(string.ascii_uppercase[:n]) if n <= 26 else [f"O{i + 1}" for i in range(n)]


def softmax_top(scores: np.ndarray) -> tuple[int, float]:
    """(the first of the tied maxima, as lm-eval's ``numpy.argmax``; its softmax probability)."""
    top = int(np.argmax(scores))
    return top, softmax_at(scores, top)


def answered_letter(logprobs: Mapping[str, float], letters: list[str], answer: str | None
                    ) -> tuple[str, bool]:
    """(the option letter a multiple-choice confidence is about, whether it was imputed): the
    scorer's answer where it names one of ``letters``, else the most likely letter (the first
    of tied maxima) — the one rule of ``confeval score`` on an Inspect log and of the
    ``confeval/confidence`` scorer's ``letters`` method."""
    named = (answer or "").strip().upper()
    if named in letters:
        return named, False
    return letters[int(np.argmax([logprobs[L] for L in letters]))], True


def softmax_at(scores: np.ndarray, index: int) -> float:
    """The softmax probability of ``scores[index]`` (the one formula of an option's
    probability from its log-probability or log-likelihood)."""
    shifted = np.exp(scores - scores.max())
    return float(shifted[index] / shifted.sum())


CONFIDENCE_SOURCES = {
    "scorer_confidence": "the confidence the scorer attached to its verdict",
    "task_confidence": "the confidence the task logged",
    "p_answer": "the answer tokens' probability: exp of the sum of their log-probabilities",
    "p_answer_norm": "the answer tokens' length-normalised probability: exp of their mean "
                     "log-probability",
    "p_answer_first": "the first answer token's probability",
    "stated_confidence": "the confidence stated in the reply",
    "epoch_agreement": "the share of the sample's other epochs giving the same answer",
}
"""What each confidence column read from another tool's file is."""

CORRECTNESS_METRICS = ("exact_match", "acc")
"""lm-eval's per-sample metrics read as correctness in a task without options, first found
first."""


def letters_at_answer(answered) -> tuple[list[str], np.ndarray, int, bool] | str:
    """(the question's letters, their log-probabilities at the answer position, how many of
    them the top log-probs lack, whether the gold letter is among those listed) of one
    OpenAI-compatible response, or the reason they cannot be read."""
    from ..parse.option_tokens import extract_from_tokens

    letters = answered.item["letters"]
    read = extract_from_tokens(answered.response.tokens, letters)
    if read["raw"] is None:
        return ("openai_reply_too_long" if read["reason"] == "reply_too_long"
                else "openai_no_letter_in_top_logprobs")
    return (letters, np.array([read["raw"][L] for L in letters]), read["n_missing"],
            answered.item["answer"] not in read["missing"])


def openai_base(answered) -> dict[str, Any]:
    """The id columns of a response's row: its data row's ``item_id`` and its ``custom_id``."""
    return {"item_id": answered.item["item_id"], "custom_id": answered.response.custom_id}
