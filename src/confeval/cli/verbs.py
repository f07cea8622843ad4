"""The cross-suite commands that are not a suite's scoring or live run: ``compare``,
``guarantee``, ``guarantee apply``, ``import`` and ``rerun``. Each parses, calls
:mod:`confeval.verbs` and prints."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from ..runs import RunFolder, check_output_folder
from ..verbs.compare import CompareOptions, comparable
from ..verbs.guarantee import GuaranteeOptions, certifiable
from . import apply
from ._common import (
    Files,
    ForceOpt,
    JsonOpt,
    OutOpt,
    UserError,
    err,
    out,
    print_json,
    reasons_text,
    report_incomplete,
    write_run,
)
from ._files import refuse_to_overwrite
from ._options import Given, with_options

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
    from ..report.terminal import compare_notes, compare_tables
    from ..suites.options import build
    from ..verbs.compare import compare_files, compare_run_config, compare_section, model_names

    if table_format not in paper.FORMATS:
        raise UserError(f"--format {table_format!r}: choose from {', '.join(paper.FORMATS)}")
    check_output_folder(out_dir, "compare", force=force, inputs=files)
    own = {f.name for f in dataclasses.fields(CompareOptions)}
    options = build(CompareOptions, {k: v for k, v in given.values.items() if k in own},
                    what="confeval compare")
    suite_values = {k: v for k, v in given.on_command_line().items() if k not in own}
    inputs = model_names(list(files), name)
    document = {"compare": compare_files(inputs, options, suite_values)}
    if out_dir is not None:
        write_run(out_dir, compare_run_config(inputs, options, suite_values,
                                              document["compare"]),
                  compare_section(document["compare"]), force=force,
                  files={"compare.csv": paper.to_csv(document)})
    if as_json:
        print_json(document)
    elif table_format == "table":
        for verdict, table in compare_tables(document):   # title, verdict, table
            if verdict:
                out.print(Text(str(table.title), style="bold"), soft_wrap=False)
                out.print(Text(verdict), soft_wrap=False)   # wrapped at words
                table.title = None
            out.print(table)
        for note in compare_notes(document):
            out.print(note)
    else:
        writer = {"markdown": paper.to_markdown, "latex": paper.to_latex, "csv": paper.to_csv}
        out.print(writer[table_format](document), end="", markup=False)


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
    from ..runs import dumps
    from ..suites.options import build
    from ..verbs.guarantee import (
        guarantee_inputs,
        guarantee_metrics,
        guarantee_run_config,
        policy_files,
    )

    check_output_folder(out_dir, "guarantee", force=force, inputs=files)
    own = {f.name for f in dataclasses.fields(GuaranteeOptions)}
    options = build(GuaranteeOptions, {k: v for k, v in given.values.items() if k in own},
                    what="confeval guarantee")
    beside = {k: v for k, v in given.on_command_line().items() if k not in own}
    certified = guarantee_inputs(list(files), options, beside, frozenset(beside))
    results = {str(p): c.result for p, c in zip(files, certified)}
    if out_dir is not None:
        policies = {name: dumps(document) + "\n"
                    for name, document in policy_files(certified, list(files)).items()}
        write_run(out_dir, guarantee_run_config(list(files), options, beside), force=force,
                  metrics=guarantee_metrics(list(files), certified), files=policies)
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
        for warning in result.get("warnings") or ():   # what reading the file said
            err.print(f"warning: {path}: {warning}", soft_wrap=True)


def _help(name: str) -> str:
    """The help of an option ``import`` shares with the suites' scoring (declared once)."""
    from ..suites.options import IngestOptions, spec_of

    return spec_of(IngestOptions.__dataclass_fields__[name]).help.replace(
        "(none named: `score` scores each on its own)", "(none named: all, each row naming "
        "its own)")


def import_file(
    source: Annotated[Path, typer.Argument(metavar="FILE", help="An lm-eval samples file, "
                                                              "an Inspect log, or "
                                                              "OpenAI-compatible responses.")],
    out_file: Annotated[Path, typer.Option("--out", help="Records to write (.jsonl, .csv, "
                                                         ".parquet, optionally .gz).")],
    suite: Annotated[str, typer.Option("--suite", help="Whose layout: the suites that read "
                                                       "other tools' files (score, agreement, "
                                                       "sets, intervals, measures).")]
    = "score",
    from_format: Annotated[str, typer.Option("--from", help="auto, lm-eval, inspect or "
                                                            "openai.")] = "auto",
    normalise: Annotated[str, typer.Option("--normalise", help="lm-eval: none, chars or "
                                                               "bytes.")] = "none",
    data: Annotated[str | None, typer.Option("--data", help="OpenAI-compatible responses: "
                                                            "the data file they answer.")
                    ] = None,
    filter_name: Annotated[str | None, typer.Option("--filter", help=_help("filter_name"))
                           ] = None,
    scorer: Annotated[str | None, typer.Option("--scorer", help=_help("scorer"))] = None,
    epochs: Annotated[str, typer.Option("--epochs", help=_help("epochs"))] = "each",
    min_score: Annotated[int, typer.Option("--min-score", help="A judge's lowest rating "
                                                               "(intervals).")] = 1,
    max_score: Annotated[int, typer.Option("--max-score", help="A judge's highest rating "
                                                               "(intervals).")] = 5,
    force: ForceOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Write another tool's file as confeval records (the layout `confeval SUITE score` reads
    with no column flag), to look at before scoring; unusable samples are counted, not
    written. Every lm-eval filter and Inspect scorer is written, each row naming its own,
    unless --filter or --scorer names one."""
    from ..records import write_table
    from ..verbs.importing import import_file as import_records

    refuse_to_overwrite(out_file, force, inputs=[source])
    frame, counts = import_records(source, suite, from_format, normalise, data=data,
                                   levels=tuple(range(min_score, max_score + 1)),
                                   filter_name=filter_name, scorer=scorer, epochs=epochs)
    write_table(frame, out_file)
    if as_json:
        print_json({"import": {"source": str(source), "out": str(out_file), **counts}})
        return
    excluded = reasons_text(counts["excluded"])
    err.print(f"wrote {counts['n_used']:,} of {counts['n_read']:,} {suite} records to "
              f"{out_file} (excluded: {excluded})")


def rerun(
    run_dir: Annotated[Path, typer.Argument(help="A run folder (of a scoring command's, "
                                                 "compare's or guarantee's --out, or of a "
                                                 "live run).")],
    out_dir: Annotated[Path | None, typer.Option(
        "--out", help="Write the repeated run here (run.json, records, metrics.json, "
                      "report.html).")] = None,
    force: ForceOpt = False,
) -> None:
    """Repeat a run folder from its run.json alone (every input checked by SHA-256; a live run
    rescored from its records, no model call) and compare with its metrics.json."""
    from ..verbs.rerun import differences
    from ..verbs.rerun import rerun as repeat

    problems: list = []
    metrics = repeat(run_dir, out_dir, force=force, problems=problems)
    report_incomplete(problems)
    old = RunFolder(run_dir, create=False).read_metrics()
    diffs = differences(old, metrics)
    if out_dir is not None:
        out.print(f"run folder written: {out_dir}")
    if diffs:
        for line in diffs[:10]:
            out.print(line, markup=False)
        out.print(f"{len(diffs)} difference(s) from {run_dir / RunFolder.METRICS}")
        raise typer.Exit(1)
    out.print(f"metrics identical to {run_dir / RunFolder.METRICS}")


def register(app: typer.Typer) -> None:
    """Add ``compare``, ``guarantee`` (and ``guarantee apply``), ``import`` and ``rerun``."""
    compared = comparable()
    beside = {suite: entry.Options for suite, entry in compared.items()}
    ignored = {suite: entry.not_compared for suite, entry in compared.items()}
    app.command("compare")(with_options(CompareOptions, "score", beside=beside,
                                        ignored=ignored)(compare))
    certified = {f"{name}": suite.Options for name, suite in certifiable().items()}
    certified.update({f"{name} decision": suite.choice
                      for name, suite in certifiable().items()})
    app.command("guarantee")(with_options(GuaranteeOptions, "score", beside=certified)(
        guarantee))
    apply.register(app, GUARANTEE_APPLY)
    app.command("import")(import_file)
    app.command()(rerun)
