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
           "scoring_command", "scoring_commands", "scoring_config"]


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
    was scored with, the run folder's ``run.json`` config and its section."""

    results: dict[str, dict]
    used: dict[str, dict]
    config: dict
    section: dict

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
    with load_layout_error():
        if command.together:
            options = build(command.Options, values, what=what)
            results[command.together] = command.score(inputs, options)
            used = {input_name(paths): to_json(options) for paths in inputs}
        for paths in inputs if not command.together else ():
            name = input_name(paths)
            options = options_for_input(command.Options, paths[0], values, explicit,
                                        suite=command.suite, what=what)
            kwargs = {}
            if command.progress and progress is not None:
                kwargs["progress"] = lambda done, total, n=paths[0].name: progress(n, done,
                                                                                    total)
            results[name] = command.score(paths, options, **kwargs)
            used[name] = to_json(options)
            if step is not None:
                step(paths[0].name)
    more: dict[str, Any] = {}
    if extra and command.finish is not None:
        options = build(command.Options, values, what=what)
        command.finish(results, extra, options)
        more = {"extra": extra, "extra_options": to_json(options)}
    config = scoring_config(command, inputs, used, **more)
    return Scored(results, used, config, command.section(results))


def scoring_config(command: ScoringCommand, inputs: Sequence[Sequence[Path]],
                   options: Mapping[str, dict], **extra: Any) -> dict:
    """The ``run.json`` config of a scoring command: the working directory the paths are
    relative to, every input as given (``path``: one file, or the list of files scored
    together), its SHA-256, every option it was scored with, the columns each column glob
    matched (``resolved``) and the SHA-256 of files named by options (what ``confeval rerun``
    needs to repeat it)."""
    entries = []
    for paths in inputs:
        used = options[input_name(paths)]
        entry: dict[str, Any] = {
            "path": str(paths[0]) if len(paths) == 1 else [str(p) for p in paths],
            "sha256": file_sha256(paths[0]) if len(paths) == 1 else
            [file_sha256(p) for p in paths],
            "options": used}
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
