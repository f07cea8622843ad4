"""``confeval judge reruns``, ``judge position`` and ``judge length``: a judge's variability
across reruns and its position and length biases, from files or (reruns, position) live on a
model. Parses, calls :mod:`confeval.verbs.judge_tests` / :mod:`confeval.verbs.judge_live` and
prints; registered on the ``judge`` group by :mod:`confeval.cli.judge`."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.text import Text

from ..runs import RunFolder, check_output_folder
from ..suites.options import RunFlags
from ..verbs.judge_tests import JudgeLengthOptions, JudgePositionOptions, JudgeRerunsOptions
from ._common import (
    ForceOpt,
    JsonOpt,
    OutOpt,
    UserError,
    err,
    out,
    print_json,
    print_table,
    progress,
    write_run,
)
from ._options import Given, with_options

__all__ = ["length", "position", "reruns"]

Inputs = Annotated[list[Path] | None, typer.Argument(
    metavar="[FILE...]", help="Record files (.csv, .jsonl, .parquet, ...). None: ask a model "
                              "live (--out needed).", show_default=False)]
OneFile = Annotated[Path | None, typer.Argument(
    metavar="[FILE]", help="A pairwise file: the verdicts of both orders. None: ask a model "
                           "live (--out needed).", show_default=False)]
LengthFile = Annotated[Path, typer.Argument(metavar="FILE", help="Records: the judge's score, "
                                            "the human score and the answer's length.",
                                            show_default=False)]

_RUN_FLAGS = {f.name for f in dataclasses.fields(RunFlags)}
_KEY = {"judge reruns": "reruns", "judge position": "position", "judge length": "length"}


def _split(given: Given) -> tuple[RunFlags, dict[str, Any], set[str]]:
    from ..suites.options import build

    flags = build(RunFlags, {k: v for k, v in given.values.items() if k in _RUN_FLAGS},
                  what="the run")
    values = {k: v for k, v in given.values.items() if k not in _RUN_FLAGS}
    return flags, values, {k for k in given.explicit if k in _RUN_FLAGS}


def _from_files(command: str, paths: list[Path], options: Any, as_json: bool,
                out_dir: Path | None, force: bool) -> dict:
    from ..verbs.judge_tests import (
        input_name,
        judge_section,
        judge_tests_run_config,
        score_judge_test,
    )

    check_output_folder(out_dir, command, force=force)
    result = score_judge_test(command, paths, options)
    name = input_name(paths)
    if out_dir is not None:
        write_run(out_dir, judge_tests_run_config(command, paths, options),
                  judge_section(command, {name: result}), force=force)
    _say(command, {name: result}, as_json)
    return result


def _live(command: str, values: dict, flags: RunFlags, as_json: bool,
          out_dir: Path | None) -> None:
    from ..verbs.judge_live import run_judge_live

    if out_dir is None:
        raise UserError(f"confeval {command} live: --out RUN_DIR (the records are written, "
                        "and resumed from, there)")
    result = run_judge_live(command, values, out_dir, backend=flags.backend, data=flags.data,
                            n=flags.n, model=flags.model, cache=flags.response_cache(),
                            progress_factory=progress)
    section = result.metrics["sections"][0]
    for note in result.metrics.get("warnings") or []:
        err.print(f"warning: {note}")
    if section["results"]:
        _say(command, section["results"], as_json)
    elif as_json:
        print_json({_KEY[command]: None, "warnings": result.metrics.get("warnings") or []})
    if not as_json:
        out.print(f"{result.n_items} requests: {result.n_new} new, {result.n_resumed} resumed,"
                  f" {len(result.failures)} failed; {result.model_calls} model call(s). "
                  f"Report: {Path(out_dir) / RunFolder.REPORT}")
    if result.failures:
        raise UserError(f"{len(result.failures)} request(s) failed; run the same command "
                        "again to retry them")


def _say(command: str, results: dict, as_json: bool) -> None:
    from ..report.sections.judge_tests import (
        confidence_table,
        reruns_notes,
        unstable_items_table,
    )
    from ..verbs.judge_tests import KINDS

    if as_json:
        print_json({_KEY[command]: next(iter(results.values()))})
        return
    print_table(KINDS[command][0], results)
    for res in results.values():
        if command == "judge reruns":
            for note in reruns_notes(res):   # why an estimate has no interval
                out.print(Text(note, style="dim"), soft_wrap=False)
            for table in (unstable_items_table(res), confidence_table(res)):
                if table is not None:
                    out.print(table)
        for warning in res.get("warnings") or []:
            err.print(f"warning: {res['source']}: {warning}")
        if res.get("excluded"):
            detail = ", ".join(f"{k} {v:,}" for k, v in res["excluded"].items())
            out.print(f"excluded {sum(res['excluded'].values()):,} of {res['n_read']:,} rows: "
                      f"{detail}")


def reruns(given: Given, files: Inputs = None, as_json: JsonOpt = False,
           out_dir: OutOpt = None, force: ForceOpt = False) -> None:
    """How much a judge's score changes when it is asked again. From files: the reruns as
    columns (--score-cols), as rows (--rerun-col with --id-col and --score-col; an Inspect
    log's epochs as a table), or one file per rerun (--score-col, --id-col). Live: --repeats K
    asks the judge (--model, default the embedded model) K times per item of --data at
    --temperature, each repeat cached and resumed on its own (--out needed). Prints per-item
    and overall flip rates with exact and bootstrap intervals, Krippendorff's alpha across
    reruns and, with --human-col, rerun agreement scored as a confidence (ECE, AUROC, AUARC)
    beside the score-token probability (--logprob-cols). --json prints {"reruns": {...}}."""
    from ..suites.options import build

    flags, values, asked = _split(given)
    command = "judge reruns"
    if files:
        live = asked | ({"repeats"} & set(given.explicit))
        if live:
            raise UserError(f"{', '.join('--' + k.replace('_', '-') for k in sorted(live))}: "
                            "these ask a model; with files the reruns are in the files")
        _from_files(command, list(files), build(JudgeRerunsOptions, values,
                                                what=f"confeval {command}"),
                    as_json, out_dir, force)
        return
    if values.get("repeats") is None:
        raise UserError("give the reruns' files, or --repeats K to ask a model K times per "
                        "item (see `confeval judge reruns --help`)")
    _live(command, values, flags, as_json, out_dir)


def position(given: Given, file: OneFile = None, as_json: JsonOpt = False,
             out_dir: OutOpt = None, force: ForceOpt = False) -> None:
    """Does the judge prefer the answer shown first? FILE has, per pair, the verdict with
    answer A shown first (--ab-col, default verdict_ab) and with B first (--ba-col): a, b or
    tie, naming the answer. Prints the share of verdicts that changed with the order, the
    first slot's share with an exact binomial test and interval, the sign test of the changed
    picks and, with --conf-ab-col/--conf-ba-col, whether the judge is surer of the same pick
    in the first slot (Wilcoxon signed-rank, exact up to 50 pairs). With the answers' texts
    (--a-col, --b-col) also how often it picks the longer one. Without FILE, asks a model
    (--model; --data builtin:arith-pairwise by default) in both orders (--out needed).
    --json prints {"position": {...}}."""
    from ..suites.options import build

    flags, values, asked = _split(given)
    command = "judge position"
    if file is not None:
        if asked:
            raise UserError(f"{', '.join('--' + k.replace('_', '-') for k in sorted(asked))}: "
                            "these ask a model; with a file the verdicts are in it")
        _from_files(command, [file], build(JudgePositionOptions, values,
                                           what=f"confeval {command}"),
                    as_json, out_dir, force)
        return
    _live(command, values, flags, as_json, out_dir)


def length(given: Given, file: LengthFile, as_json: JsonOpt = False,
           out_dir: OutOpt = None, force: ForceOpt = False) -> None:
    """Does the judge score longer answers higher than the humans do? The slope of the
    judge's score on answer length (--answer-col: a text, counted in --length-unit; or
    --length-col: a number) at a fixed human score, the humans' own slope and the judge's
    excess over it, and with --confidence-col the slope of its confidence: each per --per
    units, with a seeded 95% bootstrap interval. --json prints {"length": {...}}."""
    from ..suites.options import build

    _from_files("judge length", [file], build(JudgeLengthOptions, given.values,
                                              what="confeval judge length"),
                as_json, out_dir, force)


_LIVE_SKIP = RunFlags.IMAGE_FLAGS


def register(app: typer.Typer) -> None:
    """Add the three commands to the ``judge`` group."""
    app.command("reruns")(with_options(JudgeRerunsOptions, "run", also=(RunFlags,),
                                       skip=_LIVE_SKIP)(reruns))
    app.command("position")(with_options(JudgePositionOptions, "run", also=(RunFlags,),
                                         skip=_LIVE_SKIP)(position))
    app.command("length")(with_options(JudgeLengthOptions, "score")(length))
