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
from rich.text import Text

from ..report.terminal import TERMINAL_TABLES
from ..runs import RunFolder, check_output_folder, dumps
from ..suites.base import ScoringCommand
from ..suites.options import MAX_BOOTSTRAP
from ._options import Given

# markup off: paths, model names and messages are the user's text, and "[local]" or "[x]" in
# one must print as written (colour is asked for with style=)
out = Console(highlight=False, soft_wrap=True, markup=False)
err = Console(stderr=True, highlight=False, soft_wrap=True, markup=False)

class UserError(Exception):
    """An error caused by the user's input; shown as one line, exit code 2."""


REPORT_INCOMPLETE = 3
"""Exit status of a command whose report.html lacks a chart or a section it could not show."""

_UNSHOWN: list = []  # this command's report problems: main() exits 3 once the command is done


def report_incomplete(problems: Sequence) -> None:
    """Name each problem :func:`~confeval.report.publish` returned on stderr, one line each;
    the command ends with exit status 3 once it has done the rest of its work."""
    for problem in problems:
        sys.stderr.write(f"{problem}\n")  # one line, never wrapped
    _UNSHOWN.extend(problems)


def report_status() -> int:
    """3 if a report was incomplete since the last call (then forgotten), else 0."""
    status = REPORT_INCOMPLETE if _UNSHOWN else 0
    _UNSHOWN.clear()
    return status


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


def verdict_lines(kind: str, results: Mapping[str, Any]) -> list[str]:
    """"label: verdict" of every result that has one (:mod:`confeval.report.verdicts`), each
    input named by the short label its table row or column has."""
    from ..report.terminal import file_labels
    from ..report.verdicts import section_verdicts

    verdicts = section_verdicts({"kind": kind, "results": results})
    labels = dict(zip(results, file_labels(results).labels))
    return [f"{labels[name]}: {sentence}" for name, sentence in verdicts.items()]


def print_table(kind: str, results: Mapping[str, Any], *, title: str | None = None,
                name_header: str | None = None) -> None:
    """A section on the terminal: its title, the verdict of every input (one or two sentences
    with the numbers behind it, wrapped at words), then its table (``TERMINAL_TABLES[kind]``),
    whose first column, when it is the inputs' "file", is headed ``name_header``."""
    from ..report.terminal import marks_outside
    from ..report.verdicts import OUTSIDE_NOTE, marked_outside

    table = TERMINAL_TABLES[kind](results)
    heading = title or (str(table.title) if table.title else kind)
    table.title = None
    if name_header and table.columns and table.columns[0].header == "file":
        table.columns[0].header = name_header   # not "n test", a rank or "metric"
    out.print(Text(heading, style="bold"), soft_wrap=False)
    lines = verdict_lines(kind, results)
    for line in lines:
        out.print(Text(line), soft_wrap=False)
    if any(marked_outside(line) for line in lines) or marks_outside(table):
        out.print(Text(OUTSIDE_NOTE, style="dim"), soft_wrap=False)
    out.print(table)


def emit(results: dict[str, dict], as_json: bool, kind: str,
         not_scored: Mapping[str, str] | None = None) -> None:
    """``{"results": ...}`` as JSON, or the verdicts, the table, what was read of each
    other tool's file and each file's exclusion counts; each reader's warning, and each filter
    or scorer that could not be scored (``not_scored``), on stderr naming its input."""
    from ..report.sources import source_lines, source_warnings

    if as_json:
        print_json({"results": results, **({"not_scored": dict(not_scored)}
                                           if not_scored else {})})
        return
    print_table(kind, results)
    for line in source_lines(results):
        out.print(line, markup=False, highlight=False)
    for source, res in results.items():
        if res.get("excluded"):
            detail = ", ".join(f"{k}={v}" for k, v in res["excluded"].items())
            out.print(f"{source}: excluded {sum(res['excluded'].values())} row(s): {detail}",
                      style="yellow")
    for line in source_warnings(results):
        err.print(f"warning: {line}", markup=False, highlight=False)
    for name, why in (not_scored or {}).items():
        err.print(f"warning: {name}: not scored: {why}", markup=False, highlight=False)


def score_and_print(command: ScoringCommand, inputs: Sequence[Sequence[Path]], given: Given,
                    *, as_json: bool, out_dir: Path | None, force: bool,
                    extra: Any = None) -> dict[str, dict]:
    """The body of every scoring command: the inputs scored by the library
    (:func:`confeval.verbs.score.score_inputs`), the run folder written into ``--out``, then
    the results printed (``--json``: nothing on stdout before the folder is written)."""
    from ..verbs.score import score_inputs

    check_output_folder(out_dir, command.command, force=force,
                        inputs=[path for group in inputs for path in group])
    busy = len(inputs) > 1 or (command.progress and given.values.get("bootstrap", 0) > 0)
    with progress(len(inputs), command.command, enabled=busy) as step:
        scored = score_inputs(
            command, inputs, given.values, given.explicit, extra=extra,
            progress=lambda name, done, total: step.note(f"{name}: bootstrap {done}/{total}"),
            step=lambda name: step(f"scored {name}"))
    write_run(out_dir, scored.config, scored.section, force=force)
    emit(scored.results, as_json, command.kind, scored.not_scored)
    return scored.results


def reasons_text(counts: dict[str, int]) -> str:
    """Counted reasons as one phrase: "missing_x 2, non_numeric_y 1", or "none"."""
    return ", ".join(f"{k} {v:,}" for k, v in counts.items()) or "none"


def write_run(out_dir: Path | None, config: dict, section: dict | None = None, *,
              force: bool = False, metrics: dict | None = None,
              files: Mapping[str, str] | None = None) -> None:
    """A command's run folder (run.json, metrics.json, report.html and ``files``) written as
    one transaction (:func:`confeval.runs.write_run_folder`): built beside ``out_dir`` and
    moved into place whole, under its lock, never through a link. ``metrics`` default: the
    one ``section``."""
    if out_dir is None:
        return
    from ..report import publish
    from ..runs import write_run_folder

    document = metrics or {"title": f"confeval {config['command']}", "simulated": False,
                           "sections": [section]}
    with write_run_folder(out_dir, command=config["command"], suite=config.get("suite"),
                          force=force) as folder:
        folder.write_run(config)
        problems = publish(folder, document)
        for name, text in (files or {}).items():
            folder.write_text(name, text)
    report_incomplete(problems)
    err.print(f"run folder written: {out_dir}")


def print_sections(sections: Sequence[Mapping], label: Callable[[Mapping], str] | None = None,
                   *, names: str = "file") -> None:
    """Each section with results as :func:`print_table` prints it: titled by the section (plus
    ``label(section)`` when given), its inputs' column headed by the section's
    ``name_header``, else ``names`` ("model" for a live run's sections)."""
    for section in sections:
        if not section["results"]:
            continue
        title = section["title"] + (label(section) if label is not None else "")
        print_table(section["kind"], section["results"], title=title,
                    name_header=section.get("name_header", names))


Files = Annotated[list[Path], typer.Argument(
    metavar="FILE...", help="Record files (.csv, .csv.gz, .tsv, .jsonl, .jsonl.gz, .parquet) "
                            "or run folders.",
    show_default=False)]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout.")]
BootOpt = Annotated[int, typer.Option("--bootstrap", min=0, max=MAX_BOOTSTRAP,
                                      help="Bootstrap resamples for 95% intervals (0: none).")]
SeedOpt = Annotated[int, typer.Option("--seed", min=0, help="Seed of every random step.")]
OutOpt = Annotated[Path | None, typer.Option("--out", help="Also write a run folder here "
                                                          "(metrics.json, report.html).")]
ForceOpt = Annotated[bool, typer.Option("--force", help="Overwrite --out even when it holds "
                                                        "another command's results.")]
RunOutOpt = Annotated[Path, typer.Option("--out", help="Run folder (resumed if it exists).")]
def run_and_print(suite_name: str, given: Given, *, out_dir: Path,
                  command: str = "run") -> None:
    """``confeval <suite> run``: the one live driver (:func:`confeval.verbs.run.run_live`)
    with a progress bar, then the suite's tables and what they leave out."""
    import dataclasses

    from ..suites.options import RunFlags, build
    from ..verbs.run import run_live

    names = {f.name for f in dataclasses.fields(RunFlags)}
    flags = build(RunFlags, {k: v for k, v in given.values.items() if k in names},
                  what="the run")
    options = {k: v for k, v in given.values.items() if k not in names}

    def say_left_out(items) -> None:
        if getattr(items, "excluded", None):
            detail = ", ".join(f"{k}={v}" for k, v in items.excluded.items())
            err.print(f"{flags.data}: {sum(items.excluded.values())} row(s) left out before "
                      f"any model call: {detail}")

    started = time.perf_counter()
    result = run_live(suite_name, options, out_dir, model=flags.model, data=flags.data,
                      n=flags.n, backend=flags.backend, text_only=flags.text_only,
                      cache=flags.response_cache(), image_root=flags.image_root,
                      command=command, progress_factory=progress, on_items=say_left_out)
    elapsed = time.perf_counter() - started  # the model's load included
    print_sections(result.metrics["sections"], names="model")
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
    report_incomplete(result.report_problems)
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
