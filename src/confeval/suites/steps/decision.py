"""``confeval guarantee`` on a process judge's step verdicts: accept a step verdict (correct
if ``p >= 0.5``) with confidence ``max(p, 1 - p)`` of the suite's ``--p-col``, right when the
verdict is the step's ``--label-col`` (ConfProBench's step confidence,
:func:`confeval.metrics.steps.step_confidence`). Original chains only: perturbed variants
probe robustness and would count a step several times (excluded as ``perturbed_variant``).
The steps of one chain are not independent: the chain (``item_id``) is the cluster, so
splits keep a chain on one side and LTT tests chains (:mod:`confeval.guarantee.clustered`)."""

from __future__ import annotations

import numpy as np

from ...records import RecordSet
from ..base import Decided, Decision
from ..options import Options
from .inputs import ORIGINAL, step_frame
from .options import StepsOptions

__all__ = ["DECISION"]


def calibrate(rs: RecordSet, options: StepsOptions, choice: Options) -> Decided:
    from ...metrics.steps import step_confidence

    frame = step_frame(rs, p_col=options.p_col, label_col=options.label_col)
    perturbed = np.zeros(len(rs.frame), bool)
    perturbed[rs.frame.index.get_indexer(frame.index[frame["variant"] != ORIGINAL])] = True
    rs.exclude(perturbed, "perturbed_variant")
    frame = frame[frame["variant"] == ORIGINAL]
    verdict, conf = step_confidence(frame["p_correct"].to_numpy())
    return Decided(rs, conf, (verdict == frame["label"].to_numpy()).astype(np.float64),
                   frame["item_id"].to_numpy())


def confidence(rs: RecordSet, options: StepsOptions, choice: Options) -> np.ndarray:
    p = rs.numeric([options.p_col], what="p_correct", lo=0.0, hi=1.0)[:, 0]
    return np.maximum(p, 1.0 - p)


def words(options: StepsOptions, choice: Options) -> dict[str, str]:
    return {"act": "Accept the step verdict", "item": "accepted verdicts", "error": "wrong"}


def applies_to(options: StepsOptions, choice: Options) -> dict:
    return {"confidence": f"max(p, 1 - p) of the step's probability of being correct "
            f"({options.p_col})"}


DECISION = Decision(calibrate, confidence, words, applies_to)
