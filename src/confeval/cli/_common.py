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

from ..report.terminal import TERMINAL_TABLES
from ..runs import RunFolder, check_output_folder, dumps
from ..suites import SCORING_COMMANDS
from ..suites.base import MAX_BOOTSTRAP
from ..suites.commands import input_name, scoring_config
from ..suites.options import build, options_for_input, to_json
from ._options import Given

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)

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


def check_out(out_dir: Path | None, command: str, force: bool) -> None:
    """Refuse to overwrite a folder that holds something else than this command's results
    (:func:`~confeval.runs.check_output_folder`) unless ``--force``."""
    check_output_folder(out_dir, command, force=force)


def score_inputs(command: str, inputs: Sequence[Sequence[Path]], given: Given, *,
                 as_json: bool, out_dir: Path | None, force: bool, extra: Any = None,
                 bootstrap_progress: bool = False) -> dict[str, dict]:
    """The body of every scoring command: each input (one file, or the files scored
    together) scored by the command's one scoring function with its options (a run
    folder's own, overridden by the command line), printed, and written with every option
    into ``--out``."""
    cmd = SCORING_COMMANDS[command]
    cls = cmd.options_class()
    check_out(out_dir, command, force)
    results, used = {}, {}
    busy = len(inputs) > 1 or (bootstrap_progress and given.values.get("bootstrap", 0) > 0)
    with progress(len(inputs), command, enabled=busy) as step:
        for paths in inputs:
            name = input_name(paths)
            options = options_for_input(cls, paths[0], given.values, given.explicit,
                                        suite=cmd.suite, what=f"confeval {command}")
            kwargs = {"progress": lambda done, total, name=paths[0].name: step.note(
                f"{name}: bootstrap {done}/{total}")} if bootstrap_progress else {}
            results[name] = cmd.score(paths, options, **kwargs)
            used[name] = to_json(options)
            step(f"scored {paths[0].name}")
    more: dict[str, Any] = {}
    if extra:
        options = build(cls, given.values, what=f"confeval {command}")
        cmd.finish(results, extra, options)
        more = {"extra": extra, "extra_options": to_json(options)}
    emit(results, as_json, TERMINAL_TABLES[cmd.kind])
    config = scoring_config(command, inputs, used, **more)
    write_run(out_dir, config, cmd.section(results))
    return results


def reasons_text(counts: dict[str, int]) -> str:
    """Counted reasons as one phrase: "missing_x 2, non_numeric_y 1", or "none"."""
    return ", ".join(f"{k} {v:,}" for k, v in counts.items()) or "none"


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
    """Each section with results as its terminal table (``TERMINAL_TABLES`` by kind), titled by the
    section (plus ``label(section)``, with a "judge" first column, when given)."""
    for section in sections:
        if not section["results"]:
            continue
        table = TERMINAL_TABLES[section["kind"]](section["results"])
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
TextOnlyOpt = Annotated[bool, typer.Option(
    "--text-only", help="The model takes no images: items with an image are counted as "
                        "needs_image, never sent (a server refusing images is found out "
                        "at its first refusal anyway).")]
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
             image_root: Path | None = None, text_only: bool = False,
             command: str = "run") -> None:
    """``confeval <suite> run``: the one live driver (:func:`confeval.runner.run_live`) with a
    progress bar, then the suite's tables and what they leave out."""
    from ..backends import ResponseCache, get_backend
    from ..runner import run_live as drive

    def say_left_out(items) -> None:
        if getattr(items, "excluded", None):
            detail = ", ".join(f"{k}={v}" for k, v in items.excluded.items())
            err.print(f"{data}: {sum(items.excluded.values())} row(s) left out before any "
                      f"model call: {detail}")

    started = time.perf_counter()
    def make_backend():
        backend = get_backend(model, base_urls=base_url, concurrency=concurrency,
                              api_key_env=api_key_env)
        if text_only:
            backend.capabilities = backend.capabilities - {"images"}
        return backend

    result = drive(suite_name, options, out_dir, model=model, data=data, n=n,
                   backend=make_backend, text_only=text_only,
                   cache=None if no_cache else ResponseCache(cache_path),
                   image_root=image_root, command=command, progress_factory=progress,
                   on_items=say_left_out)
    elapsed = time.perf_counter() - started  # the model's load included
    print_sections(result.metrics["sections"])
    for section in result.metrics["sections"]:  # what the tables leave out, said once
        for res in section["results"].values():
            if isinstance(res, dict) and res.get("excluded"):
                detail = ", ".join(f"{k}={v}" for k, v in res["excluded"].items())
                err.print(f"{section['title']}: excluded {sum(res['excluded'].values())} "
                          f"record(s): {detail}", markup=False)
            for note in (res.get("warnings") or []) if isinstance(res, dict) else []:
                err.print(f"warning: {section['title']}: {note}", markup=False)
    if result.metrics.get("excluded_records"):
        detail = ", ".join(f"{k}={v}" for k, v in result.metrics["excluded_records"].items())
        err.print(f"records not asked: {detail}", markup=False)
    for note in result.metrics.get("warnings") or []:
        err.print(f"warning: {note}", markup=False)
    if result.extras:
        out.print(result.extras)
    out.print(f"{result.n_items} items: {result.n_new} new, {result.n_resumed} resumed, "
              f"{len(result.failures)} failed; {result.model_calls} model call(s); "
              f"{elapsed:.1f} s. Report: {out_dir / RunFolder.REPORT}")
    if result.failures:
        for item_id, why in result.failures[:5]:
            sys.stderr.write(f"failed {item_id}: {why}\n")
        raise UserError(f"{len(result.failures)} item(s) failed; run the same command again "
                        "to retry them")
