"""``confeval sets``: conformal prediction sets for multiple-choice answers."""

from __future__ import annotations

from ._common import group
from ._suite_commands import add_run_command, add_score_command

__all__ = ["app"]

app = group("Conformal prediction sets for multiple-choice answers.")


add_score_command(app, "sets", (
    "Prediction sets with a coverage guarantee from option logits/log-probs/probabilities "
    "(a run folder of `confeval sets run` is scored with its own options unless "
    "overridden)."))


add_run_command(app, "sets", (
    "Ask a model multiple-choice questions live and score its option distribution "
    "(prompts -> model -> records.jsonl -> metrics.json + report.html; resumable)."))


