"""``confeval score`` and ``confeval agreement``: a confidence against correctness, a judge's
scores against reference scores; ``confeval compare``: several models' confidences on the same
items, ranked, with paired tests."""

from __future__ import annotations

from typing import Annotated

import typer

from ._common import Files, JsonOpt, out, print_json
from ._options import Given, with_options
from ._suite_commands import add_scoring_command

__all__ = ["register"]

NameOpt = Annotated[list[str] | None, typer.Option(
    "--name", metavar="NAME=INPUT",
    help="The model name of an input (default: its file name without extensions); repeat "
         "for several.")]


def compare(given: Given, files: Files, name: NameOpt = None, as_json: JsonOpt = False
            ) -> None:
    """Compare models (judges, measures) on the same items: every metric per model with its
    interval and rank interval, every pair's difference and p-value (exact McNemar for
    accuracy, DeLong for AUROC on shared labels, a paired bootstrap otherwise), Holm-adjusted,
    and group letters (models no adjusted test separates share a letter). One input per
    model; items are aligned by --id-col."""
    from ..report.terminal import compare_tables
    from ..suites.generic import CompareOptions, compare_files, model_names
    from ..suites.options import build

    options = build(CompareOptions, given.values, what="confeval compare")
    document = {"compare": compare_files(model_names(list(files), name), options)}
    if as_json:
        print_json(document)
        return
    for table in compare_tables(document):
        out.print(table)


def register(app: typer.Typer) -> None:
    """Add ``score`` and ``agreement`` to the top-level command."""
    add_scoring_command(app, "score", "score", (
        "Score a confidence column against correctness: ECE, MCE, Brier, AUROC, AUARC, PRR, "
        "RCE."), bootstrap_progress=True)
    add_scoring_command(app, "agreement", "agreement", (
        "Agreement of a judge's scores with reference scores (correlations, accuracy, "
        "bias)."))
    from ..suites.generic import CompareOptions

    app.command("compare")(with_options(CompareOptions, "score")(compare))
