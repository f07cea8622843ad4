"""``confeval judge``: what a judge's scores say about the human scores they stand in for.
``judge mean``: the mean human score of all items, corrected for the judge's error by a few
human labels (classical, PPI, PPI++). Parses, calls :mod:`confeval.verbs.judge` and prints."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..runs import check_output_folder
from ..verbs.judge import COMMAND, JudgeMeanOptions
from . import judge_card, judge_tests
from ._common import ForceOpt, JsonOpt, OutOpt, err, group, out, print_json, write_run
from ._options import Given, with_options

__all__ = ["app", "mean"]

app = group("Can this judge be trusted? `confeval judge mean FILE`: the mean human score of "
            "all items, corrected for the judge's error (PPI, PPI++); `judge reruns`: how much "
            "its scores change when asked again; `judge position`, `judge length`: whether "
            "it prefers the first answer shown, or the longer one; `judge card`: all of it "
            "on one page, what the judge can be trusted for.")

FileArg = Annotated[Path, typer.Argument(
    metavar="FILE", help="Records (.csv, .csv.gz, .tsv, .jsonl, .jsonl.gz, .parquet): a judge "
                         "column and a human column, the human cell empty where no human "
                         "scored the item.", show_default=False)]


def mean(given: Given, file: FileArg, as_json: JsonOpt = False, out_dir: OutOpt = None,
         force: ForceOpt = False) -> None:
    """The mean human score of every item in FILE: the classical estimate (the labelled
    humans' mean), PPI (the judge's mean corrected by its mean error on the labelled items)
    and PPI++ (the judge weighted to the smallest variance), each with a two-sided 1 - alpha
    interval (Angelopoulos et al. 2023; ppi_py's definitions). Rows with an empty human score
    are the unlabelled items; rows without a judge score, or with a score off the scale, are
    excluded and counted. --group-col: the same per group; --target-width: how many human
    labels that width needs. --json prints {"mean": {..., "methods": {"classical", "ppi",
    "ppi++": {"estimate", "low", "high", ...}}}}; --out writes run.json, metrics.json and
    report.html."""
    from ..report.sections.judge_mean import groups_table, judge_mean_table
    from ..suites.options import build
    from ..verbs.judge import judge_mean_file, judge_mean_run_config, judge_mean_section

    check_output_folder(out_dir, COMMAND, force=force)
    options = build(JudgeMeanOptions, given.values, what=f"confeval {COMMAND}")
    result = judge_mean_file(file, options)
    if out_dir is not None:
        write_run(out_dir, judge_mean_run_config(file, options),
                  judge_mean_section({str(file): result}), force=force)
    for warning in result["warnings"]:
        err.print(f"warning: {file}: {warning}")
    if as_json:
        print_json({"mean": result})
        return
    out.print(judge_mean_table({str(file): result}))
    out.print(f"{result['n_labelled']:,} labelled, {result['n_unlabelled']:,} unlabelled; "
              f"the judge's own mean {result['judge_mean']:.3f}")
    if result.get("excluded"):
        detail = ", ".join(f"{k} {v:,}" for k, v in result["excluded"].items())
        out.print(f"excluded {sum(result['excluded'].values()):,} of {result['n_read']:,} "
                  f"rows: {detail}")
    kept = result.get("kept_labels")
    if kept:
        covered = ", ".join(f"{m} {'yes' if c else 'no' if c is False else '-'}"
                            for m, c in kept["covered"].items())
        out.print(f"{kept['kept']:,} human scores kept (seed {kept['seed']}), "
                  f"{kept['hidden']:,} hidden; the mean of all of them, "
                  f"{kept['human_mean_all_labelled']:.3f}, is covered by: {covered}")
    plan = result.get("labels_needed")
    if plan:
        ppi = f"{plan['ppi++']:,}" if plan["ppi++"] is not None else \
            f"more than the {plan['n_items']:,} items allow"
        beyond = "" if plan["classical_reachable"] else \
            f" (more than the {plan['n_items']:,} items)"
        out.print(f"labels for a width of {plan['target_width']:g}: classical "
                  f"{plan['classical']:,}{beyond}, PPI++ {ppi}")
    if result.get("groups"):
        out.print(groups_table(result))


app.command("mean")(with_options(JudgeMeanOptions, "score")(mean))
judge_tests.register(app)
judge_card.register(app)
