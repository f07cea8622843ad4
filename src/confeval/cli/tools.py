"""Commands that are not one suite's: ``simulate``, ``demo``, ``report``, ``cache``,
``import`` and ``run SUITE`` (the alias of ``confeval SUITE run``)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any

import typer

from ..runs import RunFolder
from ._common import (
    BootOpt,
    ForceOpt,
    JsonOpt,
    SeedOpt,
    UserError,
    check_out,
    err,
    out,
    print_json,
    print_sections,
    progress,
    reasons_text,
)

__all__ = ["cache", "demo", "import_file", "report", "rerun", "simulate"]


def simulate(
    kind: Annotated[str, typer.Argument(help="confidence | scores | steps | mcq")],
    out_file: Annotated[Path, typer.Option("--out", help="Output file (.jsonl, .csv, .parquet, "
                                                         "optionally .gz).")],
    n: Annotated[int, typer.Option("--n", min=1, help="Items (for steps: problems).")] = 2000,
    behaviour: Annotated[str | None, typer.Option(
        "--behaviour", help="confidence: calibrated|overconfident|underconfident|uninformative; "
                            "scores: calibrated|overconfident|compressing; steps: "
                            "typical|overconfident; mcq: calibrated|overconfident|"
                            "underconfident. Default: the first.")] = None,
    seed: SeedOpt = 0,
    step: Annotated[float | None, typer.Option("--step", help="confidence: round to this grid "
                                                              "(verbalised).")] = None,
    n_options: Annotated[int, typer.Option("--n-options", help="mcq: options.")] = 4,
    n_levels: Annotated[int, typer.Option("--n-levels", help="scores: scale points.")] = 5,
) -> None:
    """Write SIMULATED records of a judge behaviour (seeded; documented in confeval.simulate)."""
    from ..records import write_table
    from ..simulate import simulate as generate

    options: dict[str, Any] = {}
    if kind == "confidence" and step:
        options["step"] = step
    if kind == "mcq":
        options["n_options"] = n_options
    if kind == "scores":
        options["n_levels"] = n_levels
    frame = generate(kind, n, behaviour, seed=seed, **options)
    write_table(frame, out_file)
    err.print(f"wrote {len(frame):,} simulated {kind} records to {out_file}")


def demo(
    out_dir: Annotated[Path, typer.Option("--out", help="Run folder to write.")]
    = Path("confeval-demo"),
    seed: SeedOpt = 0,
    n: Annotated[int, typer.Option("--n", min=50, help="Items per simulated judge.")] = 2000,
    bootstrap: BootOpt = 1000,
    live: Annotated[bool, typer.Option("--live/--no-live", help="Also run the embedded model "
                                                                "live (needs the local "
                                                                "extra).")] = True,
    live_items: Annotated[int, typer.Option("--live-items", min=10,
                                            help="Questions for the live run.")] = 120,
    force: ForceOpt = False,
) -> None:
    """Run every available evaluation on simulated judges (and, with the local extra, live on
    the embedded model); write a run folder and report.html."""
    from ..demo import LIVE_PLAN, live_model_available, run_demo

    check_out(out_dir, "demo", force)
    started = time.perf_counter()
    runs_live = live and live_model_available() is None
    live_steps = live_items + 1 + sum(n or 0 for _, _, n, *_ in LIVE_PLAN)
    with progress(17 + (live_steps if runs_live else 0), "demo") as step:
        metrics = run_demo(out_dir, seed=seed, n=n, n_resamples=bootstrap, live=live,
                           live_items=live_items, progress=step)
    print_sections(metrics["sections"], label=lambda s: "  [SIMULATED]" if s.get("simulated")
                   else "  [LIVE MODEL]")
    out.print(metrics["note"])
    out.print(f"report: {out_dir / RunFolder.REPORT}   ({time.perf_counter() - started:.1f} s)")


def report(
    run_dir: Annotated[Path, typer.Argument(help="A run folder with metrics.json.")],
    out_file: Annotated[Path | None, typer.Option("--out", help="Where to write the HTML "
                                                                "(default RUN_DIR/report.html).")]
    = None,
) -> None:
    """Render RUN_DIR/metrics.json into a self-contained HTML report."""
    from ..report import render_report

    try:
        run = RunFolder(run_dir, create=False)
        metrics = run.read_metrics()
    except FileNotFoundError as exc:
        raise UserError(str(exc)) from None
    try:
        info = run.read_run() if run.file(RunFolder.RUN).is_file() else None
    except ValueError:
        info = None  # a damaged run.json only loses the configuration panel
    page = render_report(metrics, info)
    target = out_file or run.file(RunFolder.REPORT)
    target.write_text(page, encoding="utf-8")
    out.print(f"report: {target}")


def rerun(
    run_dir: Annotated[Path, typer.Argument(help="A run folder (of a scoring command's --out, "
                                                 "or of a live run).")],
    out_dir: Annotated[Path | None, typer.Option(
        "--out", help="Write the repeated run here (run.json, records, metrics.json, "
                      "report.html).")] = None,
    force: ForceOpt = False,
) -> None:
    """Repeat a run folder from its run.json alone (every input checked by SHA-256; a live run
    rescored from its records, no model call) and compare with its metrics.json."""
    from ..rerun import differences
    from ..rerun import rerun as repeat

    metrics = repeat(run_dir, out_dir, force=force)
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


def import_file(
    source: Annotated[Path, typer.Argument(metavar="FILE", help="An lm-eval samples file, "
                                                              "an Inspect log, or "
                                                              "OpenAI-compatible responses.")],
    out_file: Annotated[Path, typer.Option("--out", help="Records to write (.jsonl, .csv, "
                                                         ".parquet, optionally .gz).")],
    suite: Annotated[str, typer.Option("--suite", help="Whose layout: score, sets, "
                                                       "measures or intervals.")] = "score",
    from_format: Annotated[str, typer.Option("--from", help="auto, lm-eval, inspect or "
                                                            "openai.")] = "auto",
    normalise: Annotated[str, typer.Option("--normalise", help="lm-eval: none, chars or "
                                                               "bytes.")] = "none",
    data: Annotated[str | None, typer.Option("--data", help="OpenAI-compatible responses: "
                                                            "the data file they answer.")
                    ] = None,
    min_score: Annotated[int, typer.Option("--min-score", help="A judge's lowest rating "
                                                               "(intervals).")] = 1,
    max_score: Annotated[int, typer.Option("--max-score", help="A judge's highest rating "
                                                               "(intervals).")] = 5,
    force: ForceOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Write another tool's file as confeval records (the layout `confeval SUITE score` reads
    with no column flag), to look at before scoring; unusable samples are counted, not
    written."""
    from ..ingest import import_records
    from ..records import write_table

    if out_file.exists() and not force:
        raise UserError(f"--out {out_file} exists; use --force to overwrite it")
    if not 0 <= max_score - min_score < 100:
        raise UserError(f"--min-score {min_score} to --max-score {max_score}: 1 to 100 "
                        "ratings")
    frame, counts = import_records(source, suite, from_format, normalise, data=data,
                                   levels=tuple(range(min_score, max_score + 1)))
    write_table(frame, out_file)
    if as_json:
        print_json({"import": {"source": str(source), "out": str(out_file), **counts}})
        return
    excluded = reasons_text(counts["excluded"])
    err.print(f"wrote {counts['n_used']:,} of {counts['n_read']:,} {suite} records to "
              f"{out_file} (excluded: {excluded})")


def cache(
    action: Annotated[str, typer.Argument(help="info | clear")],
    cache_path: Annotated[Path | None, typer.Option("--cache", help="Cache file.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Show or clear the response cache."""
    from ..backends import ResponseCache

    if action not in ("info", "clear"):
        raise UserError(f"unknown cache action {action!r}; use info or clear")
    store = ResponseCache(cache_path, repair=action == "clear")
    if action == "clear":
        removed = store.clear()
        out.print(f"removed {removed} cached response(s) from {store.path}")
        return
    info = store.info()
    if as_json:
        print_json(info)
        return
    out.print(f"{info['path']}: {info['entries']} response(s), {info['bytes'] / 1e6:.1f} MB")
    for name, count in info["by_backend"].items():
        out.print(f"  {name}: {count}")


