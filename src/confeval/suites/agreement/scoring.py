"""``confeval agreement``: a judge's scores against reference scores, read from one input."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import numpy as np

from .._judge import JudgeScores

if TYPE_CHECKING:
    from ...records import RecordSet
    from .options import AgreementOptions

__all__ = ["read_judge_scores", "score_agreement"]


def read_judge_scores(rs: RecordSet, options: AgreementOptions, *,
                      with_truth: bool = True) -> JudgeScores:
    """The judge's and the reference scores of one input, off-scale scores excluded and counted
    (``pred_score_off_scale``, ``gt_score_off_scale``), the score-token probabilities
    renormalised over the scale (they rarely sum to 1: mass on other tokens, as the
    judge-interval literature does). Another tool's file brings its layout's columns
    (``parsed_score``, ``gt_score``, ``s2_lp*``); confeval's own records need them named.
    Fewer than two usable rows is a :class:`ValueError`. ``with_truth=False`` reads new items
    a policy decides on: no reference column, ``truth`` all NaN, any number of rows."""
    if rs.fmt is not None:   # a judge's responses: the columns the ingest layout writes
        options = dataclasses.replace(
            options, pred_col=options.pred_col or "parsed_score",
            gt_col=options.gt_col or "gt_score",
            logprob_cols=options.logprob_cols or (None if options.prob_cols else "s2_lp*"))
    elif options.pred_col is None or (with_truth and options.gt_col is None):
        raise ValueError(f"{rs.source}: name the columns with -p/--pred-col and -g/--gt-col "
                         "(a judge's OpenAI-compatible responses need none: --data)")
    pred = rs.numeric([options.pred_col], what="pred_score")[:, 0]
    truth = (rs.numeric([options.gt_col], what="gt_score")[:, 0] if with_truth
             else np.full(len(rs.frame), np.nan))
    probs = None
    if options.logprob_cols:
        probs = np.exp(rs.numeric(options.logprob_cols, what="logprob", hi=0.0))
    elif options.prob_cols:
        probs = rs.numeric(options.prob_cols, what="prob", lo=0.0, hi=1.0)
    top = options.max_score if options.max_score is not None else (
        options.min_score + probs.shape[1] - 1 if probs is not None else 5)
    if top < options.min_score:
        raise ValueError(f"--max-score {top} is below --min-score {options.min_score}")
    scale = np.arange(options.min_score, top + 1, dtype=np.float64)
    if probs is not None and probs.shape[1] != scale.size:
        raise ValueError(f"{rs.source}: {probs.shape[1]} probability columns for a "
                         f"{scale.size}-point scale ({options.min_score}-{top})")
    rs.exclude(~np.isin(pred, scale) & rs.mask, "pred_score_off_scale")
    if with_truth:
        rs.exclude(~np.isin(truth, scale) & rs.mask, "gt_score_off_scale")
    keep = rs.mask
    if with_truth and keep.sum() < 2:
        raise ValueError(f"{rs.source}: fewer than two usable rows (excluded: "
                         f"{rs.excluded or 'none'})")
    if probs is not None:
        probs = probs[keep] / probs[keep].sum(axis=1, keepdims=True)
    return JudgeScores(rs, pred[keep], truth[keep], probs, scale)


def score_agreement(rs: RecordSet, options: AgreementOptions) -> dict:
    """``confeval agreement`` on one input's records: :func:`read_judge_scores`, then
    :func:`~confeval.evaluate.evaluate_agreement`."""
    from ...evaluate import evaluate_agreement

    judge = read_judge_scores(rs, options)
    res = evaluate_agreement(judge.pred, judge.truth, judge.probs, levels=judge.scale,
                             n_resamples=options.bootstrap, seed=options.seed)
    return {**judge.records.summary(), **res}
