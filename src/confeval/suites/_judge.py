"""What the judge suites (``agreement``, ``intervals``) share: the layout of a judge's
OpenAI-compatible responses, and the decision ``confeval guarantee`` certifies for a judge —
accept its score when it is within ``--tolerance`` of the human's, the confidence the judge's
own probability of a score that close to the one it gave.

The ``intervals`` layout, from one OpenAI-compatible response and the data row it answers:
the data row's columns (``gt_score`` among them), ``custom_id``, ``parsed_score``,
``rating_stage``, ``rating_position``, ``n_missing`` and ``s2_lp<rating>`` — the judge's
log-probability of every rating at its rating position
(:func:`confeval.parse.score_tokens.extract_score`, ``--min-score`` to ``--max-score``), as
``confeval intervals run --answer generated`` records them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ..ingest.layout import Layout
from .base import Decided, Decision
from .options import Options, option

if TYPE_CHECKING:
    from ..records import RecordSet

__all__ = ["LAYOUT", "JudgeChoice", "JudgeScores", "judge_confidence", "judge_decision"]


def openai_rows(answered, normalise: str) -> list[dict] | str:
    from ..parse.score_tokens import extract_score

    found = extract_score(answered.response.tokens, answered.levels)
    if not found.ok:
        return ("openai_reply_too_long" if "reply_too_long" in found.flags
                else "openai_no_rating_in_reply")
    floored = next((int(f.split(":")[1]) for f in found.flags if f.startswith("floored:")), 0)
    row = {**answered.item, "custom_id": answered.response.custom_id,
           "parsed_score": found.score, "rating_stage": found.stage,
           "rating_position": found.position, "n_missing": floored}
    row.update({f"s2_lp{level}": float(v) for level, v in zip(answered.levels,
                                                              found.logprobs)})
    return [row]


LAYOUT = Layout({"openai": openai_rows}, key="item_id", what="judge ratings",
                data_rows="plain")
"""A judge's ratings read from another tool's file (the ``intervals`` layout)."""


@dataclasses.dataclass
class JudgeScores:
    """A judge's usable scores: the records (unusable rows excluded), the judge's and the
    reference scores and the judge's probability of each rating (renormalised over the
    scale; None without probability columns) of the usable rows, and the scale."""

    records: RecordSet
    pred: np.ndarray
    truth: np.ndarray
    probs: np.ndarray | None
    scale: np.ndarray


def judge_confidence(probs: np.ndarray, pred: np.ndarray, scale: np.ndarray,
                     tolerance: float) -> np.ndarray:
    """The judge's own probability that the right score lies within ``tolerance`` of the score
    it gave: the mass of its (renormalised) score distribution on ``|s - pred| <= tolerance``.
    The confidence that matches the decision: a judge sure of 4 but torn between 3, 4 and 5
    is confident at tolerance 1 and not at 0."""
    near = np.abs(scale[None, :] - pred[:, None]) <= tolerance + 1e-9   # scores are integers
    return (probs * near).sum(axis=1)


@dataclasses.dataclass(frozen=True)
class JudgeChoice(Options):
    """The judge decision's own choice: how far from the human a score may be and count as
    right."""

    tolerance: float = option(1.0, "Judges: a score within this distance of the human's "
                              "counts as right (0: exact).", stages=("score",), minimum=0)


ReadJudge = Callable[["RecordSet", Any, bool], JudgeScores]
"""``read(rs, options, with_truth)``: a judge suite's scores of one input, read as its own
scoring reads them (``with_truth=False``: new items, no human score, any number of rows)."""


def judge_decision(read: ReadJudge) -> Decision:
    """The judge decision of a suite whose records ``read`` reads."""
    def scores(rs, options, with_truth) -> JudgeScores:
        judge = read(rs, options, with_truth)
        if judge.probs is None:
            raise ValueError(f"{rs.source}: a judge's confidence needs its score "
                             "probabilities: --logprob-cols or --prob-cols")
        return judge

    def calibrate(rs, options, choice: JudgeChoice) -> Decided:
        judge = scores(rs, options, True)
        conf = judge_confidence(judge.probs, judge.pred, judge.scale, choice.tolerance)
        correct = (np.abs(judge.pred - judge.truth) <= choice.tolerance).astype(np.float64)
        return Decided(judge.records, conf, correct)

    def confidence(rs, options, choice: JudgeChoice) -> np.ndarray:
        judge = scores(rs, options, False)
        conf = np.full(len(judge.records.frame), np.nan)
        conf[judge.records.mask] = judge_confidence(judge.probs, judge.pred, judge.scale,
                                                    choice.tolerance)
        return conf

    def words(options, choice: JudgeChoice) -> dict[str, str]:
        return {"act": "Accept the judge's score", "item": "accepted scores",
                "error": f"more than {choice.tolerance:g} from the human's"}

    def applies_to(options, choice: JudgeChoice) -> dict:
        return {"confidence": "the judge's probability of a score within "
                f"{choice.tolerance:g} of its own", "tolerance": choice.tolerance}

    return Decision(calibrate, confidence, words, applies_to)
