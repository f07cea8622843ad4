"""confeval's numbers as lm-evaluation-harness aggregations over the per-choice items lm-eval
already passes for a ``multiple_choice`` task: ``brier_score`` items are ``(gold, softmax of
the log-likelihoods)`` and ``likelihood`` items ``(gold, log-likelihoods)``
(``lm_eval/api/task.py``, ``process_results``). Each aggregation takes the list of items and
returns one float; :mod:`.lm_eval_plugin` registers them in lm-eval.

Per item: the confidence is the top choice's probability (the softmax of the log-likelihoods,
renormalised over the choices; from ``brier_score`` items, the largest probability) and the
answer is right when the top choice (the first of tied maxima, as lm-eval's ``numpy.argmax``)
is the gold one — what ``confeval score samples_*.jsonl`` reads from the same run (without
``--normalise``: the items carry no choice lengths). The numbers are then ``confeval score``'s
(:mod:`._scoring`): ECE with 15 equal-width bins and its 95% bootstrap interval (seed 0), AUROC,
and the binary Brier score of the top choice's confidence — not lm-eval's ``brier_score``,
the multi-class Brier over all choices.

Which items an aggregation got is told by their values: log-likelihoods when any is negative
(or all are zero), else probabilities (taken as they are: lm-eval's softmax). An item without a
usable gold index (``-100``, a list of golds) has no correctness and is left out, counted.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["AGGREGATIONS", "auroc", "brier_top", "ece", "ece_high", "ece_low", "item_rows"]


def _confidence(values: np.ndarray) -> tuple[int, float]:
    from ..ingest import softmax_top

    if values.size and (values < 0).any():
        return softmax_top(values)             # log-likelihoods: confeval's own softmax
    if values.size and values.sum() > 0:
        top = int(np.argmax(values))           # lm-eval's softmax already
        return top, float(values[top])
    return softmax_top(values)


def _gold(gold: Any) -> int | None:
    if isinstance(gold, bool) or not isinstance(gold, (int, np.integer)):
        return None
    return int(gold) if gold >= 0 else None


def item_rows(items: Sequence[Any]) -> list[dict]:
    """One row ``{confidence, correct}`` per ``(gold, values)`` item, in order (an item
    without a usable gold index or values: ``correct`` None, left out and counted)."""
    rows = []
    for item in items:
        gold, values = (item[0], item[1]) if isinstance(item, (list, tuple)) and \
            len(item) == 2 else (None, None)
        try:
            array = np.asarray(values, dtype=np.float64)
        except (TypeError, ValueError):
            array = np.empty(0)
        index = _gold(gold)
        if index is None or array.ndim != 1 or array.size < 2 or index >= array.size \
                or not np.isfinite(array).all():
            rows.append({"confidence": None, "correct": None})
            continue
        top, confidence = _confidence(array)
        rows.append({"confidence": confidence, "correct": float(top == index)})
    return rows


def _value(name: str, key: str, items: Sequence[Any]) -> float:
    from ._scoring import metric_value, scored_rows

    found = scored_rows(item_rows(items), source="lm-eval items")
    value = metric_value(name, found)[key]
    return math.nan if value is None else float(value)


def ece(items: Sequence[Any]) -> float:
    """ECE (15 equal-width bins) of the top choice's confidence."""
    return _value("ece", "ece", items)


def ece_low(items: Sequence[Any]) -> float:
    """The low end of ECE's 95% bootstrap interval (1,000 resamples, seed 0)."""
    return _value("ece", "ece_low", items)


def ece_high(items: Sequence[Any]) -> float:
    """The high end of ECE's 95% bootstrap interval."""
    return _value("ece", "ece_high", items)


def auroc(items: Sequence[Any]) -> float:
    """AUROC of the top choice's confidence for telling right from wrong (NaN: one class)."""
    return _value("auroc", "auroc", items)


def brier_top(items: Sequence[Any]) -> float:
    """Binary Brier score of the top choice's confidence against its correctness."""
    return _value("brier", "brier", items)


AGGREGATIONS = {"confeval_ece": ece, "confeval_ece_low": ece_low,
                "confeval_ece_high": ece_high, "confeval_auroc": auroc,
                "confeval_brier_top": brier_top}
"""lm-eval aggregation name -> function (registered by :mod:`.lm_eval_plugin`)."""
