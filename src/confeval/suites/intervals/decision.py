"""``confeval guarantee`` on a judge's ratings as the intervals suite reads them (its
``--logprob-cols``, ``--label-col``, ``--pred-col``, ``--floor``; a run folder's own): accept
the judge's parsed score when it is within ``--tolerance`` of the human's
(:mod:`confeval.suites._judge`). One judge's K rating columns: fused judges have no one score
to accept."""

from __future__ import annotations

import numpy as np

from ...records import RecordSet
from .._judge import JudgeScores, judge_decision
from .inputs import read_intervals
from .options import IntervalsOptions

__all__ = ["DECISION"]


def read_judge(rs: RecordSet, options: IntervalsOptions, with_truth: bool) -> JudgeScores:
    """The judge's parsed score (off the scale or unparseable: excluded as
    ``pred_score_off_scale``), the human score and the judge's rating distribution (its
    log-probabilities, floored as scoring floors them, renormalised over the scale)."""
    if not options.pred_col:
        raise ValueError(f"{rs.source}: accepting a judge's score needs the column holding it: "
                         "--pred-col")
    data = read_intervals(rs, options, with_truth=with_truth)
    if data.n_judges != 1:
        raise ValueError(f"{rs.source}: --logprob-cols names {data.n_judges} judges; the "
                         "decision accepts one judge's score")
    used = np.flatnonzero(rs.mask)
    off = ~np.isin(data.parsed, data.levels)
    rs.exclude(np.isin(np.arange(len(rs.frame)), used[off]), "pred_score_off_scale")
    probs = np.exp(data.features[~off])
    return JudgeScores(rs, data.parsed[~off], data.truth[~off],
                       probs / probs.sum(axis=1, keepdims=True), data.levels)


DECISION = judge_decision(read_judge)
