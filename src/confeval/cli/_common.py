"""What every command module shares: consoles, the one-line user error, progress bars, JSON and
table output, run folders, the shared options, and the live-run driver every ``<suite> run``
calls. Nothing here computes a metric: the library does."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

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

from ..records import RecordSet
from ..runs import RunFolder, check_output_folder, dumps, file_sha256
from ..suites.base import MAX_BOOTSTRAP

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)

TABLES: dict[str, Callable[[dict], Table]] = {}
"""Section kind -> terminal table of its results (command modules register theirs)."""


class UserError(Exception):
    """An error caused by the user's input; shown as one line, exit code 2."""


def group(help_text: str) -> typer.Typer:
    """A command group (``confeval sets ...``) with the package's conventions."""
    return typer.Typer(help=help_text, no_args_is_help=True, rich_markup_mode=None)


class _RateColumn(ProgressColumn):
    """Items per second."""

    def render(self, task) -> Text:
        speed = task.finished_speed or task.speed
        return Text("" if speed is None else f"{speed:.1f}/s")


@contextmanager
def progress(total: int, what: str, enabled: bool = True):
    """A progress bar on stderr (stdout stays clean for --json); a no-op when disabled or when
    stderr is not a terminal (a redirected log would get the bar's redraws, and an error
    would no longer be one line)."""
    if not enabled or not err.is_terminal:
        yield _Step(None, None, what)
        return
    columns = (SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
               MofNCompleteColumn(), _RateColumn(), TimeElapsedColumn(), TextColumn("ETA"),
               TimeRemainingColumn())
    with Progress(*columns, console=err, transient=True) as bar:
        yield _Step(bar, bar.add_task(what, total=total), what)


class _Step:
    """Advance a progress bar by one (``step(msg)``), or only say where a long step is
    (``step.note(msg)``, e.g. the resample block of a bootstrap)."""

    def __init__(self, bar, task, what: str) -> None:
        self.bar, self.task, self.what = bar, task, what

    def __call__(self, msg: str | None = None) -> None:
        if self.bar is not None:
            self.bar.update(self.task, advance=1, description=msg or self.what)

    def note(self, msg: str) -> None:
        if self.bar is not None:
            self.bar.update(self.task, description=msg)


def read(path: Path) -> RecordSet:
    """The record file ``path`` (errors are one line, exit 2)."""
    return RecordSet.read(path)


def print_json(document: Any) -> None:
    """One strict JSON document on stdout."""
    sys.stdout.write(dumps(document) + "\n")


def emit(results: dict[str, dict], as_json: bool, table: Callable[[dict], Table]) -> None:
    """``{"results": ...}`` as JSON, or the table and each file's exclusion counts."""
    if as_json:
        print_json({"results": results})
        return
    out.print(table(results))
    for source, res in results.items():
        if res.get("excluded"):
            detail = ", ".join(f"{k}={v}" for k, v in res["excluded"].items())
            out.print(f"[yellow]{source}: excluded {sum(res['excluded'].values())} row(s): "
                      f"{detail}[/yellow]")


def cell(res: dict, key: str, with_ci: bool) -> str:
    """A table cell: the value, with its 95% interval when ``with_ci``."""
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


def simple_table(title: str, caption: str | None = None) -> Table:
    """An empty table in the package's terminal style."""
    return Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False,
                 caption=caption)


def metric_table(results: dict, columns: Sequence[tuple[str, str]], title: str) -> Table:
    """One row per file, one column per (key, header)."""
    # Intervals only where the terminal is wide enough; --json and the report always have them.
    with_ci = out.width >= 200
    table = simple_table(title, None if with_ci else
                         "95% bootstrap intervals: see --json or the report")
    table.add_column("file", overflow="fold", min_width=15)
    for _, header in columns:
        table.add_column(header, justify="right", no_wrap=True)
    for source, res in results.items():
        table.add_row(Path(source).name, *[cell(res, key, with_ci) for key, _ in columns])
    return table


def check_out(out_dir: Path | None, command: str, force: bool) -> None:
    """Refuse to overwrite a folder that holds something else than this command's results
    (:func:`~confeval.runs.check_output_folder`) unless ``--force``."""
    check_output_folder(out_dir, command, force=force)


def scoring_config(command: str, files: Sequence[Path], options: Mapping[str, dict],
                   **extra: Any) -> dict:
    """The ``run.json`` config of a scoring command: every input as given, its SHA-256 and
    every option it was scored with (what ``confeval rerun`` needs to repeat it)."""
    return {"command": command, **extra,
            "inputs": [{"path": str(p), "sha256": file_sha256(p), "options": options[str(p)]}
                       for p in files]}


def write_run(out_dir: Path | None, config: dict, section: dict) -> None:
    """A run folder for a scoring command (run.json, metrics.json, report.html)."""
    if out_dir is None:
        return
    from ..report import publish

    run = RunFolder(out_dir)
    run.write_run(config)
    publish(run, {"title": f"confeval {config['command']}", "simulated": False,
                  "sections": [section]})
    err.print(f"run folder written: {out_dir}")


def print_sections(sections: Sequence[Mapping], label: Callable[[Mapping], str] | None = None
                   ) -> None:
    """Each section with results as its terminal table (``TABLES`` by kind), titled by the
    section (plus ``label(section)``, with a "judge" first column, when given)."""
    for section in sections:
        if not section["results"]:
            continue
        table = TABLES.get(section["kind"], TABLES["confidence"])(section["results"])
        table.title = section["title"]
        if label is not None:
            table.title += label(section)
            table.columns[0].header = "judge"
        out.print(table)


Files = Annotated[list[Path], typer.Argument(
    metavar="FILE...", help="Record files (.csv, .csv.gz, .tsv, .jsonl, .jsonl.gz, .parquet) "
                            "or run folders.",
    show_default=False)]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout.")]
BootOpt = Annotated[int, typer.Option("--bootstrap", min=0, max=MAX_BOOTSTRAP,
                                      help="Bootstrap resamples for 95% intervals (0: none).")]
SeedOpt = Annotated[int, typer.Option("--seed", help="Seed of every random step.")]
OutOpt = Annotated[Path | None, typer.Option("--out", help="Also write a run folder here "
                                                          "(metrics.json, report.html).")]
ForceOpt = Annotated[bool, typer.Option("--force", help="Overwrite --out even when it holds "
                                                        "another command's results.")]
AlphaOpt = Annotated[float, typer.Option("--alpha", help="Miscoverage: sets and intervals "
                                                         "cover with prob >= 1-alpha.")]
BaseUrlOpt = Annotated[list[str] | None, typer.Option(
    "--base-url", help="OpenAI-compatible endpoint; repeat to spread requests over several "
                       "servers of the same model.")]
ConcurrencyOpt = Annotated[int, typer.Option("--concurrency", min=1,
                                             help="Requests in flight per endpoint.")]
ApiKeyOpt = Annotated[str, typer.Option("--api-key-env", help="Environment variable holding "
                                                              "the API key.")]
RunOutOpt = Annotated[Path, typer.Option("--out", help="Run folder (resumed if it exists).")]
ModelOpt = Annotated[str | None, typer.Option(
    "--model", help="openai:MODEL, hf:PATH, replay:RUN_DIR, or local (default: the embedded "
                    "SmolLM2-135M-Instruct).")]
DataOpt = Annotated[str | None, typer.Option(
    "--data", help="builtin:NAME or a file in the suite's input format (default: the suite's "
                   "built-in task).")]
NOpt = Annotated[int | None, typer.Option("--n", min=1, help="Items to use.")]
ImageRootOpt = Annotated[Path | None, typer.Option(
    "--image-root", help="Folder that image paths of --data resolve in and must stay inside "
                         "(default: the data file's folder).")]
MethodOpt = Annotated[str, typer.Option(
    "--method", help="auto | score | top_logprobs: how option (sets) or rating (intervals) "
                     "probabilities are read.")]
TopKOpt = Annotated[int, typer.Option("--top-k", min=1, help="top_logprobs to ask for.")]
NoCacheOpt = Annotated[bool, typer.Option("--no-cache", help="Neither read nor write the "
                                                             "response cache.")]
CacheOpt = Annotated[Path | None, typer.Option("--cache", help="Cache file (default "
                                                               "$CONFEVAL_CACHE or "
                                                               "~/.cache/confeval).")]


def run_live(suite_name: str, options: Mapping[str, Any], *, out_dir: Path, model: str | None,
             data: str | None, n: int | None, base_url: list[str] | None, concurrency: int,
             api_key_env: str, no_cache: bool, cache_path: Path | None,
             image_root: Path | None = None, command: str = "run",
             after: Callable[[Path], str] | None = None) -> None:
    """``confeval <suite> run``: validate the suite's options (before any model call), load
    the items, run the suite into ``out_dir`` (resuming) and print its tables; ``after`` (the
    run folder -> a line to print) writes a suite's extra outputs."""
    from ..backends import ResponseCache, get_backend
    from ..runner import open_run_folder, run_suite
    from ..suites import get_suite

    suite = get_suite(suite_name)
    opts = suite.for_records(suite.Options.from_dict(options, suite=suite_name))
    check_output_folder(out_dir, command, suite=suite_name)  # before any model is loaded
    backend = get_backend(model, base_urls=base_url, concurrency=concurrency,
                          api_key_env=api_key_env)
    where = {"image_root": str(image_root)} if image_root is not None else {}
    items = suite.load_items(data or suite.default_data, n, opts.seed, **where)
    if getattr(items, "excluded", None):
        detail = ", ".join(f"{k}={v}" for k, v in items.excluded.items())
        err.print(f"{data}: {sum(items.excluded.values())} row(s) left out before any model "
                  f"call: {detail}")
    config = {"command": command, "suite": suite_name, "model": model or "local",
              "backend": backend.identity(), "data": data or suite.default_data, "n": n,
              **where}
    open_run_folder(out_dir, opts, config)  # a mismatch is refused before any progress bar
    cache = None if no_cache else ResponseCache(cache_path)
    started = time.perf_counter()
    with progress(len(items), f"{suite_name}: {model or 'local'}") as step:
        result = run_suite(suite, backend, items, out_dir, options=opts, config=config,
                           model_name=model or "local", cache=cache, progress=step)
    elapsed = time.perf_counter() - started
    print_sections(result.metrics["sections"])
    for section in result.metrics["sections"]:  # what the tables leave out, said once
        for res in section["results"].values():
            if isinstance(res, dict) and res.get("excluded"):
                detail = ", ".join(f"{k}={v}" for k, v in res["excluded"].items())
                err.print(f"{section['title']}: excluded {sum(res['excluded'].values())} "
                          f"record(s): {detail}", markup=False)
            for note in (res.get("warnings") or []) if isinstance(res, dict) else []:
                err.print(f"warning: {section['title']}: {note}", markup=False)
    for note in result.metrics.get("warnings") or []:
        err.print(f"warning: {note}", markup=False)
    if after is not None:
        out.print(after(out_dir))
    out.print(f"{result.n_items} items: {result.n_new} new, {result.n_resumed} resumed, "
              f"{len(result.failures)} failed; {result.model_calls} model call(s); "
              f"{elapsed:.1f} s. Report: {out_dir / RunFolder.REPORT}")
    if result.failures:
        for item_id, why in result.failures[:5]:
            sys.stderr.write(f"failed {item_id}: {why}\n")
        raise UserError(f"{len(result.failures)} item(s) failed; run the same command again "
                        "to retry them")
