"""``confeval measures``: which confidence measure ranks the gold option first (MCQA-Eval)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..suites.measures.options import CompareOptions
from ._common import (
    ForceOpt,
    JsonOpt,
    OutOpt,
    group,
    score_inputs,
)
from ._options import Given, with_options
from ._suite_commands import add_run_command, add_score_command, add_scoring_command

__all__ = ["app"]

app = group("Which confidence measure of an LLM can be trusted (MCQA-Eval).")


add_score_command(app, "measures", (
    "Score confidence measures of (question, option) rows — a file, or a `measures run` "
    "folder with its own options unless overridden: AUROC, AUARC, RCE, ECE after "
    "histogram binning, question-bootstrap intervals and a ranking."))


add_run_command(app, "measures", (
    "MCQA-Eval live: inject every option as the model's answer, compute every measure, "
    "score how well each ranks the gold option first (records.jsonl, options.jsonl with "
    "one line per (question, option), metrics.json, report.html; resumable)."))


add_scoring_command(app, "thresholds", "measures thresholds", (
    "Threshold sensitivity: the ranking of the measures (by AUROC) at each correctness "
    "threshold, and Kendall's tau between the rankings of every pair of thresholds."))


add_scoring_command(app, "noise", "measures noise", (
    "Label noise (MCQA-Eval Eq. 7): Kendall's tau between the clean ranking of the measures "
    "and the ranking under logit-normal noise on the correctness score, per sigma."))


@app.command("compare")
@with_options(CompareOptions, "score")
def compare(
    given: Given,
    options_file: Annotated[Path, typer.Argument(help="MCQA-Eval rows: (question, option) "
                                                      "with --correct-col.")],
    samples_file: Annotated[Path, typer.Argument(help="Sampled answers with --score-col.")],
    as_json: JsonOpt = False,
    out_dir: OutOpt = None,
    force: ForceOpt = False,
) -> None:
    """MCQA-Eval against threshold-based evaluation on the same items: both rankings of the
    measures and Kendall's tau between them."""
    score_inputs("measures compare", [[options_file, samples_file]], given, as_json=as_json,
                 out_dir=out_dir, force=force)
