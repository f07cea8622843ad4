"""Inspect's sample scores -> confeval's numbers: what the ``confeval/*`` metrics compute.

Each score gives one row (one per sample and epoch: the metrics take Inspect's unreduced
scores, as ``confeval score`` reads a log, one row per sample and epoch):

* **correctness** — the scorer's verdict as Inspect turns it into a number
  (``value_to_float``: ``C`` = 1, ``I`` = 0, ``P`` = 0.5, ``N`` = 0, ``yes``/``true`` = 1,
  numbers as they are): the score's value, or for a dict value its ``correct`` key
  (``correct_key``);
* **confidence** — the dict value's ``confidence`` key when it has one, else the score's
  ``metadata["confidence"]`` (``confidence_key``; what the ``confeval/confidence`` scorer
  writes).

The rows are scored as ``confeval score`` scores them (:mod:`._scoring`): on the same scores in
the same order every number, value and interval, is the one ``confeval score`` prints.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ._scoring import ScoredRows, metric_value, scored_rows

__all__ = ["CONFIDENCE_KEY", "CORRECT_KEY", "METRICS", "ScoredRows", "metric_value",
           "score_rows", "scored_rows"]

CONFIDENCE_KEY = "confidence"
"""Where a score carries its confidence: a dict value's key, else a metadata key."""

CORRECT_KEY = "correct"
"""The key of a dict value that holds the verdict."""

METRICS = ("ece", "brier", "auroc", "auarc", "prr")
"""The metrics registered in Inspect as ``confeval/<name>``."""


def _verdict_and_confidence(score: Any, confidence_key: str, correct_key: str,
                            sample_id: Any) -> tuple[Any, Any]:
    value = score.value
    metadata = score.metadata or {}
    if isinstance(value, Mapping):
        if correct_key not in value:
            raise ValueError(f"sample {sample_id}: its score value has keys "
                             f"{', '.join(map(str, value)) or 'none'} and no {correct_key!r} "
                             "(the verdict): name it with correct_key=")
        return value[correct_key], value.get(confidence_key, metadata.get(confidence_key))
    return value, metadata.get(confidence_key)


def score_rows(scores: Sequence[Any], to_float: Callable[[Any], float], *,
               confidence_key: str = CONFIDENCE_KEY,
               correct_key: str = CORRECT_KEY) -> list[dict]:
    """One row ``{sample_id, epoch_index, confidence, correct}`` per Inspect ``SampleScore``
    (or ``Score``), in order; a confidence is passed on as it is (the record set decides
    whether it is usable, as for a file)."""
    rows = []
    seen: dict[str, int] = {}
    for sample_score in scores:
        score = getattr(sample_score, "score", sample_score)
        sample_id = getattr(sample_score, "sample_id", None)
        verdict, confidence = _verdict_and_confidence(score, confidence_key, correct_key,
                                                      sample_id)
        key = str(sample_id)
        seen[key] = seen.get(key, 0) + 1
        correct = to_float(verdict)
        rows.append({"sample_id": key, "repeat": seen[key], "confidence": confidence,
                     "correct": correct if math.isfinite(correct) else None})
    return rows


