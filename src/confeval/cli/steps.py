"""``confeval steps``: confidence of process judges (ConfProBench) — score step records,
parse raw replies, compare perturbation generators, perturb a dataset, run a judge live."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..report.terminal import TERMINAL_TABLES
from ..runs import check_output_folder
from ..suites.options import RunFlags
from ..suites.steps import ConsistencyOptions
from ._common import (
    ForceOpt,
    JsonOpt,
    OutOpt,
    err,
    out,
    print_json,
    write_run,
)
from ._options import Given, with_options

__all__ = ["consistency", "parse", "perturb", "perturb_command", "register"]


def parse(
    raw: Annotated[Path, typer.Argument(help="Judge replies: one row per (item, variant) with "
                                             "raw_output, labels, error_types (lists) and "
                                             "optionally n_steps, variant, metadata.")],
    out_path: Annotated[Path, typer.Option("--out", help="Step records to write (.jsonl, "
                                                         ".csv or .parquet).")],
    id_col: Annotated[str | None, typer.Option(
        "--id-col", help="Problem id column (default: problem_id if present, else "
                         "item_id).")] = None,
    consistency: Annotated[str, typer.Option(
        "--consistency", help="When the judge's label contradicts its probability: flag "
                              "(keep p), mirror (p -> 1 - p) or exclude.")] = "flag",
    as_json: JsonOpt = False,
) -> None:
    """Turn raw process-judge replies into step records for `confeval steps score`
    (never evaluates the replies; unreadable steps are kept and counted)."""
    from ..records import RecordSet, write_table
    from ..suites.steps import parse_step_replies

    steps, summary = parse_step_replies(RecordSet.read(raw), id_col=id_col,
                                        consistency=consistency)
    write_table(steps, out_path)
    summary = {**summary, "out": str(out_path)}
    summary = {k: summary[k] for k in ("source", "replies", "skipped_replies", "steps",
                                       "parsed", "unparseable", "flags", "out", "consistency")}
    if as_json:
        print_json(summary)
    else:
        out.print(f"{summary['replies']} replies -> {summary['steps']} steps: "
                  f"{summary['parsed']} parsed, "
                  f"{summary['steps'] - summary['parsed']} unparseable "
                  f"{summary['unparseable'] or ''}; flags {summary['flags'] or 'none'}; "
                  f"written to {out_path}")


def consistency(given: Given, as_json: JsonOpt = False, out_dir: OutOpt = None,
                force: ForceOpt = False) -> None:
    """Correlation across judges of CRS, CSS and CCS between two perturbation generators
    (ConfProBench Appendix H): do the generators lead to the same conclusions?"""
    from ..suites.options import build
    from ..suites.steps import CONSISTENCY, ConsistencyOptions
    from ..verbs.score import score_inputs

    check_output_folder(out_dir, CONSISTENCY.command, force=force)
    inputs = build(ConsistencyOptions, given.values, what="confeval steps consistency").inputs()
    scored = score_inputs(CONSISTENCY, inputs, given.values)
    write_run(out_dir, scored.config, scored.section, force=force)
    result = scored.results[CONSISTENCY.together]
    if as_json:
        print_json(result)
        return
    out.print(TERMINAL_TABLES["steps_consistency"](result))


def perturb(
    given: Given,
    data: Annotated[str, typer.Argument(help="Step dataset (builtin:arith-steps or a file in "
                                             "the steps suite's input format).")],
    kind: Annotated[str, typer.Option("--kind", help="lexical | syntactic | image")],
    out_file: Annotated[Path, typer.Option("--out", help="Perturbed dataset (.jsonl).")],
    images_dir: Annotated[Path | None, typer.Option(
        "--images-dir", help="image: where perturbed images go (default: next to --out).")]
    = None,
    image_kind: Annotated[str | None, typer.Option(
        "--image-kind", help="image: force scale, rotate, noise or invert (default: one "
                             "drawn per item).")] = None,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    retries: Annotated[int, typer.Option("--retries", min=0, help="Extra requests when no "
                                                                  "rewrite is valid.")] = 3,
    with_original: Annotated[bool, typer.Option(
        "--with-original/--perturbed-only", help="Also write the original items, so that "
                                                  "`run steps` on the file measures CRS.")]
    = True,
    as_json: JsonOpt = False,
) -> None:
    """Write a perturbed copy of a step dataset (ConfProBench's lexical, syntactic or image
    level) for `confeval steps run`; rewrites are validated, failures recorded. --model names
    the rewriting model for lexical/syntactic (default: the embedded model)."""
    from ..backends import CachedBackend
    from ..suites.options import build
    from ..suites.steps.perturbation import check_perturbation, write_perturbed_dataset

    flags = build(RunFlags, given.values, what="confeval steps perturb")
    check_perturbation(kind, image_kind, out_file)
    backend = None
    if kind != "image":
        backend = flags.backend()
        cache = flags.response_cache()
        if cache is not None:
            backend = CachedBackend(backend, cache)
    summary = write_perturbed_dataset(data, kind, out_file, backend=backend, n=flags.n,
                                      seed=seed, image_root=flags.image_root,
                                      images_dir=images_dir, image_kind=image_kind,
                                      retries=retries, concurrency=flags.concurrency,
                                      with_original=with_original)
    if summary["images_outside"]:
        err.print(f"{summary['images_outside']} image path(s) lie outside {out_file.parent}: "
                  "run the file with --image-root set to a folder holding them all")
    if as_json:
        print_json(summary)
    else:
        out.print(" ".join(f"{k}={v}" for k, v in summary.items()))


PERTURB_FLAGS = ("data", "text_only")
"""Run flags perturb does not take: its dataset is an argument, and it sends no image."""


perturb_command = with_options(RunFlags, "run", skip=PERTURB_FLAGS)(perturb)
"""``confeval steps perturb`` (and its top-level alias ``confeval perturb``)."""


def register(app: typer.Typer) -> None:
    """Add ``parse``, ``consistency`` and ``perturb`` to ``confeval steps``."""
    app.command("parse")(parse)
    app.command("consistency")(with_options(ConsistencyOptions, "score")(consistency))
    app.command("perturb")(perturb_command)
