"""``confeval intervals``: conformal intervals and rating sets for judge scores."""

from __future__ import annotations

from ._common import group
from ._suite_commands import add_run_command, add_score_command

__all__ = ["app"]

app = group("Conformal intervals and label sets for judge scores.")


add_score_command(app, "intervals", (
    "Conformal intervals (the VLM-judge paper's nine methods) and rating sets for judge "
    "scores, with coverage, width and diagnostics over seeds (a run folder of `confeval "
    "intervals run` is scored with its own options unless overridden)."))


add_run_command(app, "intervals", (
    "Ask a judge to grade answers 1-5 live and score conformal intervals on its rating "
    "distribution (resumable, cached)."))


