"""``confeval compare`` of confidences: accuracy (exact McNemar), AUROC (DeLong), AUARC, ECE,
Brier (paired bootstrap) of each model's confidence column."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..base import Comparison
from .scoring import columns

if TYPE_CHECKING:
    from ...records import RecordSet
    from .options import ConfidenceOptions

__all__ = ["COMPARISON"]


def read(rs: RecordSet, options: ConfidenceOptions) -> dict[str, np.ndarray]:
    """Each usable row's confidence and correctness, read as ``confeval score`` reads them."""
    from ...evaluate import read_confidence_records

    conf, correct = read_confidence_records(rs, *columns(rs, options),
                                            any_confidence=options.any_confidence,
                                            confidence_scale=options.confidence_scale)
    return {"confidence": conf, "correct": correct}


def metrics(aligned: dict[str, dict[str, np.ndarray]], options: ConfidenceOptions) -> dict:
    from ...evaluate import confidence_metrics

    return confidence_metrics({name: (a["confidence"], a["correct"])
                               for name, a in aligned.items()}, n_bins=options.n_bins,
                              probability_scale=not options.any_confidence)


COMPARISON = Comparison(read, metrics)
