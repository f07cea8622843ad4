"""``confeval guarantee apply``: a policy applied to new records, and whether its promise still
applies to them. Parses, calls :mod:`confeval.verbs.apply` and prints."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..runs import check_output_folder
from ._common import (
    ForceOpt,
    JsonOpt,
    err,
    out,
    print_json,
    reasons_text,
    write_run,
)
from ._files import refuse_to_overwrite
from ._options import Given, with_options

__all__ = ["PROMISE_VOID", "exit_if_void", "guarantee_apply", "print_validity", "register"]

PolicyArg = Annotated[Path, typer.Argument(metavar="POLICY", help="A policy.json written by "
                                                                  "`confeval guarantee --out`.")]
BatchesArg = Annotated[list[Path], typer.Argument(
    metavar="RECORDS...", help="New records with the confidence the policy names (no "
                               "correctness needed; where some carry it, the promise itself is "
                               "checked): one file is a batch; several files, or a folder of "
                               "them (name order), are a stream, watched online.")]
DecisionsOut = Annotated[Path | None, typer.Option(
    "--out", help="Write the records with a decision column (answer, abstain, excluded) "
                  "(.jsonl, .csv, .parquet, optionally .gz; a batch column with several "
                  "files).")]
StrictOpt = Annotated[bool, typer.Option(
    "--strict", help="Exit 4 when the promise is void (the new records are not exchangeable "
                     "with the calibration data, or labels show the error above the target) "
                     "or cannot be checked (a policy without a calibration summary).")]
ReportOpt = Annotated[Path | None, typer.Option(
    "--report", help="Write a run folder here: run.json, metrics.json and report.html (the "
                     "confidence distributions, the test, the martingale path, the error's "
                     "bounds); `confeval rerun` repeats it.")]

PROMISE_VOID = 4
"""``guarantee apply --strict``'s exit code when the promise is void or unchecked."""


def guarantee_apply(given: Given, policy_file: PolicyArg, records: BatchesArg,
                    out_file: DecisionsOut = None, report_dir: ReportOpt = None,
                    strict: StrictOpt = False, force: ForceOpt = False,
                    as_json: JsonOpt = False) -> None:
    """Apply a policy: mark each record answer (its confidence at least the threshold),
    abstain, or excluded (its confidence unreadable, with the reason) — and check that the
    promise still applies: the new confidences tested against the calibration data the policy
    summarises (one file: a two-sample test; a stream: an online test martingale, its alarm
    named by file and row), and, where records carry labels, the realised error watched
    against the target."""
    from ..records import write_table
    from ..suites.options import build
    from ..verbs.apply import (
        ValidityOptions,
        apply_batches,
        apply_run_config,
        apply_section,
        batch_files,
    )

    refuse_to_overwrite(out_file, force, inputs=[policy_file, *records])
    check_output_folder(report_dir, "guarantee apply", force=force,
                        inputs=[policy_file, *records], option="--report")
    options = build(ValidityOptions, given.values, what="confeval guarantee apply")
    applied = apply_batches(policy_file, records, options)
    counts, validity = applied.counts, applied.validity
    if counts["threshold"] is None:   # said, not left to a column of abstentions
        err.print(f"warning: {policy_file} certifies no threshold: every record abstains "
                  "(see its guarantee sentence)", markup=False)
    for name in applied.skipped:
        err.print(f"skipped {name}: not a records file", markup=False)
    if out_file is not None:
        write_table(applied.frame, out_file)
    if report_dir is not None:
        write_run(report_dir, apply_run_config(policy_file, batch_files(records)[0], options),
                  apply_section(policy_file, applied), force=force)
    if as_json:
        named = str(records[0]) if len(records) == 1 else [str(r) for r in records]
        print_json({"apply": {"policy": str(policy_file), "records": named, **counts,
                              **({"batches": applied.batches} if len(applied.batches) > 1
                                 else {}), "validity": validity},
                    "validity": validity})
    else:
        excluded = reasons_text(counts["excluded"])
        where = records[0] if len(applied.batches) == 1 else f"{len(applied.batches)} files"
        out.print(f"{where}: answer {counts['answer']:,}, abstain {counts['abstain']:,} "
                  f"(excluded: {excluded})" + (f"; written to {out_file}" if out_file else ""),
                  markup=False)
        print_validity(validity)
    exit_if_void(validity, strict)


def print_validity(validity: dict) -> None:
    """The promise's check in words: the test's sentence, the labels' and any note."""
    out.print(validity["sentence"], markup=False)
    if validity.get("risk"):
        out.print(validity["risk"]["sentence"], markup=False)
    if validity.get("note"):
        out.print(f"  note: {validity['note']}", markup=False)


def exit_if_void(validity: dict, strict: bool) -> None:
    """``--strict``: exit :data:`PROMISE_VOID` unless the promise was checked and holds (and
    labels, where given, raised no alarm)."""
    risk = validity.get("risk") or {}
    if strict and (validity["holds"] is not True or risk.get("holds") is False):
        raise typer.Exit(PROMISE_VOID)


def register(app: typer.Typer, name: str) -> None:
    """Add the command under ``name`` (``guarantee apply`` is routed to it by
    :func:`confeval.cli.app.main`)."""
    from ..verbs.apply import ValidityOptions

    app.command(name, hidden=True)(with_options(ValidityOptions, "score")(guarantee_apply))
