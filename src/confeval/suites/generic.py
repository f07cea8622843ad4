"""The two scoring commands that belong to no suite, declared like a suite's scoring:
``confeval score`` (a confidence against correctness) and ``confeval agreement`` (a judge's
scores against reference scores). One options class each, from which the command's flags,
``run.json`` and ``confeval rerun`` derive, and one function scoring one record file."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .base import MAX_BOOTSTRAP
from .compare import Comparison
from .options import FormatOptions, IngestOptions, option

if TYPE_CHECKING:
    from ..records import RecordSet

__all__ = ["AgreementOptions", "ConfidenceOptions", "score_agreement_file",
           "score_confidence_file"]

_SCORE = ("score",)


def _check_bootstrap(bootstrap: int) -> None:
    if not 0 <= bootstrap <= MAX_BOOTSTRAP:
        raise ValueError(f"--bootstrap must be between 0 and {MAX_BOOTSTRAP:,}, got "
                         f"{bootstrap:,}")


@dataclasses.dataclass(frozen=True)
class ConfidenceOptions(IngestOptions):
    """Options of ``confeval score``: the two columns (needed for confeval's own records; a
    file of another tool's format brings ``confidence`` and ``correct``)."""

    confidence_col: str | None = option(None, "Column with the confidence (default for "
                                        "another tool's file: its confidence).",
                                        stages=_SCORE, short="-c")
    correct_col: str | None = option(None, "Column with correctness (0/1 or [0, 1]).",
                                     stages=_SCORE, short="-y")
    any_confidence: bool = option(False, "The confidence is any real-valued measure, not a "
                                  "probability: skip ECE/MCE/Brier, keep ranking metrics.",
                                  stages=_SCORE, flag="--any-confidence")
    n_bins: int = option(15, "ECE bins (equal width).", stages=_SCORE, minimum=1)
    rce_bins: int = option(20, "Rank-calibration bins (equal mass).", stages=_SCORE,
                           minimum=1)
    bootstrap: int = option(1000, "Bootstrap resamples for 95% intervals (0: none).",
                            stages=_SCORE, minimum=0)
    seed: int = option(0, "Seed of the bootstrap.", stages=_SCORE)

    def __post_init__(self) -> None:
        if self.n_bins < 1 or self.rce_bins < 1:
            raise ValueError("--n-bins and --rce-bins must be at least 1")
        _check_bootstrap(self.bootstrap)


@dataclasses.dataclass(frozen=True)
class AgreementOptions(FormatOptions):
    """Options of ``confeval agreement`` (the three columns are needed for confeval's own
    records; a judge's OpenAI-compatible responses read with ``--data`` bring
    ``parsed_score``, ``gt_score`` and ``s2_lp<rating>``)."""

    pred_col: str | None = option(None, "Column with the judge's score.", stages=_SCORE,
                                  short="-p")
    gt_col: str | None = option(None, "Column with the reference score.", stages=_SCORE,
                                short="-g")
    logprob_cols: str | None = option(None, "Score-token log-probability columns, lowest "
                                      "score first (comma list or glob, e.g. 's2_lp*').",
                                      stages=_SCORE)
    prob_cols: str | None = option(None, "Score probability columns instead of "
                                   "log-probabilities.", stages=_SCORE)
    min_score: int = option(1, "Lowest score of the scale (and of the first probability "
                            "column).", stages=_SCORE)
    max_score: int | None = option(None, "Highest score of the scale (default: one per "
                                   "probability column, else 5). Scores off the scale (a -1 "
                                   "'unparseable' marker, 7.5 on 1-5) are excluded and "
                                   "counted.", stages=_SCORE)
    bootstrap: int = option(1000, "Bootstrap resamples for 95% intervals (0: none).",
                            stages=_SCORE, minimum=0)
    seed: int = option(0, "Seed of the bootstrap.", stages=_SCORE)

    def __post_init__(self) -> None:
        if self.logprob_cols and self.prob_cols:
            raise ValueError("give --logprob-cols or --prob-cols, not both")
        if self.max_score is not None and self.max_score < self.min_score:
            raise ValueError(f"--max-score {self.max_score} is below --min-score "
                             f"{self.min_score}")
        _check_bootstrap(self.bootstrap)


Progress = Callable[[int, int], None]


def score_confidence_file(path: str | Path, options: ConfidenceOptions,
                          progress: Progress | None = None) -> dict:
    """``confeval score`` on one record file (or another tool's file, :mod:`confeval.ingest`):
    :func:`~confeval.evaluate.score_confidence_records` with the options."""
    from ..evaluate import score_confidence_records

    rs, confidence_col, correct_col = read_confidence_input(path, options)
    return score_confidence_records(
        rs, confidence_col, correct_col, any_confidence=options.any_confidence,
        n_bins=options.n_bins, rce_bins=options.rce_bins, n_resamples=options.bootstrap,
        seed=options.seed, progress=progress)


def read_confidence_input(path: str | Path, options: ConfidenceOptions
                          ) -> tuple[RecordSet, str, str]:
    """(records, confidence column, correctness column) of one input: another tool's file in
    the ``score`` layout (its ``confidence`` and ``correct`` unless columns are given), or
    confeval's own records, which need both columns named."""
    from ..ingest import read_records
    from ..records import RecordSet

    rs = read_records(path, "score", options.from_format, options.normalise,
                      data=options.data_file)
    if rs is not None:
        columns = (options.confidence_col or "confidence", options.correct_col or "correct")
        _check_ingested_columns(path, rs, columns)
        return rs, *columns
    if options.confidence_col is None or options.correct_col is None:
        raise ValueError(f"{path}: name the columns with -c/--confidence-col and "
                         "-y/--correct-col (a file of a known format needs none: --from)")
    return RecordSet.read(Path(path)), options.confidence_col, options.correct_col


def _check_ingested_columns(path: str | Path, rs: RecordSet, columns: tuple[str, str]) -> None:
    """Another tool's file without the confidence or correctness ``score`` needs (lm-eval
    logs no confidence for a generation task): name the flag and the numeric columns."""
    import pandas as pd

    from ..records import ROW_COLUMN

    if len(rs.frame) and not rs.mask.any():
        reasons = ", ".join(f"{k} {v}" for k, v in rs.excluded.items())
        raise ValueError(f"{path}: no usable record: all {rs.n_read} were excluded ({reasons})")
    confidence, correct = columns
    missing = [(flag, col) for flag, col in (("-c/--confidence-col", confidence),
                                             ("-y/--correct-col", correct))
               if col not in rs.frame.columns]
    if not missing:
        return
    numeric = [c for c in rs.frame.columns if c != ROW_COLUMN
               and pd.api.types.is_numeric_dtype(rs.frame[c]) and rs.frame[c].notna().any()]
    flag, col = missing[0]
    raise ValueError(f"{path}: its records have no {col!r} column: name the column holding "
                     f"one with {flag} (numeric columns: {', '.join(numeric) or 'none'})")


@dataclasses.dataclass
class JudgeScores:
    """A judge's usable scores read as ``confeval agreement`` reads them: the records (off-
    scale rows excluded), the judge's and the reference scores and the judge's probability of
    each rating (renormalised over the scale; None without probability columns) of the usable
    rows, and the scale."""

    records: RecordSet
    pred: np.ndarray
    truth: np.ndarray
    probs: np.ndarray | None
    scale: np.ndarray


def read_judge_scores(path: str | Path, options: AgreementOptions, *,
                      with_truth: bool = True) -> JudgeScores:
    """The judge's and the reference scores of one input, off-scale scores excluded and counted
    (``pred_score_off_scale``, ``gt_score_off_scale``), the score-token probabilities
    renormalised over the scale (they rarely sum to 1: mass on other tokens, as the
    judge-interval literature does). Fewer than two usable rows is a :class:`ValueError`.
    ``with_truth=False`` reads new items a policy decides on: no reference column, ``truth``
    all NaN, any number of rows."""
    from ..ingest import rating_levels, read_records
    from ..records import RecordSet

    rs = read_records(path, "intervals", options.from_format, data=options.data_file,
                      levels=rating_levels(options))
    if rs is not None:   # a judge's responses: the columns the ingest layout writes
        options = dataclasses.replace(
            options, pred_col=options.pred_col or "parsed_score",
            gt_col=options.gt_col or "gt_score",
            logprob_cols=options.logprob_cols or (None if options.prob_cols else "s2_lp*"))
    elif options.pred_col is None or (with_truth and options.gt_col is None):
        raise ValueError(f"{path}: name the columns with -p/--pred-col and -g/--gt-col (a "
                         "judge's OpenAI-compatible responses need none: --data)")
    else:
        rs = RecordSet.read(Path(path))
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
        raise ValueError(f"{path}: {probs.shape[1]} probability columns for a "
                         f"{scale.size}-point scale ({options.min_score}-{top})")
    rs.exclude(~np.isin(pred, scale) & rs.mask, "pred_score_off_scale")
    if with_truth:
        rs.exclude(~np.isin(truth, scale) & rs.mask, "gt_score_off_scale")
    keep = rs.mask
    if with_truth and keep.sum() < 2:
        raise ValueError(f"{path}: fewer than two usable rows (excluded: "
                         f"{rs.excluded or 'none'})")
    if probs is not None:
        probs = probs[keep] / probs[keep].sum(axis=1, keepdims=True)
    return JudgeScores(rs, pred[keep], truth[keep], probs, scale)


def score_agreement_file(path: str | Path, options: AgreementOptions,
                         progress: Progress | None = None) -> dict:
    """``confeval agreement`` on one record file: :func:`read_judge_scores`, then
    :func:`~confeval.evaluate.evaluate_agreement`."""
    from ..evaluate import evaluate_agreement

    judge = read_judge_scores(path, options)
    res = evaluate_agreement(judge.pred, judge.truth, judge.probs, levels=judge.scale,
                             n_resamples=options.bootstrap, seed=options.seed)
    return {**judge.records.summary(), **res}


def _read_confidence(rs: RecordSet, options: ConfidenceOptions) -> dict[str, np.ndarray]:
    from ..evaluate import read_confidence_records

    conf, correct = read_confidence_records(rs, options.confidence_col or "confidence",
                                            options.correct_col or "correct",
                                            any_confidence=options.any_confidence)
    return {"confidence": conf, "correct": correct}


def _confidence_metrics(aligned: dict[str, dict[str, np.ndarray]],
                        options: ConfidenceOptions) -> dict:
    from ..evaluate import confidence_metrics

    return confidence_metrics({name: (a["confidence"], a["correct"])
                               for name, a in aligned.items()}, n_bins=options.n_bins,
                              probability_scale=not options.any_confidence)


SCORE_COMPARISON = Comparison(_read_confidence, _confidence_metrics)
"""``confeval compare --suite score``: accuracy (exact McNemar), AUROC (DeLong), AUARC, ECE,
Brier (paired bootstrap) of each model's confidence column."""
