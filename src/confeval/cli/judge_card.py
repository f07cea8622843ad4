"""``confeval judge card``: what a judge can be trusted for, on one page — one judge, or
several side by side. Parses, calls :mod:`confeval.verbs.judge_card` and prints; registered
on the ``judge`` group by :mod:`confeval.cli.judge`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from ..runs import check_output_folder
from ..verbs.judge_card import COMMAND, JudgeCardOptions
from ._common import ForceOpt, JsonOpt, OutOpt, out, print_json, write_run
from ._options import Given, with_options

__all__ = ["card", "register"]

CardFiles = Annotated[list[Path], typer.Argument(
    metavar="FILE...", help="One file per judge (.csv, .jsonl, .parquet, ...): its score, the "
                            "human score (empty where no human scored the item) and, for the "
                            "intervals and accept/abstain, its score log-probabilities.",
    show_default=False)]
NameOpt = Annotated[list[str] | None, typer.Option(
    "--name", metavar="NAME=FILE", help="The judge's name on its card (default: the file "
                                        "name); repeat for several.")]


def card(given: Given, files: CardFiles, name: NameOpt = None, as_json: JsonOpt = False,
         out_dir: OutOpt = None, force: ForceOpt = False) -> None:
    """What this judge can be trusted for, each with a one-line verdict and the number behind
    it: ranking (Spearman and Kendall tau-b with the humans, 95% bootstrap intervals), per-item
    scores (a conformal interval method's coverage and width from the intervals suite),
    accept/abstain (the certified threshold of `guarantee --suite agreement` and its answer
    rate), the mean (PPI++ from `judge mean`; --labels N: N labels drawn of a fully labelled
    file), and, given their files, rerun stability (--reruns), position bias (--pairs) and
    length bias (--answer-col or --length-col) — else "not measured", said plainly. Several
    FILEs: the cards side by side, one column per judge. --json prints {"cards": {NAME:
    {"aspects": {...}, "verdicts": {...}, ...}}}; --out writes run.json, metrics.json and
    report.html (`confeval rerun` repeats it)."""
    from ..report.sections.judge_card import card_verdict_lines, judge_card_table
    from ..suites.options import build
    from ..verbs.compare import model_names
    from ..verbs.judge_card import judge_card_run_config, judge_card_section, judge_cards

    check_output_folder(out_dir, COMMAND, force=force)
    options = build(JudgeCardOptions, given.values, what=f"confeval {COMMAND}")
    inputs = [(n, p) for n, p in model_names(list(files), name)]
    cards = judge_cards(inputs, options)
    if out_dir is not None:
        write_run(out_dir, judge_card_run_config(inputs, options), judge_card_section(cards),
                  force=force)
    if as_json:
        print_json({"cards": cards})
        return
    out.print(judge_card_table(cards))
    for line in card_verdict_lines(cards):
        out.print(Text(line), soft_wrap=False)


def register(app: typer.Typer) -> None:
    """Add ``card`` to the ``judge`` group."""
    app.command("card")(with_options(JudgeCardOptions, "score")(card))
