"""Commands that are not one suite's and compute nothing of a suite: ``simulate``, ``demo``,
``report`` and ``cache``."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any

import typer

from ..runs import RunFolder, check_output_folder, write_file
from ._common import (
    BootOpt,
    ForceOpt,
    JsonOpt,
    SeedOpt,
    UserError,
    err,
    out,
    print_json,
    print_sections,
    progress,
    report_incomplete,
)
from ._files import FileForceOpt, refuse_to_overwrite, report_file_outside

__all__ = ["cache", "demo", "report", "simulate"]


def simulate(
    kind: Annotated[str, typer.Argument(
        help="confidence | scores | steps | mcq | reruns | pairwise | lengths")],
    out_file: Annotated[Path, typer.Option("--out", help="Output file (.jsonl, .csv, .parquet, "
                                                         "optionally .gz).")],
    n: Annotated[int, typer.Option("--n", min=1, help="Items (for steps: problems).")] = 2000,
    behaviour: Annotated[str | None, typer.Option(
        "--behaviour", help="confidence: calibrated|overconfident|underconfident|uninformative; "
                            "scores: calibrated|overconfident|compressing; steps: "
                            "typical|overconfident; mcq: calibrated|overconfident|"
                            "underconfident; reruns: sampling|overconfident|deterministic; "
                            "pairwise: unbiased|first-slot|verbose; lengths: unbiased|verbose. "
                            "Default: the first.")] = None,
    seed: SeedOpt = 0,
    step: Annotated[float | None, typer.Option("--step", help="confidence: round to this grid "
                                                              "(verbalised).")] = None,
    n_options: Annotated[int, typer.Option("--n-options", help="mcq: options.")] = 4,
    n_levels: Annotated[int, typer.Option("--n-levels", help="scores: scale points.")] = 5,
    reruns: Annotated[int, typer.Option("--reruns", min=2, help="reruns: reruns per item.")
                      ] = 5,
    force: FileForceOpt = False,
) -> None:
    """Write SIMULATED records of a judge behaviour (seeded; documented in confeval.simulate)."""
    from ..records import write_table
    from ..simulate import simulate as generate

    refuse_to_overwrite(out_file, force)
    options: dict[str, Any] = {}
    if kind == "confidence" and step:
        options["step"] = step
    if kind == "mcq":
        options["n_options"] = n_options
    if kind in ("scores", "reruns"):
        options["n_levels"] = n_levels
    if kind == "reruns":
        options["k"] = reruns
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
    from ..verbs.demo import live_model_available, live_plan, run_demo

    check_output_folder(out_dir, "demo", force=force)
    started = time.perf_counter()
    runs_live = live and live_model_available() is None
    live_steps = live_items + 1 + sum(entry.n or 0 for _, entry in live_plan())
    with progress(17 + (live_steps if runs_live else 0), "demo") as step:
        problems: list = []
        metrics = run_demo(out_dir, seed=seed, n=n, n_resamples=bootstrap, live=live,
                           live_items=live_items, force=force, progress=step,
                           problems=problems)
    report_incomplete(problems)
    print_sections(metrics["sections"], label=lambda s: "  [SIMULATED]" if s.get("simulated")
                   else "  [LIVE MODEL]")
    out.print(metrics["note"], markup=False, soft_wrap=False)  # wrapped at words; no markup
    out.print(f"report: {out_dir / RunFolder.REPORT}   ({time.perf_counter() - started:.1f} s)")


def report(
    run_dir: Annotated[Path, typer.Argument(help="A run folder with metrics.json.")],
    out_file: Annotated[Path | None, typer.Option("--out", help="Where to write the HTML "
                                                                "(default RUN_DIR/report.html).")]
    = None,
    force: FileForceOpt = False,
) -> None:
    """Render RUN_DIR/metrics.json into a self-contained HTML report (exit status 3, each
    problem named on stderr, when a chart or a section could not be shown)."""
    from ..report import render_report_checked

    if out_file is not None:
        out_file = report_file_outside(out_file, run_dir)
        refuse_to_overwrite(out_file, force)
    try:
        run = RunFolder(run_dir, create=False)
        metrics = run.read_metrics()
    except FileNotFoundError as exc:
        raise UserError(str(exc)) from None
    try:
        info = run.read_run() if run.file(RunFolder.RUN).is_file() else None
    except ValueError:
        info = None  # a damaged run.json only loses the configuration panel
    page, problems = render_report_checked(metrics, info)
    if out_file is not None:   # a file of the user's: written whole, never through a link
        write_file(out_file, page)
    else:                      # the run's own report: under its lock, never through a link
        with run.lock():
            run.write_report(page)
    report_incomplete(problems)
    out.print(f"report: {out_file or run.file(RunFolder.REPORT)}")


def cache(
    action: Annotated[str, typer.Argument(help="info | clear")],
    cache_path: Annotated[Path | None, typer.Option("--cache", help="Cache file.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Show or clear the response cache."""
    from ..backends.cache import cache_info, clear_cache

    if action not in ("info", "clear"):
        raise UserError(f"unknown cache action {action!r}; use info or clear")
    if action == "clear":
        removed, what = clear_cache(cache_path)
        out.print(f"removed {removed} cached response(s) {what}" if what.startswith("from")
                  else what)
        return
    info = cache_info(cache_path)
    if as_json:
        print_json(info)
        return
    if not info["exists"]:
        out.print(f"{info['path']}: no cache yet (0 responses)")
        return
    out.print(f"{info['path']}: {info['entries']} response(s), {info['bytes'] / 1e6:.1f} MB")
    for name, count in info["by_backend"].items():
        out.print(f"  {name}: {count}")


