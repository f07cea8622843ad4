"""``confeval steps``: confidence of process judges (ConfProBench) — score step records,
parse raw replies, compare perturbation generators, perturb a dataset, run a judge live."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..report.terminal import TERMINAL_TABLES
from ._common import (
    ApiKeyOpt,
    BaseUrlOpt,
    ConcurrencyOpt,
    ForceOpt,
    ImageRootOpt,
    JsonOpt,
    OutOpt,
    check_out,
    err,
    group,
    out,
    print_json,
    write_run,
)
from ._suite_commands import add_run_command, add_score_command

__all__ = ["app", "consistency", "parse", "perturb"]

app = group("Confidence of process judges (ConfProBench: CRS, CSS, CCS).")


add_score_command(app, "steps", (
    "CRS (robustness to perturbations), CSS (sensitivity to each error type), CCS "
    "(calibration), macro F1 and their average from step records or `steps run` folders "
    "(a run folder is scored with its own options unless overridden)."))


@app.command("parse")
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


@app.command("consistency")
def consistency(
    pair: Annotated[list[str], typer.Option(
        "--pair", help="JUDGE=RECORDS_A,RECORDS_B: one judge's step records on the dataset "
                       "perturbed by generator A and by generator B (repeat, >= 3 judges).")],
    as_json: JsonOpt = False,
    out_dir: OutOpt = None,
    force: ForceOpt = False,
) -> None:
    """Correlation across judges of CRS, CSS and CCS between two perturbation generators
    (ConfProBench Appendix H): do the generators lead to the same conclusions?"""
    check_out(out_dir, "steps consistency", force)
    from ..suites.steps import score_generator_consistency

    result = score_generator_consistency(pair)
    write_run(out_dir, {"command": "steps consistency", "pairs": pair},
              {"kind": "steps_consistency",
               "title": "Do two perturbation generators rank process judges alike?",
               "results": {"generators A vs B": result}})
    if as_json:
        print_json(result)
        return
    out.print(TERMINAL_TABLES["steps_consistency"](result))


@app.command("perturb")
def perturb(
    data: Annotated[str, typer.Argument(help="Step dataset (builtin:arith-steps or a file in "
                                             "the steps suite's input format).")],
    kind: Annotated[str, typer.Option("--kind", help="lexical | syntactic | image")],
    out_file: Annotated[Path, typer.Option("--out", help="Perturbed dataset (.jsonl).")],
    model: Annotated[str | None, typer.Option(
        "--model", help="Rewriting model for lexical/syntactic (as for `run`; default: the "
                        "embedded model).")] = None,
    base_url: BaseUrlOpt = None,
    api_key_env: ApiKeyOpt = "OPENAI_API_KEY",
    images_dir: Annotated[Path | None, typer.Option(
        "--images-dir", help="image: where perturbed images go (default: next to --out).")]
    = None,
    image_kind: Annotated[str | None, typer.Option(
        "--image-kind", help="image: force scale, rotate, noise or invert (default: one "
                             "drawn per item).")] = None,
    n: Annotated[int | None, typer.Option("--n", min=1, help="Items to use.")] = None,
    image_root: ImageRootOpt = None,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    retries: Annotated[int, typer.Option("--retries", min=0, help="Extra requests when no "
                                                                  "rewrite is valid.")] = 3,
    concurrency: ConcurrencyOpt = 8,
    no_cache: Annotated[bool, typer.Option("--no-cache")] = False,
    with_original: Annotated[bool, typer.Option(
        "--with-original/--perturbed-only", help="Also write the original items, so that "
                                                  "`run steps` on the file measures CRS.")]
    = True,
    as_json: JsonOpt = False,
) -> None:
    """Write a perturbed copy of a step dataset (ConfProBench's lexical, syntactic or image
    level) for `confeval steps run`; rewrites are validated, failures recorded."""
    from ..backends import CachedBackend, ResponseCache, get_backend
    from ..suites.steps.perturbation import check_perturbation, write_perturbed_dataset

    check_perturbation(kind, image_kind, out_file)
    backend = None
    if kind != "image":
        backend = get_backend(model, base_urls=base_url, concurrency=concurrency,
                              api_key_env=api_key_env)
        if not no_cache:
            backend = CachedBackend(backend, ResponseCache())
    summary = write_perturbed_dataset(data, kind, out_file, backend=backend, n=n, seed=seed,
                                      image_root=image_root, images_dir=images_dir,
                                      image_kind=image_kind, retries=retries,
                                      concurrency=concurrency, with_original=with_original)
    if summary["images_outside"]:
        err.print(f"{summary['images_outside']} image path(s) lie outside {out_file.parent}: "
                  "run the file with --image-root set to a folder holding them all")
    if as_json:
        print_json(summary)
    else:
        out.print(" ".join(f"{k}={v}" for k, v in summary.items()))


add_run_command(app, "steps", (
    "Ask a process judge to verify every step live (original and perturbed chains) and "
    "score CRS, CSS and CCS (resumable, cached)."), images=True)


