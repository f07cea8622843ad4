"""``confeval score`` and ``confeval agreement``: a confidence against correctness, a judge's
scores against reference scores; ``confeval compare``: several models' confidences on the same
items, ranked, with paired tests."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Annotated

import typer

from ._common import (
    Files,
    ForceOpt,
    JsonOpt,
    OutOpt,
    UserError,
    check_out,
    err,
    out,
    print_json,
    reasons_text,
    write_run,
)
from ._options import Given, with_options
from ._suite_commands import add_scoring_command

__all__ = ["GUARANTEE_APPLY", "register"]

GUARANTEE_APPLY = "guarantee-apply"
"""``confeval guarantee apply`` is this command: ``guarantee`` takes input files itself, so
``apply`` cannot be its subcommand; :func:`confeval.cli.app.main` routes the two words here."""

NameOpt = Annotated[list[str] | None, typer.Option(
    "--name", metavar="NAME=INPUT",
    help="The model name of an input (default: its file name without extensions); repeat "
         "for several.")]


FormatOpt = Annotated[str, typer.Option(
    "--format", help="table (terminal tables), markdown, latex or csv: the table as papers "
                     "print it (models by metrics, group letters).")]


def compare(given: Given, files: Files, name: NameOpt = None, as_json: JsonOpt = False,
            table_format: FormatOpt = "table", out_dir: OutOpt = None,
            force: ForceOpt = False) -> None:
    """Compare models (judges, measures) scored by one suite on the same items: every metric
    per model with its interval and rank interval, every pair's difference and p-value (exact
    McNemar for 0/1 outcomes such as accuracy and coverage, DeLong for AUROC on shared labels,
    a paired bootstrap over items otherwise), Holm-adjusted, and group letters (models no
    adjusted test separates share a letter). One input per model; items are aligned by
    --id-col. The suite's own scoring options (in [brackets]: the suites that have them) are
    given as to its score command. --out writes run.json, metrics.json, report.html (forest
    plots, p-value heatmaps) and compare.csv."""
    from ..report import paper
    from ..report.terminal import compare_tables
    from ..suites.compare import CompareOptions, compare_files, compare_run_config, model_names
    from ..suites.options import build

    if table_format not in paper.FORMATS:
        raise UserError(f"--format {table_format!r}: choose from {', '.join(paper.FORMATS)}")
    check_out(out_dir, "compare", force)
    own = {f.name for f in dataclasses.fields(CompareOptions)}
    options = build(CompareOptions, {k: v for k, v in given.values.items() if k in own},
                    what="confeval compare")
    suite_values = {k: v for k, v in given.on_command_line().items() if k not in own}
    inputs = model_names(list(files), name)
    document = {"compare": compare_files(inputs, options, suite_values)}
    if as_json:
        print_json(document)
    elif table_format == "table":
        for table in compare_tables(document):
            out.print(table)
    else:
        writer = {"markdown": paper.to_markdown, "latex": paper.to_latex, "csv": paper.to_csv}
        out.print(writer[table_format](document), end="", markup=False)
    if out_dir is not None:
        write_run(out_dir, compare_run_config(inputs, document["compare"]),
                  {"kind": "compare", "title": f"Comparison ({options.suite} suite)",
                   "results": document["compare"]})
        (out_dir / "compare.csv").write_text(paper.to_csv(document), encoding="utf-8")


def guarantee(given: Given, files: Files, as_json: JsonOpt = False, out_dir: OutOpt = None,
              force: ForceOpt = False) -> None:
    """A certified threshold: answer when the confidence is at least t, with the selective
    error (errors among answered items) at most --target with probability at least 1 - --delta
    over the calibration draw (--method ltt: Learn then Test, Hoeffding-Bentkus p-values,
    fixed-sequence, Bonferroni or Holm over the thresholds; sgr: Geifman & El-Yaniv's binary
    search), or the expected share answered and wrong at most --target (crc: conformal risk
    control). --batch M promises the error of a new batch of M items instead of the
    population's (--batch test: the test half's). One result per input. --out writes
    run.json, metrics.json and policy.json (one per input: policy-<k>.json), which
    `confeval guarantee apply POLICY RECORDS` applies."""
    from ..report import publish
    from ..runs import RunFolder
    from ..suites.guarantee import GuaranteeOptions, guarantee_file, policy
    from ..suites.options import build

    check_out(out_dir, "guarantee", force)
    options = build(GuaranteeOptions, given.values, what="confeval guarantee")
    results = {str(path): guarantee_file(path, options) for path in files}
    if out_dir is not None:
        run = RunFolder(out_dir)
        run.write_run({"command": "guarantee", "inputs": [str(p) for p in files],
                       "options": dataclasses.asdict(options)})
        publish(run, {"title": "confeval guarantee", "simulated": False, "sections": [
            {"kind": "guarantee", "title": "Certified threshold", "results": results}]})
        for k, (path, result) in enumerate(results.items(), start=1):
            run.write_json("policy.json" if len(files) == 1 else f"policy-{k}.json",
                           policy(result, path, options))
        err.print(f"run folder written: {out_dir}")
    if as_json:
        print_json({"guarantee": results[str(files[0])]} if len(files) == 1 else
                   {"results": {k: {"guarantee": v} for k, v in results.items()}})
        return
    for path, result in results.items():
        out.print(f"{path}: {result['guarantee']}")
        if result.get("excluded"):
            out.print(f"  excluded: {reasons_text(result['excluded'])} of "
                      f"{result['n_read']:,} read")
        if result.get("test"):
            test = result["test"]
            risk = "–" if test["risk"] is None else f"{test['risk']:.4f}"
            out.print(f"  test half ({test['n']:,} items): {result['risk_controlled']} error "
                      f"{risk}, answered {test['coverage']:.1%}")
        if result.get("splits"):
            sp = result["splits"]
            out.print(f"  over {sp['n_splits']} splits: test risk above {result['target']:g} "
                      f"on {sp['share_exceeding_target']:.0%} (± {sp['share_se']:.0%}), "
                      f"a threshold certified on {sp['n_certified']}, mean answer rate "
                      f"{sp['mean_coverage']:.1%}")


PolicyArg = Annotated[Path, typer.Argument(metavar="POLICY", help="A policy.json written by "
                                                                  "`confeval guarantee --out`.")]
RecordsArg = Annotated[Path, typer.Argument(metavar="RECORDS", help="Records with the "
                                                                    "confidence the policy "
                                                                    "names (no correctness "
                                                                    "needed).")]
DecisionsOut = Annotated[Path | None, typer.Option(
    "--out", help="Write the records with a decision column (answer, abstain, excluded) "
                  "(.jsonl, .csv, .parquet, optionally .gz).")]


def guarantee_apply(policy_file: PolicyArg, records: RecordsArg, out_file: DecisionsOut = None,
                    force: ForceOpt = False, as_json: JsonOpt = False) -> None:
    """Apply a policy: mark each record answer (its confidence at least the threshold),
    abstain, or excluded (its confidence unreadable, with the reason)."""
    from ..records import write_table
    from ..suites.guarantee import apply_policy

    if out_file is not None and out_file.exists() and not force:
        raise UserError(f"--out {out_file} exists; use --force to overwrite it")
    frame, counts = apply_policy(policy_file, records)
    if out_file is not None:
        write_table(frame, out_file)
    if as_json:
        print_json({"apply": {"policy": str(policy_file), "records": str(records), **counts}})
        return
    excluded = reasons_text(counts["excluded"])
    out.print(f"{records}: answer {counts['answer']:,}, abstain {counts['abstain']:,} "
              f"(excluded: {excluded})" + (f"; written to {out_file}" if out_file else ""))


def register(app: typer.Typer) -> None:
    """Add ``score`` and ``agreement`` to the top-level command."""
    add_scoring_command(app, "score", "score", (
        "Score a confidence column against correctness: ECE, MCE, Brier, AUROC, AUARC, PRR, "
        "RCE."), bootstrap_progress=True)
    add_scoring_command(app, "agreement", "agreement", (
        "Agreement of a judge's scores with reference scores (correlations, accuracy, "
        "bias)."))
    from ..suites.compare import COMPARISONS, CompareOptions

    beside = {suite: entry.options_class() for suite, entry in COMPARISONS.items()}
    ignored = {suite: entry.ignored for suite, entry in COMPARISONS.items()}
    app.command("compare")(with_options(CompareOptions, "score", beside=beside,
                                        ignored=ignored)(compare))
    from ..suites.guarantee import GuaranteeOptions

    app.command("guarantee")(with_options(GuaranteeOptions, "score")(guarantee))
    app.command(GUARANTEE_APPLY, hidden=True)(guarantee_apply)
