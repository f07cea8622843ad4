"""``confeval measures``: which confidence measure ranks the gold option first (MCQA-Eval)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..suites.base import ScoringCommand
from ..suites.measures import STUDIES
from ..suites.measures.options import CompareOptions
from ._common import ForceOpt, JsonOpt, OutOpt, score_and_print
from ._options import Given, with_options
from ._suite_commands import add_scoring_command

__all__ = ["compare", "register"]


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
    score_and_print(_studies()["measures compare"], [[options_file, samples_file]], given,
                    as_json=as_json, out_dir=out_dir, force=force)


def _studies() -> dict[str, ScoringCommand]:
    return {command.command: command for command in STUDIES}


def register(app: typer.Typer) -> None:
    """Add the studies of threshold-based evaluation to ``confeval measures``:
    ``thresholds``, ``noise`` and ``compare``."""
    studies = _studies()
    add_scoring_command(app, "thresholds", studies["measures thresholds"], (
        "Threshold sensitivity: the ranking of the measures (by AUROC) at each correctness "
        "threshold, and Kendall's tau between the rankings of every pair of thresholds."))
    add_scoring_command(app, "noise", studies["measures noise"], (
        "Label noise (MCQA-Eval, equation 7): Kendall's tau between the clean ranking of the "
        "measures and the ranking under logit-normal noise on the correctness score, per "
        "sigma."))
    app.command("compare")(with_options(CompareOptions, "score")(compare))
