"""Scoring inputs by a suite's scoring command — written once for every suite: ``confeval
score``, ``confeval agreement``, ``confeval SUITE score`` and the suites' other scoring
commands (``measures thresholds``, ``steps consistency``, ...).

Each input (a record file, a run folder, another tool's file; or the files one command scores
together) is read by the suite's one loader with its options — a run folder's own, from its
``run.json``, overridden only by those given — and scored by the suite's one scoring path. The
``run.json`` of a scoring folder holds every input's path, its SHA-256 and every option it was
scored with: what ``confeval rerun`` needs to repeat it (:mod:`confeval.verbs.rerun`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .._registry import Registry
from ..runs import file_sha256
from ..suites import SUITES
from ..suites.base import ScoringCommand, Suite
from ..suites.options import build, options_for_input, to_json

__all__ = ["Scored", "check_unchanged", "input_name", "load", "load_layout_error", "score_inputs",
           "scoring_command", "scoring_commands", "scoring_config", "variant_name"]


def scoring_commands() -> Registry[ScoringCommand]:
    """Every command that writes a scoring run folder: each suite's ``score`` and its other
    scoring commands, by command name (what ``confeval rerun`` looks a folder's command up
    in)."""
    table: Registry[ScoringCommand] = Registry("scoring command")
    for suite in SUITES.values():
        for command in (suite.scoring_command(), *suite.extra_commands()):
            table.add(command.command, command)
    return table


def scoring_command(name: str) -> ScoringCommand:
    """The scoring command ``name`` (``sets score``, ``score``, ``measures noise``, ...)."""
    return scoring_commands()[name]


def load(suite: Suite, path: str | Path, options: Any):
    """``suite.load(path, options)``; another tool's file the suite has no layout for is one
    error naming the commands that read it."""
    with load_layout_error():
        return suite.load(path, options)


@contextlib.contextmanager
def load_layout_error():
    """Another tool's file a suite has no layout for (:class:`~confeval.ingest.NoLayout`) as
    one error naming the commands that read it."""
    from ..ingest import NoLayout

    try:
        yield
    except NoLayout as exc:
        readers = [s.command for s in SUITES.values()
                   if (layout := s.layout()) is not None and exc.format in layout.rows]
        raise ValueError(f"{exc} (it can be read by: {', '.join(readers)})") from None


def input_name(paths: Sequence[Path]) -> str:
    return " vs ".join(str(p) for p in paths)


@dataclasses.dataclass
class Scored:
    """What a scoring command computed: each input's results (by input name), the options each
    was scored with, the run folder's ``run.json`` config and its section; ``not_scored``:
    the filters or scorers of a file that could not be scored (by name: why), where the
    file's others were."""

    results: dict[str, dict]
    used: dict[str, dict]
    config: dict
    section: dict
    not_scored: dict[str, str] = dataclasses.field(default_factory=dict)

    def metrics(self) -> dict:
        """The folder's ``metrics.json``: the command's one section."""
        return {"title": f"confeval {self.config['command']}", "simulated": False,
                "sections": [self.section]}


def _cwd() -> str:
    return os.getcwd()


def score_inputs(command: ScoringCommand, inputs: Sequence[Sequence[str | Path]],
                 values: Mapping[str, Any], explicit: frozenset[str] | set[str] = frozenset(),
                 *, extra: Any = None,
                 progress: Callable[[str, int, int], None] | None = None,
                 step: Callable[[str], None] | None = None) -> Scored:
    """Every input scored by ``command`` with its options (``values``; for a run folder of
    the command's suite, the folder's own overridden only by the names in ``explicit``).
    ``extra`` is handed to the command's ``finish`` (``diagnose score --pair``);
    ``progress(name, done, total)`` sees a long bootstrap, ``step(name)`` each input done."""
    inputs = [[Path(p) for p in paths] for paths in inputs]
    for paths in inputs:
        if len(paths) != command.n_files:
            raise ValueError(f"confeval {command.command} scores {command.n_files} file(s) "
                             f"together, got {len(paths)}")
    what = f"confeval {command.command}"
    results: dict[str, dict] = {}
    used: dict[str, dict] = {}
    scored: list[tuple[list[Path], str]] = []
    not_scored: dict[str, str] = {}
    with load_layout_error():
        if command.together:
            options = build(command.Options, values, what=what)
            results[command.together] = command.score(inputs, options)
            used = {input_name(paths): to_json(options) for paths in inputs}
            scored = [(paths, input_name(paths)) for paths in inputs]
        for paths in inputs if not command.together else ():
            name = input_name(paths)
            options = options_for_input(command.Options, paths[0], values, explicit,
                                        suite=command.suite, what=what)
            kwargs = {}
            if command.progress and progress is not None:
                kwargs["progress"] = lambda done, total, n=paths[0].name: progress(n, done,
                                                                                    total)
            for each, each_options in _variants(command, paths, options, name, kwargs,
                                                results, not_scored):
                used[each] = to_json(each_options)
                scored.append((paths, each))
            if step is not None:
                step(paths[0].name)
    more: dict[str, Any] = {}
    if extra and command.finish is not None:
        options = build(command.Options, values, what=what)
        command.finish(results, extra, options)
        more = {"extra": extra, "extra_options": to_json(options)}
    read = {name: {k: v for k, v in (res.get("notes") or {}).items()
                   if k in ("filter", "scorer")}
            for name, res in results.items() if isinstance(res, dict)}
    config = scoring_config(command, inputs, used, scored=scored, read=read, **more)
    return Scored(results, used, config, command.section(results), not_scored)


def variant_name(name: str, kind: str, variant: str) -> str:
    """The result name of one filter or scorer of an input: ``NAME (scorer match)``."""
    return f"{name} ({kind} {variant})"


def _variants(command: ScoringCommand, paths: list[Path], options: Any, name: str,
              kwargs: dict, results: dict, not_scored: dict) -> list[tuple[str, Any]]:
    """Score one input into ``results``: as it is, or — a file of several lm-eval filters or
    Inspect scorers, none named — each filter or scorer on its own, its result named by it
    (:func:`variant_name`) and its options naming it, never pooled. A filter or scorer that
    cannot be scored (a grader that graded nothing) is ``not_scored`` with its one-line
    reason, where the file's others are; none can: the first reason is the error. Returns
    (result name, options) of each scored."""
    from ..ingest import SeveralVariants

    try:
        results[name] = command.score(paths, options, **kwargs)
        return [(name, options)]
    except SeveralVariants as several:
        if command.n_files != 1:
            raise
        done: list[tuple[str, Any]] = []
        failed: dict[str, ValueError] = {}
        for variant in several.names:
            each = variant_name(name, several.variants.kind, variant)
            each_options = dataclasses.replace(options, **{several.variants.option: variant})
            try:
                results[each] = command.score(paths, each_options, **kwargs)
            except SeveralVariants:
                raise
            except ValueError as exc:
                failed[each] = exc
                continue
            done.append((each, each_options))
        if not done:
            messages = {str(exc) for exc in failed.values()}
            first = str(next(iter(failed.values())))
            raise ValueError(first + (f" (so under each of its {len(failed)} "
                                      f"{several.variants.kind}s: "
                                      f"{', '.join(several.names)})"
                                      if len(messages) == 1 else "")) from None
        not_scored.update({k: str(v).removeprefix(f"{paths[0]}: ")
                           for k, v in failed.items()})
        return done


def scoring_config(command: ScoringCommand, inputs: Sequence[Sequence[Path]],
                   options: Mapping[str, dict], *,
                   scored: Sequence[tuple[Sequence[Path], str]] | None = None,
                   read: Mapping[str, dict] | None = None, **extra: Any) -> dict:
    """The ``run.json`` config of a scoring command: the working directory the paths are
    relative to, every input as given (``path``: one file, or the list of files scored
    together), its SHA-256, every option it was scored with, the columns each column glob
    matched (``resolved``) and the SHA-256 of files named by options (what ``confeval rerun``
    needs to repeat it). ``scored``: (paths, result name) of each result, where one input
    gave several (each lm-eval filter, each Inspect scorer: an entry each, with its ``name``
    and its options naming the filter or scorer); ``read``: by result name, the filter or
    scorer of another tool's file that was read (``{"scorer": "match"}``), named in the
    entry even where the file has only that one."""
    entries = []
    for paths, name in scored if scored is not None else \
            [(paths, input_name(paths)) for paths in inputs]:
        used = options[name]
        entry: dict[str, Any] = {
            "path": str(paths[0]) if len(paths) == 1 else [str(p) for p in paths],
            "sha256": file_sha256(paths[0]) if len(paths) == 1 else
            [file_sha256(p) for p in paths],
            "options": used}
        if name != input_name(paths):
            entry["name"] = name
        if read and read.get(name):
            entry["read"] = read[name]
        resolved = _resolved_globs(paths[0], used)
        if resolved:
            entry["resolved"] = resolved
        named = {used[k]: file_sha256(used[k]) for k in command.files if used.get(k)}
        if named:
            entry["option_files"] = named
        entries.append(entry)
    return {"command": command.command, "cwd": _cwd(), **extra, "inputs": entries}


def _resolved_globs(path: Path, used: Mapping[str, Any]) -> dict[str, list[str]]:
    """The columns each glob option (``'logit_*'``) matched in ``path``: the file is read
    again for its header, only when a glob was given."""
    globs = {k: v for k, v in used.items()
             if isinstance(v, str) and any(ch in v for ch in "*?[")}
    if not globs:
        return {}
    from ..ingest import detect
    from ..records import RecordsError, RecordSet, resolve_columns  # pandas: only for a glob

    if detect(path) is not None:   # another tool's file: its columns are the suite's layout
        return {}
    try:
        columns = list(RecordSet.read(path).frame.columns)
    except RecordsError:           # a folder whose records nest their rows
        return {}
    out = {}
    for key, spec in globs.items():
        try:
            out[key] = resolve_columns(columns, spec)
        except RecordsError:        # a glob on other rows (a run folder's nested records)
            continue
    return out


def check_unchanged(config: Mapping[str, Any], path: str, sha256: str | None) -> Path:
    """The input ``path`` of a run (relative paths: to this directory — a rerun works in the
    run's own — else to the run's recorded working directory), checked to be the file it
    was; else a :class:`ValueError` saying where it looked."""
    given = Path(path)
    places = [given] if given.is_absolute() else \
        [given, *([Path(config["cwd"]) / given] if config.get("cwd") else [])]
    found = next((p for p in places if p.exists()), None)
    if found is None:
        looked = " and ".join(str(p) for p in dict.fromkeys(places))
        raise ValueError(f"{path}: the input of this run is gone (looked at {looked}); "
                         "put it back, or run the command again")
    if sha256 is not None and file_sha256(found) != sha256:
        raise ValueError(f"{found}: changed since the run (its SHA-256 differs from "
                         "run.json's)")
    return found
