"""``confeval score`` and ``confeval agreement``: a confidence against correctness, a judge's
scores against reference scores."""

from __future__ import annotations

from typing import Annotated

import numpy as np
import typer

from ..evaluate import evaluate_agreement, score_confidence_records
from ._common import (
    TABLES,
    BootOpt,
    Files,
    ForceOpt,
    JsonOpt,
    OutOpt,
    SeedOpt,
    UserError,
    check_out,
    emit,
    metric_table,
    progress,
    read,
    write_run,
)

__all__ = ["agreement", "score"]


_CONF_COLUMNS = [("n_used", "n"), ("accuracy", "acc"), ("ece", "ECE"), ("mce", "MCE"),
                 ("brier", "Brier"), ("auroc", "AUROC"), ("auarc", "AUARC"),
                 ("prr", "PRR"), ("rce", "RCE")]


def score(
    files: Files,
    confidence_col: Annotated[str, typer.Option("--confidence-col", "-c",
                                                help="Column with the confidence.")],
    correct_col: Annotated[str, typer.Option("--correct-col", "-y",
                                             help="Column with correctness (0/1 or [0, 1]).")],
    any_confidence: Annotated[bool, typer.Option(
        "--any-confidence", help="The confidence is any real-valued measure, not a "
                                 "probability: skip ECE/MCE/Brier, keep ranking metrics.")] = False,
    n_bins: Annotated[int, typer.Option("--n-bins", min=1, help="ECE bins (equal width).")] = 15,
    rce_bins: Annotated[int, typer.Option("--rce-bins", min=1,
                                          help="Rank-calibration bins (equal mass).")] = 20,
    bootstrap: BootOpt = 1000,
    seed: SeedOpt = 0,
    as_json: JsonOpt = False,
    out_dir: OutOpt = None,
    force: ForceOpt = False,
) -> None:
    """Score a confidence column against correctness: ECE, MCE, Brier, AUROC, AUARC, PRR, RCE."""
    check_out(out_dir, "score", force)
    results = {}
    with progress(len(files), "scoring", enabled=len(files) > 1 or bootstrap > 0) as step:
        for path in files:
            res = score_confidence_records(
                read(path), confidence_col, correct_col, any_confidence=any_confidence,
                n_bins=n_bins, rce_bins=rce_bins, n_resamples=bootstrap, seed=seed,
                progress=lambda done, total, name=path.name: step.note(
                    f"{name}: bootstrap {done}/{total}"))
            results[str(path)] = res
            step(f"scored {path.name}")
    emit(results, as_json, lambda r: metric_table(r, _CONF_COLUMNS, "Confidence vs correctness"))
    write_run(out_dir, {"command": "score", "files": [str(f) for f in files],
                         "confidence_col": confidence_col, "correct_col": correct_col,
                         "n_bins": n_bins, "rce_bins": rce_bins, "bootstrap": bootstrap,
                         "seed": seed},
               {"kind": "confidence", "title": "Confidence vs correctness",
                "name_header": "file", "results": results})


_AGREE_COLUMNS = [("n_used", "n"), ("pearson", "Pearson"), ("spearman", "Spearman"),
                  ("kendall", "Kendall"), ("accuracy", "exact"), ("within1", "±1"),
                  ("mae", "MAE"), ("bias", "bias"), ("top_prob_ece", "top-p ECE")]


def agreement(
    files: Files,
    pred_col: Annotated[str, typer.Option("--pred-col", help="Column with the judge's score.")],
    gt_col: Annotated[str, typer.Option("--gt-col", help="Column with the reference score.")],
    logprob_cols: Annotated[str | None, typer.Option(
        "--logprob-cols", help="Score-token log-probability columns, lowest score first "
                               "(comma list or glob, e.g. 's2_lp*').")] = None,
    prob_cols: Annotated[str | None, typer.Option(
        "--prob-cols", help="Score probability columns instead of log-probabilities.")] = None,
    min_score: Annotated[int, typer.Option("--min-score",
                                           help="Lowest score of the scale (and of the first "
                                                "probability column).")] = 1,
    max_score: Annotated[int | None, typer.Option(
        "--max-score", help="Highest score of the scale (default: one per probability column, "
                            "else 5). Scores off the scale (a -1 'unparseable' marker, 7.5 on "
                            "1-5) are excluded and counted.")] = None,
    bootstrap: BootOpt = 1000,
    seed: SeedOpt = 0,
    as_json: JsonOpt = False,
    out_dir: OutOpt = None,
    force: ForceOpt = False,
) -> None:
    """Agreement of a judge's scores with reference scores (correlations, accuracy, bias)."""
    check_out(out_dir, "agreement", force)
    if logprob_cols and prob_cols:
        raise UserError("give --logprob-cols or --prob-cols, not both")
    results = {}
    with progress(len(files), "scoring", enabled=len(files) > 1 or bootstrap > 0) as step:
        for path in files:
            rs = read(path)
            pred = rs.numeric([pred_col], what="pred_score")[:, 0]
            truth = rs.numeric([gt_col], what="gt_score")[:, 0]
            probs = None
            if logprob_cols:
                probs = np.exp(rs.numeric(logprob_cols, what="logprob", hi=0.0))
            elif prob_cols:
                probs = rs.numeric(prob_cols, what="prob", lo=0.0, hi=1.0)
            top = max_score if max_score is not None else (
                min_score + probs.shape[1] - 1 if probs is not None else 5)
            if top < min_score:
                raise UserError(f"--max-score {top} is below --min-score {min_score}")
            scale = np.arange(min_score, top + 1, dtype=np.float64)
            if probs is not None and probs.shape[1] != scale.size:
                raise UserError(f"{path}: {probs.shape[1]} probability columns for a "
                                f"{scale.size}-point scale ({min_score}-{top})")
            rs.exclude(~np.isin(pred, scale) & rs.mask, "pred_score_off_scale")
            rs.exclude(~np.isin(truth, scale) & rs.mask, "gt_score_off_scale")
            keep = rs.mask
            if keep.sum() < 2:
                raise UserError(f"{path}: fewer than two usable rows "
                                f"(excluded: {rs.excluded or 'none'})")
            if probs is not None:
                # Score-token probabilities rarely sum to 1 (mass on other tokens):
                # renormalise over the scale, as the judge-interval literature does.
                probs = probs[keep] / probs[keep].sum(axis=1, keepdims=True)
            res = evaluate_agreement(pred[keep], truth[keep], probs, levels=scale,
                                     n_resamples=bootstrap, seed=seed)
            results[str(path)] = {**rs.summary(), **res}
            step(f"scored {path.name}")
    emit(results, as_json, lambda r: metric_table(r, _AGREE_COLUMNS, "Judge vs reference scores"))
    write_run(out_dir, {"command": "agreement", "files": [str(f) for f in files],
                         "pred_col": pred_col, "gt_col": gt_col, "bootstrap": bootstrap,
                         "seed": seed},
               {"kind": "agreement", "title": "Judge vs reference scores", "results": results})




TABLES["confidence"] = lambda results: metric_table(
    results, [("n", "n"), *_CONF_COLUMNS[1:]], "Confidence vs correctness")
TABLES["agreement"] = lambda results: metric_table(
    results, [("n", "n"), *_AGREE_COLUMNS[1:]], "Judge vs reference scores")
