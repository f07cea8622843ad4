"""The ``confeval`` command line.

Every scoring command reads one or more record files, prints a table (or, with ``--json``, one
JSON document on stdout), and reports how many rows it excluded and why. Errors are one line
on stderr with exit code 2; ``--debug`` shows the traceback.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer
from rich import box
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from . import __version__
from .evaluate import evaluate_agreement, evaluate_confidence
from .records import RecordsError, RecordSet
from .runs import RunFolder, dumps

__all__ = ["app", "main"]

app = typer.Typer(
    name="confeval",
    help="Can the confidence of an LLM, a VLM or an LLM/VLM judge be trusted? "
         "Score records you already have, or run the demo on simulated judges.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)


class UserError(Exception):
    """An error caused by the user's input; shown as one line, exit code 2."""


def _version(value: bool) -> None:
    if value:
        out.print(f"confeval {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print the version and exit.")] = False,
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks on errors.")] = False,
) -> None:
    """confeval: trustworthy-confidence evaluation for LLMs, VLMs and LLM/VLM judges."""


class _RateColumn(ProgressColumn):
    """Items per second."""

    def render(self, task) -> Text:
        speed = task.finished_speed or task.speed
        return Text("" if speed is None else f"{speed:.1f}/s")


@contextmanager
def _progress(total: int, what: str, enabled: bool = True):
    """A progress bar on stderr (stdout stays clean for --json); a no-op when disabled."""
    if not enabled:
        yield lambda _msg=None: None
        return
    columns = (SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
               MofNCompleteColumn(), _RateColumn(), TimeElapsedColumn(), TextColumn("ETA"),
               TimeRemainingColumn())
    with Progress(*columns, console=err, transient=True) as bar:
        task = bar.add_task(what, total=total)

        def advance(msg: str | None = None) -> None:
            bar.update(task, advance=1, description=msg or what)

        yield advance


def _read(path: Path) -> RecordSet:
    try:
        return RecordSet.read(path)
    except RecordsError as exc:
        raise UserError(str(exc)) from None


def _emit(results: dict[str, dict], as_json: bool, table: Callable[[dict], Table]) -> None:
    if as_json:
        sys.stdout.write(dumps({"results": results}) + "\n")
        return
    out.print(table(results))
    for source, res in results.items():
        if res.get("excluded"):
            detail = ", ".join(f"{k}={v}" for k, v in res["excluded"].items())
            out.print(f"[yellow]{source}: excluded {sum(res['excluded'].values())} row(s): "
                      f"{detail}[/yellow]")


def _cell(res: dict, key: str, with_ci: bool) -> str:
    value = res.get(key)
    if value is None:
        return "–"
    if isinstance(value, int):
        return f"{value:,}"
    ci = (res.get("ci") or {}).get(key)
    text = f"{value:.3f}"
    if with_ci and ci and ci.get("low") is not None:
        text += f" [{ci['low']:.3f}, {ci['high']:.3f}]"
    return text


def _table(results: dict, columns: Sequence[tuple[str, str]], title: str) -> Table:
    # Intervals only where the terminal is wide enough; --json and the report always have them.
    with_ci = out.width >= 200
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False,
                  caption="95% bootstrap intervals: see --json or the report" if not with_ci
                  else None)
    table.add_column("file", overflow="fold", min_width=15)
    for _, header in columns:
        table.add_column(header, justify="right", no_wrap=True)
    for source, res in results.items():
        table.add_row(Path(source).name, *[_cell(res, key, with_ci) for key, _ in columns])
    return table


def _write_run(out_dir: Path | None, config: dict, section: dict) -> None:
    if out_dir is None:
        return
    from .report import render_report

    run = RunFolder(out_dir)
    run.write_run(config)
    metrics = {"title": f"confeval {config['command']}", "simulated": False,
               "sections": [section]}
    run.write_metrics(metrics)
    run.write_report(render_report(metrics, run.read_run()))
    err.print(f"run folder written: {out_dir}")


Files = Annotated[list[Path], typer.Argument(
    metavar="FILE...", help="Record files (.csv, .csv.gz, .tsv, .jsonl, .jsonl.gz, .parquet).",
    show_default=False)]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout.")]
BootOpt = Annotated[int, typer.Option("--bootstrap", min=0,
                                      help="Bootstrap resamples for 95% intervals (0: none).")]
SeedOpt = Annotated[int, typer.Option("--seed", help="Seed of every random step.")]
OutOpt = Annotated[Path | None, typer.Option("--out", help="Also write a run folder here "
                                                          "(metrics.json, report.html).")]
BaseUrlOpt = Annotated[list[str] | None, typer.Option(
    "--base-url", help="OpenAI-compatible endpoint; repeat to spread requests over several "
                       "servers of the same model.")]
ConcurrencyOpt = Annotated[int, typer.Option("--concurrency", min=1,
                                             help="Requests in flight per endpoint.")]
ApiKeyOpt = Annotated[str, typer.Option("--api-key-env", help="Environment variable holding "
                                                              "the API key.")]

_CONF_COLUMNS = [("n_used", "n"), ("accuracy", "acc"), ("ece", "ECE"), ("mce", "MCE"),
                 ("brier", "Brier"), ("auroc", "AUROC"), ("auarc", "AUARC"),
                 ("prr", "PRR"), ("rce", "RCE")]


@app.command()
def score(
    files: Files,
    confidence_col: Annotated[str, typer.Option("--confidence-col", "-c",
                                                help="Column with the confidence.")],
    correct_col: Annotated[str, typer.Option("--correct-col", "-y",
                                             help="Column with correctness (0/1 or [0, 1]).")],
    any_confidence: Annotated[bool, typer.Option(
        "--any-confidence", help="The confidence is any real-valued measure, not a "
                                 "probability: skip ECE/MCE/Brier, keep ranking metrics.")] = False,
    n_bins: Annotated[int, typer.Option("--n-bins", min=1, help="ECE bins (equal width).")] = 15,
    rce_bins: Annotated[int, typer.Option("--rce-bins", min=1,
                                          help="Rank-calibration bins (equal mass).")] = 20,
    bootstrap: BootOpt = 1000,
    seed: SeedOpt = 0,
    as_json: JsonOpt = False,
    out_dir: OutOpt = None,
) -> None:
    """Score a confidence column against correctness: ECE, MCE, Brier, AUROC, AUARC, PRR, RCE."""
    results = {}
    with _progress(len(files), "scoring", enabled=len(files) > 1 or bootstrap > 0) as step:
        for path in files:
            rs = _read(path)
            conf = rs.numeric([confidence_col], what="confidence",
                              lo=None if any_confidence else 0.0,
                              hi=None if any_confidence else 1.0)[:, 0]
            correct = rs.numeric([correct_col], lo=0.0, hi=1.0, what="correct")[:, 0]
            keep = rs.mask
            if keep.sum() < 2:
                raise UserError(f"{path}: fewer than two usable rows "
                                f"(excluded: {rs.excluded or 'none'})")
            res = evaluate_confidence(conf[keep], correct[keep], n_bins=n_bins,
                                      rce_bins=rce_bins, n_resamples=bootstrap, seed=seed,
                                      probability_scale=not any_confidence)
            results[str(path)] = {**rs.summary(), **res}
            step(f"scored {path.name}")
    _emit(results, as_json, lambda r: _table(r, _CONF_COLUMNS, "Confidence vs correctness"))
    _write_run(out_dir, {"command": "score", "files": [str(f) for f in files],
                         "confidence_col": confidence_col, "correct_col": correct_col,
                         "n_bins": n_bins, "rce_bins": rce_bins, "bootstrap": bootstrap,
                         "seed": seed},
               {"kind": "confidence", "title": "Confidence vs correctness",
                "name_header": "file", "results": results})


_AGREE_COLUMNS = [("n_used", "n"), ("pearson", "Pearson"), ("spearman", "Spearman"),
                  ("kendall", "Kendall"), ("accuracy", "exact"), ("within1", "±1"),
                  ("mae", "MAE"), ("bias", "bias"), ("top_prob_ece", "top-p ECE")]


@app.command()
def agreement(
    files: Files,
    pred_col: Annotated[str, typer.Option("--pred-col", help="Column with the judge's score.")],
    gt_col: Annotated[str, typer.Option("--gt-col", help="Column with the reference score.")],
    logprob_cols: Annotated[str | None, typer.Option(
        "--logprob-cols", help="Score-token log-probability columns, lowest score first "
                               "(comma list or glob, e.g. 's2_lp*').")] = None,
    prob_cols: Annotated[str | None, typer.Option(
        "--prob-cols", help="Score probability columns instead of log-probabilities.")] = None,
    min_score: Annotated[float, typer.Option("--min-score",
                                             help="Score of the first probability column.")] = 1,
    bootstrap: BootOpt = 1000,
    seed: SeedOpt = 0,
    as_json: JsonOpt = False,
    out_dir: OutOpt = None,
) -> None:
    """Agreement of a judge's scores with reference scores (correlations, accuracy, bias)."""
    if logprob_cols and prob_cols:
        raise UserError("give --logprob-cols or --prob-cols, not both")
    results = {}
    with _progress(len(files), "scoring", enabled=len(files) > 1 or bootstrap > 0) as step:
        for path in files:
            rs = _read(path)
            pred = rs.numeric([pred_col], what="pred_score")[:, 0]
            truth = rs.numeric([gt_col], what="gt_score")[:, 0]
            probs = None
            if logprob_cols:
                probs = np.exp(rs.numeric(logprob_cols, what="logprob", hi=0.0))
            elif prob_cols:
                probs = rs.numeric(prob_cols, what="prob", lo=0.0, hi=1.0)
            keep = rs.mask
            if keep.sum() < 2:
                raise UserError(f"{path}: fewer than two usable rows "
                                f"(excluded: {rs.excluded or 'none'})")
            if probs is not None:
                # Score-token probabilities rarely sum to 1 (mass on other tokens):
                # renormalise over the scale, as the judge-interval literature does.
                probs = probs[keep] / probs[keep].sum(axis=1, keepdims=True)
            levels = None if probs is None else min_score + np.arange(probs.shape[1])
            res = evaluate_agreement(pred[keep], truth[keep], probs, levels=levels,
                                     n_resamples=bootstrap, seed=seed)
            results[str(path)] = {**rs.summary(), **res}
            step(f"scored {path.name}")
    _emit(results, as_json, lambda r: _table(r, _AGREE_COLUMNS, "Judge vs reference scores"))
    _write_run(out_dir, {"command": "agreement", "files": [str(f) for f in files],
                         "pred_col": pred_col, "gt_col": gt_col, "bootstrap": bootstrap,
                         "seed": seed},
               {"kind": "agreement", "title": "Judge vs reference scores", "results": results})


@app.command()
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
    from .simulate import simulate as generate

    options: dict[str, Any] = {}
    if kind == "confidence" and step:
        options["step"] = step
    if kind == "mcq":
        options["n_options"] = n_options
    if kind == "scores":
        options["n_levels"] = n_levels
    try:
        frame = generate(kind, n, behaviour, seed=seed, **options)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    _write_table(frame, out_file)
    err.print(f"wrote {len(frame):,} simulated {kind} records to {out_file}")


@app.command()
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
    from .demo import live_model_available, run_demo

    started = time.perf_counter()
    runs_live = live and live_model_available() is None
    with _progress(17 + (live_items + 1 if runs_live else 0), "demo") as step:
        metrics = run_demo(out_dir, seed=seed, n=n, n_resamples=bootstrap, live=live,
                           live_items=live_items, progress=step)
    for section in metrics["sections"]:
        label = "  [SIMULATED]" if section.get("simulated") else "  [LIVE MODEL]"
        if section["kind"] in ("sets", "steps"):
            table = (_sets_table if section["kind"] == "sets" else _steps_table)(
                section["results"])
            table.title = section["title"] + label
        else:
            columns = _AGREE_COLUMNS if section["kind"] == "agreement" else _CONF_COLUMNS
            table = _table(section["results"], [("n", "n"), *columns[1:]],
                           section["title"] + label)
        table.columns[0].header = "judge"
        out.print(table)
    out.print(metrics["note"])
    out.print(f"report: {out_dir / RunFolder.REPORT}   ({time.perf_counter() - started:.1f} s)")


@app.command()
def report(
    run_dir: Annotated[Path, typer.Argument(help="A run folder with metrics.json.")],
    out_file: Annotated[Path | None, typer.Option("--out", help="Where to write the HTML "
                                                                "(default RUN_DIR/report.html).")]
    = None,
) -> None:
    """Render RUN_DIR/metrics.json into a self-contained HTML report."""
    from .report import render_report

    try:
        run = RunFolder(run_dir, create=False)
        metrics = run.read_metrics()
    except FileNotFoundError as exc:
        raise UserError(str(exc)) from None
    info = run.read_run() if run.file(RunFolder.RUN).is_file() else None
    page = render_report(metrics, info)
    target = out_file or run.file(RunFolder.REPORT)
    target.write_text(page, encoding="utf-8")
    out.print(f"report: {target}")


@app.command("run")
def run_command(
    suite: Annotated[str, typer.Argument(help="Suite to run live: sets, intervals, steps.")],
    out_dir: Annotated[Path, typer.Option("--out", help="Run folder (resumed if it exists).")],
    model: Annotated[str | None, typer.Option(
        "--model", help="openai:MODEL, hf:PATH, replay:RUN_DIR, or local (default: the "
                        "embedded SmolLM2-135M-Instruct).")] = None,
    data: Annotated[str | None, typer.Option(
        "--data", help="builtin:NAME or a file in the suite's input format (default: the "
                       "suite's built-in task).")] = None,
    n: Annotated[int | None, typer.Option("--n", min=1, help="Items to use.")] = None,
    seed: SeedOpt = 0,
    base_url: BaseUrlOpt = None,
    concurrency: ConcurrencyOpt = 8,
    api_key_env: ApiKeyOpt = "OPENAI_API_KEY",
    method: Annotated[str, typer.Option("--method", help="auto | score | top_logprobs: how "
                                                         "option (sets) or rating "
                                                         "(intervals) probabilities are "
                                                         "read.")] = "auto",
    idk: Annotated[bool, typer.Option("--idk", help="sets: add an \"I don't know\" option.")]
    = False,
    nota: Annotated[bool, typer.Option("--nota", help="sets: add \"None of the above\".")]
    = False,
    top_k: Annotated[int, typer.Option("--top-k", min=1, help="top_logprobs to ask for.")] = 20,
    consistency: Annotated[str, typer.Option(
        "--consistency", help="steps: when a judge's label contradicts its probability: "
                              "flag, mirror or exclude.")] = "flag",
    max_tokens: Annotated[int | None, typer.Option(
        "--max-tokens", min=1, help="steps, intervals: reply length limit (default 1024 for "
                                    "steps, 160 for intervals).")] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Neither read nor write the "
                                                              "response cache.")] = False,
    cache_path: Annotated[Path | None, typer.Option("--cache", help="Cache file (default "
                                                                    "$CONFEVAL_CACHE or "
                                                                    "~/.cache/confeval).")]
    = None,
    bootstrap: BootOpt = 1000,
) -> None:
    """Run a suite end to end: prompts -> model -> records.jsonl -> metrics.json + report.html."""
    from .backends import BackendError, ResponseCache, get_backend
    from .runner import RunMismatchError, run_suite
    from .suites import get_suite

    try:
        chosen = get_suite(suite)
        backend = get_backend(model, base_urls=base_url, concurrency=concurrency,
                              api_key_env=api_key_env)
        items = chosen.load_items(data or chosen.default_data, n, seed)
    except (BackendError, ValueError) as exc:
        raise UserError(str(exc)) from None
    options = {"method": method, "idk": idk, "nota": nota, "top_k": top_k, "seed": seed,
               "bootstrap": bootstrap, "model_name": model or "local",
               "consistency": consistency, "max_tokens": max_tokens}
    config = {"command": "run", "suite": suite, "model": model or "local",
              "backend": backend.identity(), "data": data or chosen.default_data, "n": n,
              "seed": seed, "method": method, "idk": idk, "nota": nota, "top_k": top_k}
    cache = None if no_cache else ResponseCache(cache_path)
    started = time.perf_counter()
    try:
        with _progress(len(items), f"{suite}: {model or 'local'}") as step:
            result = run_suite(chosen, backend, items, out_dir, config=config, options=options,
                               cache=cache, progress=step)
    except (BackendError, RunMismatchError) as exc:
        raise UserError(str(exc)) from None
    elapsed = time.perf_counter() - started
    for section in result.metrics["sections"]:
        if section["results"] and section["kind"] == "sets":
            out.print(_sets_table(section["results"]))
        elif section["results"] and section["kind"] == "intervals":
            out.print(_intervals_table(section["results"]))
        elif section["results"] and section["kind"] == "steps":
            out.print(_steps_table(section["results"]))
        elif section["results"]:
            out.print(_table(section["results"], [("n", "n"), *_CONF_COLUMNS[1:]],
                             section["title"]))
    out.print(f"{result.n_items} items: {result.n_new} new, {result.n_resumed} resumed, "
              f"{len(result.failures)} failed; {result.model_calls} model call(s); "
              f"{elapsed:.1f} s. Report: {out_dir / RunFolder.REPORT}")
    if result.failures:
        for item_id, why in result.failures[:5]:
            sys.stderr.write(f"failed {item_id}: {why}\n")
        raise UserError(f"{len(result.failures)} item(s) failed; run the same command again "
                        "to retry them")


@app.command()
def cache(
    action: Annotated[str, typer.Argument(help="info | clear")],
    cache_path: Annotated[Path | None, typer.Option("--cache", help="Cache file.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Show or clear the response cache."""
    from .backends import ResponseCache

    if action not in ("info", "clear"):
        raise UserError(f"unknown cache action {action!r}; use info or clear")
    store = ResponseCache(cache_path)
    if action == "clear":
        removed = store.clear()
        out.print(f"removed {removed} cached response(s) from {store.path}")
        return
    info = store.info()
    if as_json:
        sys.stdout.write(dumps(info) + "\n")
        return
    out.print(f"{info['path']}: {info['entries']} response(s), {info['bytes'] / 1e6:.1f} MB")
    for name, count in info["by_backend"].items():
        out.print(f"  {name}: {count}")


sets_app = typer.Typer(help="Conformal prediction sets for multiple-choice answers.",
                       no_args_is_help=True, rich_markup_mode=None)
app.add_typer(sets_app, name="sets")


def _parse_seeds(text: str | None) -> list[int] | None:
    """'1-10' or '1,2,5' or '1-3,7' -> list of ints."""
    if not text:
        return None
    seeds: list[int] = []
    try:
        for part in text.split(","):
            lo, _, hi = part.strip().partition("-")
            seeds.extend(range(int(lo), int(hi) + 1) if hi else [int(lo)])
    except ValueError:
        raise UserError(f"--seeds {text!r}: use a range like 1-10 or a list like 1,2,5") from None
    return seeds


_SETS_COLUMNS = ("n_test", "accuracy", "ece")


def _sets_table(results: dict) -> Table:
    """One row per (file, score): long format, so it fits a narrow terminal."""
    table = Table(title="Conformal prediction sets", title_justify="left",
                  box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("file", overflow="fold", min_width=15)
    for header in ("n test", "acc", "ECE", "score", "coverage", "size", "UAcc"):
        table.add_column(header, justify="right", no_wrap=True)

    def num(v):
        if isinstance(v, dict):
            v = v.get("mean")
        return "–" if v is None else (f"{v:,}" if isinstance(v, int) else f"{v:.3f}")

    for source, res in results.items():
        for i, (name, m) in enumerate(res["scores"].items()):
            lead = ([Path(source).name, num(res["n_test"]), num(res["accuracy"]),
                     num(res["ece"])] if i == 0 else ["", "", "", ""])
            table.add_row(*lead, name, num(m["coverage"]), num(m["set_size"]), num(m["uacc"]))
    return table


@sets_app.command("score")
def sets_score(
    files: Files,
    label_col: Annotated[str, typer.Option("--label-col", help="Gold option (a letter, or "
                                                               "the column suffix).")]
    = "answer",
    logit_cols: Annotated[str, typer.Option("--logit-cols", help="Option columns (glob or "
                                                                 "comma list); the part after "
                                                                 "the last '_' names the "
                                                                 "option.")] = "logit_*",
    input_kind: Annotated[str, typer.Option("--input", help="logits | logprobs | probs")]
    = "logits",
    alpha: Annotated[float, typer.Option("--alpha", min=0.0, max=1.0,
                                         help="Miscoverage: sets cover with prob >= 1-alpha.")]
    = 0.1,
    split_seed: Annotated[int, typer.Option("--split-seed", help="Seed of the 50/50 split.")]
    = 42,
    seeds: Annotated[str | None, typer.Option("--seeds", help="Repeat over splits, e.g. 1-10; "
                                                              "numbers become {mean, std}.")]
    = None,
    scores: Annotated[str, typer.Option("--scores", help="Comma list of lac, aps, "
                                                         "aps_randomized, raps, "
                                                         "raps_randomized, margin.")]
    = "lac,aps,raps,margin",
    protocol: Annotated[str, typer.Option("--protocol", help="exact (default) or vlm-bench "
                                                             "(the published benchmark's "
                                                             "quantile and ECE).")] = "exact",
    group_col: Annotated[str | None, typer.Option("--group-col", help="Mondrian: calibrate per "
                                                                      "group of this column.")]
    = None,
    precision: Annotated[str, typer.Option("--precision", help="Softmax precision: float32 "
                                                               "(as published) or float64.")]
    = "float32",
    lam: Annotated[float, typer.Option("--raps-lambda", help="RAPS rank penalty.")] = 0.01,
    k_reg: Annotated[int, typer.Option("--raps-k", help="RAPS free ranks.")] = 1,
    allow_empty: Annotated[bool, typer.Option("--allow-empty", help="Keep empty sets (default: "
                                                                    "an empty set gets the top "
                                                                    "label).")] = False,
    as_json: JsonOpt = False,
    out_dir: OutOpt = None,
) -> None:
    """Prediction sets with a coverage guarantee from option logits/log-probs/probabilities."""
    from ._validation import index_in
    from .conformal import SCORES, to_probabilities
    from .suites.sets_scoring import PROTOCOLS, score_sets

    chosen = [s.strip() for s in scores.split(",") if s.strip()]
    bad = [s for s in chosen if s not in SCORES]
    if bad:
        raise UserError(f"unknown score(s) {bad}; choose from {', '.join(SCORES)}")
    if protocol not in PROTOCOLS:
        raise UserError(f"unknown protocol {protocol!r}; choose from {', '.join(PROTOCOLS)}")
    if input_kind not in ("logits", "logprobs", "probs"):
        raise UserError("--input must be logits, logprobs or probs")
    if precision not in ("float32", "float64"):
        raise UserError("--precision must be float32 or float64")
    seed_list = _parse_seeds(seeds)
    results = {}
    with _progress(len(files), "sets", enabled=len(files) > 1) as step:
        for path in files:
            rs = _read(path)
            cols = rs.columns(logit_cols, what="option column")
            letters = [str(c).rsplit("_", 1)[-1] for c in cols]
            values = rs.numeric(cols, what="option_value", allow_missing=True,
                                lo=0.0 if input_kind == "probs" else None,
                                hi=0.0 if input_kind == "logprobs" else None,
                                allow_inf=input_kind != "probs")
            values = np.where(np.isposinf(values), np.nan, values)
            rs.exclude(np.isposinf(values).any(axis=1), "non_finite_option_value")
            rs.exclude((np.isfinite(values).sum(axis=1) < 2) & rs.mask, "fewer_than_2_options")
            gold = index_in(np.array(letters), rs.labels(label_col, allowed=letters,
                                                         what="label"))
            gold_value = values[np.arange(gold.size), np.maximum(gold, 0)]
            rs.exclude(~np.isfinite(gold_value), "gold_option_missing")
            keep = rs.mask
            y, vals = gold[keep], values[keep]
            groups = None
            if group_col:
                groups = rs.frame.loc[rs.mask, rs.columns([group_col])[0]].astype(str).to_numpy()
            probs = to_probabilities(vals, input_kind, np.dtype(precision))
            res = score_sets(probs, y, alpha=alpha, split_seed=split_seed, seeds=seed_list,
                             scores=chosen, protocol=protocol, groups=groups, lam=lam,
                             k_reg=k_reg, allow_empty=allow_empty)
            results[str(path)] = {**rs.summary(), "options": letters, **res}
            step(f"scored {path.name}")
    _emit(results, as_json, _sets_table)
    _write_run(out_dir, {"command": "sets score", "files": [str(f) for f in files],
                         "alpha": alpha, "split_seed": split_seed, "seeds": seed_list,
                         "scores": chosen, "protocol": protocol, "group_col": group_col},
               {"kind": "sets", "title": "Conformal prediction sets", "results": results})


intervals_app = typer.Typer(help="Conformal intervals and label sets for judge scores.",
                            no_args_is_help=True, rich_markup_mode=None)
app.add_typer(intervals_app, name="intervals")


def _intervals_table(results: dict) -> Table:
    table = Table(title="Conformal intervals for judge scores (mean over seeds)",
                  title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("file", overflow="fold", min_width=15)
    for header in ("method", "cov raw", "width raw", "cov adj", "width adj / size"):
        table.add_column(header, justify="right", no_wrap=True)
    def v(m: dict, key: str) -> str:
        return f"{m[key]['mean']:.3f}" if key in m else "–"

    for source, res in results.items():
        for i, (name, m) in enumerate(res["methods"].items()):
            interval = "width_adj" in m  # an interval method, else a rating-set method
            cov = v(m, "coverage_raw" if interval else "coverage")
            table.add_row(Path(source).name if i == 0 else "", name, cov, v(m, "width_raw"),
                          v(m, "coverage_adj") if interval else cov,
                          v(m, "width_adj" if interval else "set_size"))
    return table


def _join(rs: RecordSet, spec: str) -> RecordSet:
    """Attach the columns of another record file by a key column ('FILE:KEY'), or all of
    them renamed with a prefix ('FILE:KEY:PREFIX', e.g. a second judge's log-probs)."""
    prefix = ""
    if spec.count(":") >= 2:
        path, key, prefix = spec.rsplit(":", 2)
    else:
        path, _, key = spec.rpartition(":")
    if not path or not key:
        raise UserError(f"--join {spec!r}: use FILE:KEY or FILE:KEY:PREFIX")
    other = _read(Path(path))
    for side, table in (("records", rs), (path, other)):
        if key not in table.frame.columns:
            raise UserError(f"--join: key column {key!r} not in {side}")
    extra = other.frame.drop(columns=["_row"]).drop_duplicates(subset=[key])
    if prefix:
        extra = extra.rename(columns={c: f"{prefix}{c}" for c in extra.columns if c != key})
    new_cols = [c for c in extra.columns if c == key or c not in rs.frame.columns]
    merged = rs.frame.merge(extra[new_cols], on=key, how="left", validate="many_to_one")
    joined = RecordSet(merged, rs.source, rs.problems)
    joined.exclude(~rs.mask, "excluded_before_join")  # keep earlier exclusions
    return joined


def _pooled(parts: dict) -> dict:
    """Every method's mean metrics over the per-group runs, weighted by group size: the
    overall figure of a model-per-group (the VLM-judge paper's "Mondrian") calibration."""
    sizes = {g: r["n"] for g, r in parts.items()}
    total = sum(sizes.values())
    out: dict = {}
    for g, r in parts.items():
        for name, m in r["methods"].items():
            for key, v in m.items():
                if isinstance(v, dict) and "mean" in v:
                    slot = out.setdefault(name, {})
                    slot[key] = slot.get(key, 0.0) + v["mean"] * sizes[g] / total
    return out


MIN_GROUP_ITEMS = 20
"""--separately: a group needs this many items for its own calibration/test splits."""


def _judge_columns(rs: RecordSet, spec: str) -> tuple[list[str], int]:
    """All log-prob columns and K, the ratings per judge: each comma-separated pattern is one
    judge (a single pattern may match the K columns of one judge)."""
    groups = [rs.columns(p, what="logprob column") for p in spec.split(",") if p.strip()]
    if not groups:
        raise UserError("--logprob-cols is empty")
    k = len(groups[0])
    if any(len(g) != k for g in groups):
        raise UserError("--logprob-cols: every judge needs the same number of rating columns; "
                        f"got {[len(g) for g in groups]}")
    return [c for g in groups for c in g], k


@intervals_app.command("score")
def intervals_score(
    files: Files,
    logprob_cols: Annotated[str, typer.Option(
        "--logprob-cols", help="Rating-token log-prob columns, lowest rating first. Several "
                               "comma-separated patterns (one per judge, K columns each) fuse "
                               "the judges' features.")] = "s2_lp*",
    label_col: Annotated[str, typer.Option("--label-col", help="Human score.")] = "gt_score",
    pred_col: Annotated[str | None, typer.Option("--pred-col", help="The judge's parsed score "
                                                                    "(adds point metrics).")]
    = None,
    methods: Annotated[str, typer.Option(
        "--methods", help="all, or a comma list: naive, cqr, asym_cqr, chr, lvd, boosted_cqr, "
                          "boosted_lcp, r2ccp, ordinal_aps (intervals); lac, aps, "
                          "raps_randomized, ... (rating sets).")] = "all",
    seeds: Annotated[str, typer.Option("--seeds", help="Splits, e.g. 1-10.")] = "1-10",
    alpha: Annotated[float, typer.Option("--alpha", min=0.0, max=1.0)] = 0.1,
    min_score: Annotated[int, typer.Option("--min-score", help="Rating of the first "
                                                               "column.")] = 1,
    floor: Annotated[float, typer.Option("--floor", help="Log-prob for missing (NaN) rating "
                                                         "tokens.")] = -11.51,
    base: Annotated[str | None, typer.Option(
        "--base", help="Override every method's base model: gbr, hgb, linear or rf (default: "
                       "each method's own, as documented).")] = None,
    paper_protocol: Annotated[bool, typer.Option(
        "--paper-protocol", help="Run CHR and the boosted methods as the VLM-judge paper did "
                                 "(uncalibrated CHR; fit and calibrate on the same rows): "
                                 "reproduces its tables, loses the guarantee.")] = False,
    cal_fraction: Annotated[float, typer.Option(
        "--cal-fraction", min=0.0, max=1.0, help="Calibration share of each split (the "
                                                 "paper: 0.5).")] = 0.5,
    seed_sweep: Annotated[str | None, typer.Option(
        "--seed-sweep", help="e.g. 5,10,20: also report every method over the first k "
                             "seeds (needs that many --seeds).")] = None,
    separately: Annotated[bool, typer.Option(
        "--separately", help="Run the whole analysis on each group of --group-col on its own "
                             "(the paper's per-task Table 3).")] = False,
    group_col: Annotated[str | None, typer.Option("--group-col", help="Break every metric down "
                                                                      "by this column.")] = None,
    mondrian: Annotated[bool, typer.Option("--mondrian", help="Calibrate per group of "
                                                              "--group-col.")] = False,
    group_map: Annotated[str | None, typer.Option(
        "--group-map", help="Map group values first: 'paper-difficulty' (the VLM-judge "
                            "paper's easy/medium/hard task groups).")] = None,
    join: Annotated[list[str] | None, typer.Option(
        "--join", help="FILE:KEY — attach the columns of FILE to the records by KEY "
                       "(e.g. error_analysis.csv:sample_id for the task category).")] = None,
    as_json: JsonOpt = False,
    out_dir: OutOpt = None,
) -> None:
    """Conformal intervals (the VLM-judge paper's nine methods) and rating sets for judge
    scores, with coverage, width and diagnostics over seeds."""
    import pandas as pd

    from .suites.intervals_scoring import (
        DEFAULT_METHODS,
        PAPER_DIFFICULTY,
        PAPER_PROTOCOL,
        score_intervals,
    )

    chosen = list(DEFAULT_METHODS) if methods == "all" else [
        m.strip() for m in methods.split(",") if m.strip()]
    seed_list = _parse_seeds(seeds) or [1]
    if mondrian and not group_col:
        raise UserError("--mondrian needs --group-col")
    if separately and not group_col:
        raise UserError("--separately needs --group-col")
    maps = {"paper-difficulty": PAPER_DIFFICULTY}
    if group_map is not None and group_map not in maps:
        raise UserError(f"unknown --group-map {group_map!r}; choose from {', '.join(maps)}")
    results = {}
    with _progress(len(files), "intervals", enabled=True) as step:
        for path in files:
            rs = _read(path)
            for spec in join or []:
                rs = _join(rs, spec)
            cols, k = _judge_columns(rs, logprob_cols)
            levels = np.arange(min_score, min_score + k, dtype=float)
            lp = rs.numeric(cols, what="logprob", hi=0.0, allow_missing=True)
            truth = rs.labels(label_col, allowed=[int(v) for v in levels], what="gt_score")
            keep = rs.mask
            features = lp[keep]
            n_floored = int(np.isnan(features).sum())
            features = np.where(np.isnan(features), floor, features)
            groups = None
            if group_col:
                column = rs.columns([group_col], what="group column")[0]
                raw_groups = rs.frame.loc[keep, column]
                if group_map:
                    raw_groups = raw_groups.map(maps[group_map])
                groups = raw_groups.fillna("(none)").astype(str).to_numpy()
            parsed = None
            if pred_col:
                # an unparseable judge score (text, -1) only drops the item from point metrics
                parsed = pd.to_numeric(rs.frame.loc[keep, rs.columns([pred_col])[0]],
                                       errors="coerce").to_numpy(np.float64)
            options = PAPER_PROTOCOL if paper_protocol else None
            y_keep = truth[keep].astype(float)
            sweep = _parse_seeds(seed_sweep) if seed_sweep else None

            def run(rows, g, path=path, options=options, y_keep=y_keep, parsed=parsed,
                    features=features, levels=levels, sweep=sweep):
                try:
                    return score_intervals(
                        features[rows], y_keep[rows],
                        parsed=None if parsed is None else parsed[rows], levels=levels,
                        alpha=alpha, seeds=seed_list, methods=chosen, base=base,
                        groups=None if g is None else g[rows], mondrian=mondrian,
                        method_options=options, cal_fraction=cal_fraction,
                        seed_sweep=sweep)
                except ValueError as exc:
                    raise UserError(f"{path}: {exc}") from None

            everything = np.ones(y_keep.size, dtype=bool)
            res = run(everything, groups)
            if separately:
                sizes = dict(zip(*np.unique(groups, return_counts=True)))
                res["separately"] = {str(v): run(groups == v, None)
                                     for v, k in sizes.items() if k >= MIN_GROUP_ITEMS}
                res["separately_pooled"] = _pooled(res["separately"])
                small = {str(v): int(k) for v, k in sizes.items() if k < MIN_GROUP_ITEMS}
                if small:
                    res["separately_skipped"] = {
                        "reason": f"fewer than {MIN_GROUP_ITEMS} items", "groups": small}
            results[str(path)] = {**rs.summary(), "floored_values": n_floored,
                                  "n_judges": len(cols) // k, **res}
            step(f"scored {path.name}")
    _emit(results, as_json, _intervals_table)
    _write_run(out_dir, {"command": "intervals score", "files": [str(f) for f in files],
                         "methods": chosen, "seeds": seed_list, "alpha": alpha, "base": base,
                         "paper_protocol": paper_protocol, "separately": separately,
                         "cal_fraction": cal_fraction, "seed_sweep": seed_sweep,
                         "group_col": group_col, "mondrian": mondrian, "join": join},
               {"kind": "intervals", "title": "Conformal intervals for judge scores",
                "results": results})


@app.command()
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
    level) for `confeval run steps`; rewrites are validated, failures recorded."""
    import asyncio

    import pandas as pd

    from .backends import BackendError, CachedBackend, ResponseCache, get_backend
    from .perturb import IMAGE_PERTURBATIONS, TEXT_KINDS, perturb_images, perturb_text
    from .suites.steps import load_step_items

    if kind not in (*TEXT_KINDS, "image"):
        raise UserError(f"--kind must be lexical, syntactic or image, got {kind!r}")
    if image_kind is not None and image_kind not in IMAGE_PERTURBATIONS:
        raise UserError(f"--image-kind must be one of {', '.join(IMAGE_PERTURBATIONS)}")
    items = load_step_items(data, n, seed)
    if kind == "image":
        target = images_dir or out_file.with_suffix("").with_name(out_file.stem + "-images")
        perturbed, summary = perturb_images(items, target, seed=seed, kind=image_kind)
    else:
        try:
            backend = get_backend(model, base_urls=base_url, concurrency=concurrency,
                                  api_key_env=api_key_env)
        except (BackendError, ValueError) as exc:
            raise UserError(str(exc)) from None
        if not no_cache:
            backend = CachedBackend(backend, ResponseCache())
        try:
            perturbed, summary = asyncio.run(perturb_text(items, kind, backend, seed=seed,
                                                          retries=retries,
                                                          concurrency=concurrency))
        except BackendError as exc:
            raise UserError(str(exc)) from None
    originals = ([{k: v for k, v in it.items() if k not in ("problem_id",)} for it in items]
                 if with_original else [])
    if kind == "image" and with_original:  # only the problems that were perturbed
        done = {it["item_id"] for it in perturbed}
        originals = [it for it in originals if it["item_id"] in done]
    frame = pd.DataFrame([{k: v for k, v in it.items() if k not in ("run_id",)}
                          for it in [*originals, *perturbed]])
    if not str(out_file).lower().endswith((".jsonl", ".jsonl.gz")):
        raise UserError(f"--out {out_file}: use a .jsonl name (lists stay lists)")
    _write_table(frame, out_file)
    summary.update(kind=kind, out=str(out_file), seed=seed, originals_written=len(originals))
    if as_json:
        sys.stdout.write(dumps(summary) + "\n")
    else:
        out.print(" ".join(f"{k}={v}" for k, v in summary.items()))


steps_app = typer.Typer(help="Confidence of process judges (ConfProBench: CRS, CSS, CCS).",
                        no_args_is_help=True)
app.add_typer(steps_app, name="steps")


@steps_app.command("score")
def steps_score(
    files: Files,
    p_col: Annotated[str, typer.Option("--p-col", help="Judge's P(step correct).")]
    = "p_correct",
    label_col: Annotated[str, typer.Option("--label-col", help="1 correct, 0 incorrect.")]
    = "label",
    group_col: Annotated[list[str] | None, typer.Option(
        "--group-col", help="Break every metric down by this column (repeatable), e.g. "
                            "difficulty, subject, modality.")] = None,
    epsilon: Annotated[float, typer.Option("--epsilon", help="CRS: minor-change threshold.")]
    = 0.01,
    delta: Annotated[float, typer.Option("--delta", help="CRS: significant-change "
                                                         "threshold.")] = 0.2,
    crs_scale: Annotated[float, typer.Option("--crs-scale")] = 5.0,
    crs_weights: Annotated[str, typer.Option("--crs-weights", help="w1,w2,w3.")]
    = "0.4,0.4,0.2",
    n_bins: Annotated[int, typer.Option("--n-bins", min=1, help="CCS: ECE bins.")] = 10,
    ccs_scale: Annotated[float, typer.Option("--ccs-scale")] = 5.0,
    bootstrap: Annotated[int, typer.Option("--bootstrap", min=0, help="Item resamples for the "
                                                                      "95% intervals (0: "
                                                                      "none).")] = 1000,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    as_json: JsonOpt = False,
    out_dir: OutOpt = None,
) -> None:
    """CRS (robustness to perturbations), CSS (sensitivity to each error type), CCS
    (calibration), macro F1 and their average from step records."""
    from .suites.steps_scoring import StepsConfig, score_steps

    try:
        weights = tuple(float(w) for w in crs_weights.split(","))
    except ValueError:
        weights = ()
    if len(weights) != 3:
        raise UserError(f"--crs-weights {crs_weights!r}: give three numbers, e.g. 0.4,0.4,0.2")
    config = StepsConfig(epsilon=epsilon, delta=delta, crs_scale=crs_scale,
                         weights=weights, n_bins=n_bins, ccs_scale=ccs_scale)
    results = {}
    for path in files:
        rs = _read(path)
        frame = _step_frame(rs, p_col, label_col)
        try:
            res = score_steps(frame, config=config, group_cols=group_col or (),
                              n_resamples=bootstrap, seed=seed)
        except ValueError as exc:
            raise UserError(f"{path}: {exc}") from None
        summary = rs.summary()
        results[str(path)] = {**summary, "invalid_rows": int(summary["n_read"]
                                                              - summary["n_used"]), **res}
    _emit(results, as_json, _steps_table)
    _write_run(out_dir, {"command": "steps score", "files": [str(f) for f in files],
                         "config": dataclasses.asdict(config),
                         "group_col": group_col, "bootstrap": bootstrap, "seed": seed},
               {"kind": "steps", "title": "Process-judge step confidence (ConfProBench)",
                "results": results})


@steps_app.command("parse")
def steps_parse(
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
    import pandas as pd

    from .parse.steps import CONSISTENCY_POLICIES
    from .suites.steps import verdict_records

    if consistency not in CONSISTENCY_POLICIES:
        raise UserError(f"--consistency must be one of {', '.join(CONSISTENCY_POLICIES)}")
    rs = _read(raw)
    frame = rs.frame
    key = id_col or ("problem_id" if "problem_id" in frame.columns else "item_id")
    rs.columns([key, "raw_output", "labels"], what="column")
    rows: list[dict] = []
    for record in frame.to_dict(orient="records"):
        labels = _json_list(record["labels"], "labels", record["_row"])
        types = (_json_list(record["error_types"], "error_types", record["_row"])
                 if _present(record.get("error_types")) else [""] * len(labels))
        n = record.get("n_steps")
        if _present(n) and int(n) != len(labels):
            raise UserError(f"{raw}: row {record['_row']}: n_steps {n} but {len(labels)} "
                            "labels")
        item = {k: v for k, v in record.items()
                if k not in ("_row", "raw_output", "labels", "error_types", "n_steps", "steps",
                             "item_id", "problem_id", "text") and not isinstance(v, list)}
        item.update(item_id=str(record[key]), labels=[int(x) for x in labels],
                    error_types=["" if t is None else str(t) for t in types],
                    steps=[None] * len(labels),
                    variant=str(record["variant"]).strip() if _present(record.get("variant"))
                    and str(record["variant"]).strip() else "original")
        raw_text = record["raw_output"] if isinstance(record["raw_output"], str) else None
        rows.extend(verdict_records(item, raw_text, consistency=consistency))
    steps = pd.DataFrame(rows)
    steps["flags"] = steps["flags"].map(lambda f: ";".join(f))
    _write_table(steps, out_path)
    reasons = steps.loc[steps.status != "ok", "reason"].str.split(":").str[0].value_counts()
    flags = pd.Series([f.split(":")[0] for fl in steps["flags"] for f in fl.split(";") if f])
    summary = {"source": str(raw), "replies": len(frame), "steps": len(steps),
               "parsed": int((steps.status == "ok").sum()),
               "unparseable": {str(k): int(v) for k, v in reasons.items()},
               "flags": {str(k): int(v) for k, v in flags.value_counts().items()},
               "out": str(out_path), "consistency": consistency}
    if as_json:
        sys.stdout.write(dumps(summary) + "\n")
    else:
        out.print(f"{summary['replies']} replies -> {summary['steps']} steps: "
                  f"{summary['parsed']} parsed, "
                  f"{summary['steps'] - summary['parsed']} unparseable "
                  f"{summary['unparseable'] or ''}; flags {summary['flags'] or 'none'}; "
                  f"written to {out_path}")


def _present(value: Any) -> bool:
    return value is not None and not (isinstance(value, float) and np.isnan(value))


def _json_list(value: Any, what: str, row: int) -> list:
    import json

    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise UserError(f"row {row}: {what} is not a JSON list") from None
    if not isinstance(value, list):
        raise UserError(f"row {row}: {what} must be a list")
    return value


def _write_table(frame, path: Path) -> None:
    """A record table as JSONL, CSV or Parquet (optionally gzipped), by the file name."""
    name = path.name.lower()
    if not name.endswith((".jsonl", ".jsonl.gz", ".csv", ".csv.gz", ".parquet")):
        raise UserError(f"{path}: use a .jsonl, .jsonl.gz, .csv, .csv.gz or .parquet name")
    path.parent.mkdir(parents=True, exist_ok=True)
    if name.endswith((".jsonl", ".jsonl.gz")):
        frame.to_json(path, orient="records", lines=True, force_ascii=False,
                      compression="gzip" if name.endswith(".gz") else None)
    elif name.endswith((".csv", ".csv.gz")):
        frame.to_csv(path, index=False)
    else:
        frame.to_parquet(path, index=False)


@steps_app.command("consistency")
def steps_consistency(
    pair: Annotated[list[str], typer.Option(
        "--pair", help="JUDGE=RECORDS_A,RECORDS_B: one judge's step records on the dataset "
                       "perturbed by generator A and by generator B (repeat, >= 3 judges).")],
    as_json: JsonOpt = False,
    out_dir: OutOpt = None,
) -> None:
    """Correlation across judges of CRS, CSS and CCS between two perturbation generators
    (ConfProBench Appendix H): do the generators lead to the same conclusions?"""
    from .suites.steps_scoring import generator_consistency, score_steps

    first, second = {}, {}
    for spec in pair:
        judge, sep, files = spec.partition("=")
        paths = files.split(",")
        if not sep or len(paths) != 2 or not judge:
            raise UserError(f"--pair {spec!r}: use JUDGE=RECORDS_A,RECORDS_B")
        for target, path in zip((first, second), paths):
            frame = _step_frame(_read(Path(path)), "p_correct", "label")
            try:
                target[judge] = score_steps(frame, n_resamples=0)
            except ValueError as exc:
                raise UserError(f"{path}: {exc}") from None
    try:
        result = generator_consistency(first, second)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    _write_run(out_dir, {"command": "steps consistency", "pairs": pair},
               {"kind": "steps_consistency",
                "title": "Do two perturbation generators rank process judges alike?",
                "results": {"generators A vs B": result}})
    if as_json:
        sys.stdout.write(dumps(result) + "\n")
        return
    table = Table(title="Agreement of two perturbation generators across judges",
                  title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    for col in ("metric", "Pearson", "Spearman", "judges"):
        table.add_column(col, justify="right" if col != "metric" else "left")
    for m in ("crs", "css", "ccs"):
        r = result[m]
        table.add_row(m, *(f"{r[k]:.3f}" if r[k] is not None else "–"
                           for k in ("pearson", "spearman")), str(r["n_judges"]))
    out.print(table)


def _step_frame(rs: RecordSet, p_col: str, label_col: str):
    """Validated step rows (invalid ones excluded and counted in ``rs``) as the frame
    :func:`confeval.suites.steps_scoring.score_steps` takes."""
    rs.columns(["item_id", "step", label_col], what="column")
    p = rs.numeric(p_col, lo=0.0, hi=1.0, what="p_correct")[:, 0]
    step = rs.numeric("step", lo=0.0, what="step")[:, 0]
    rs.exclude(np.isfinite(step) & (np.mod(step, 1) != 0), "non_integer_step")
    labels = rs.labels(label_col, allowed=["0", "1"], what="label")
    keep = rs.mask
    frame = rs.frame.loc[keep].copy()
    frame["p_correct"] = p[keep]
    frame["step"] = step[keep].astype(np.int64)
    frame["label"] = labels[keep].astype(np.int64)
    variant = frame["variant"] if "variant" in frame.columns else "original"
    frame["variant"] = _variant_text(variant, len(frame), frame.index)
    if "error_type" not in frame.columns:
        frame["error_type"] = ""
    return frame


def _variant_text(values, n: int, index):
    """A variant column as stripped text, ``original`` where empty or missing."""
    import pandas as pd

    series = pd.Series(values, index=index) if not isinstance(values, pd.Series) else values
    text = series.fillna("original").astype(str).str.strip()
    return text.where(text != "", "original")


def _steps_table(results: dict) -> Table:
    """Metrics as rows, files as columns (value and 95% item-bootstrap interval)."""
    table = Table(title="Process-judge confidence (fractions)", title_justify="left",
                  box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("metric")
    for source in results:
        table.add_column(Path(source).name, justify="right", overflow="fold")
    keys = ("crs", "ccr", "accm", "sccr", "css", "ccs", "ece", "delta_ece", "avg", "macro_f1")
    for key in keys:
        row = []
        for res in results.values():
            value, ci = res.get(key), res.get("ci", {}).get(key)
            cell = "–" if value is None else f"{value:.4f}"
            if value is not None and ci:
                cell += f" [{ci['low']:.3f}, {ci['high']:.3f}]"
            row.append(cell)
        table.add_row(key, *row)
    variants = sorted({v for res in results.values() for v in res.get("by_perturbation", {})})
    for v in variants:
        table.add_row(f"crs: {v}", *[
            f"{res['by_perturbation'][v]['crs']:.4f} ({res['by_perturbation'][v]['pairs']} "
            "pairs)" if v in res.get("by_perturbation", {}) else "–"
            for res in results.values()])
    table.add_row("steps / pairs / unpaired", *[
        f"{res['n_original_rows']} / {res['pairs']} / {res['unpaired_rows']}"
        for res in results.values()])
    return table


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: run the app; turn input errors into one line on stderr and exit code 2.

    Usage errors (unknown option, missing argument) are reported by typer itself, also with
    exit code 2.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    try:
        app(args=args, prog_name="confeval")
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except (UserError, RecordsError, ValueError, FileNotFoundError, OSError,
            RuntimeError) as exc:
        if debug:
            raise
        sys.stderr.write(f"error: {exc}\n")  # one line, never wrapped
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
