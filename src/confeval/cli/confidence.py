"""``confeval score`` and ``confeval agreement``: a confidence against correctness, a judge's
scores against reference scores."""

from __future__ import annotations

import typer

from ._suite_commands import add_scoring_command

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    """Add ``score`` and ``agreement`` to the top-level command."""
    add_scoring_command(app, "score", "score", (
        "Score a confidence column against correctness: ECE, MCE, Brier, AUROC, AUARC, PRR, "
        "RCE."), bootstrap_progress=True)
    add_scoring_command(app, "agreement", "agreement", (
        "Agreement of a judge's scores with reference scores (correlations, accuracy, "
        "bias)."))
