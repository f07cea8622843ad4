"""Commands that are not one suite's: ``simulate``, ``demo``, ``report``, ``cache`` and ``run
SUITE`` (the alias of ``confeval SUITE run``)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any

import typer

from ..records import write_table
from ..runs import RunFolder
from ._common import (
    ApiKeyOpt,
    BaseUrlOpt,
    BootOpt,
    CacheOpt,
    ConcurrencyOpt,
    DataOpt,
    JsonOpt,
    MethodOpt,
    ModelOpt,
    NoCacheOpt,
    NOpt,
    RunOutOpt,
    SeedOpt,
    TopKOpt,
    UserError,
    err,
    out,
    print_json,
    print_sections,
    progress,
    run_live,
)

__all__ = ["cache", "demo", "report", "run", "simulate"]


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
) -> None:
    """Run every available evaluation on simulated judges (and, with the local extra, live on
    the embedded model); write a run folder and report.html."""
    from ..demo import LIVE_PLAN, live_model_available, run_demo

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


def run(
    suite: Annotated[str, typer.Argument(help="Suite to run live: sets, intervals, steps.")],
    out_dir: RunOutOpt,
    model: ModelOpt = None,
    data: DataOpt = None,
    n: NOpt = None,
    seed: SeedOpt = 0,
    base_url: BaseUrlOpt = None,
    concurrency: ConcurrencyOpt = 8,
    api_key_env: ApiKeyOpt = "OPENAI_API_KEY",
    method: MethodOpt = "auto",
    alpha: Annotated[float | None, typer.Option(
        "--alpha", help="sets, intervals: miscoverage (default 0.1).")] = None,
    idk: Annotated[bool, typer.Option("--idk", help="sets: add an \"I don't know\" option.")]
    = False,
    nota: Annotated[bool, typer.Option("--nota", help="sets: add \"None of the above\".")]
    = False,
    top_k: TopKOpt = 20,
    consistency: Annotated[str | None, typer.Option(
        "--consistency", help="steps: when a judge's label contradicts its probability: "
                              "flag, mirror or exclude (default flag).")] = None,
    max_tokens: Annotated[int | None, typer.Option(
        "--max-tokens", min=1, help="steps, intervals: reply length limit (default 1024 for "
                                    "steps, 160 for intervals).")] = None,
    no_cache: NoCacheOpt = False,
    cache_path: CacheOpt = None,
    bootstrap: BootOpt = 1000,
) -> None:
    """Run a suite end to end: prompts -> model -> records.jsonl -> metrics.json + report.html
    (the same as `confeval SUITE run`; every suite's own options are there)."""
    options: dict[str, Any] = {"method": method, "top_k": top_k, "seed": seed,
                               "bootstrap": bootstrap, "alpha": alpha, "idk": idk,
                               "nota": nota, "consistency": consistency,
                               "max_tokens": max_tokens}
    given = {"--idk": idk, "--nota": nota}
    if suite != "sets" and any(given.values()):
        raise UserError(f"{', '.join(k for k, v in given.items() if v)}: only for the sets "
                        "suite")
    run_live(suite, options, out_dir=out_dir, model=model, data=data, n=n, base_url=base_url,
             concurrency=concurrency, api_key_env=api_key_env, no_cache=no_cache,
             cache_path=cache_path)


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


