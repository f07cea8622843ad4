"""``confeval guarantee`` on a confidence column: answer when the confidence is at least t;
an answer is right as the correctness column says (or, with ``--risk loss``, bad as a 0/1
loss column says)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..base import Decided, Decision
from ..options import Options
from .scoring import columns

if TYPE_CHECKING:
    from ...records import RecordSet
    from .options import ConfidenceOptions

__all__ = ["DECISION"]


def calibrate(rs: RecordSet, options: ConfidenceOptions, choice: Options) -> Decided:
    from ...evaluate import read_confidence_records

    conf, correct = read_confidence_records(rs, *columns(rs, options), any_confidence=True,
                                            confidence_scale=options.confidence_scale)
    return Decided(rs, conf, correct)


def _column(options: ConfidenceOptions) -> str:
    return options.confidence_col or "confidence"


def confidence(rs: RecordSet, options: ConfidenceOptions, choice: Options) -> np.ndarray:
    """Each row's confidence on the scale it was certified on (the column divided by
    ``--confidence-scale``, as :func:`calibrate` read it)."""
    return rs.numeric([_column(options)], what="confidence")[:, 0] / options.confidence_scale


def words(options: ConfidenceOptions, choice: Options) -> dict[str, str]:
    return {"act": "Answer", "item": "answered items", "error": "wrong"}


def applies_to(options: ConfidenceOptions, choice: Options) -> dict:
    return {"confidence": _column(options)}


def loss(options: ConfidenceOptions, choice: Options) -> str:
    return options.correct_col or "correct"


DECISION = Decision(calibrate, confidence, words, applies_to, loss=loss)
