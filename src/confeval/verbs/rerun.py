"""``confeval rerun RUN_DIR``: repeat a run folder from its ``run.json`` alone — written once for
every command that writes one.

A scoring folder (``confeval <suite> score ... --out`` and every other scoring command) holds
every input's path, SHA-256 and every option it was scored with: each input is checked to be
the file it was (else a :class:`ValueError` naming it and where it looked) and scored again by
the command's one scoring path. A ``compare``, ``guarantee`` or ``judge mean | card | reruns |
position | length`` folder is repeated the same way. A live folder (``confeval <suite> run``,
and a live ``judge reruns`` or ``judge position``) is scored again from its records with its
options — no model is called. Either way the metrics are those the folder would get now;
:func:`differences` says where they differ from the folder's ``metrics.json`` (nowhere, for a
folder of this version).

Paths in ``run.json`` are as given on the command line; ``cwd`` records the working directory
they are relative to, so a folder is repeated from anywhere.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from .._registry import Registry, UnknownName
from ..report import publish
from ..runs import RunFolder, dumps, load_run_records, write_run_folder
from ..suites import SUITES
from ..suites.options import build
from .run import first_per_item, live_part, record_counts
from .score import check_unchanged, scoring_commands

__all__ = ["REPEATABLE", "REPEATABLE_LIVE", "differences", "metrics_of", "rerun"]

_COPIED_FROM_THE_RUN = ("failed_items", "excluded_at_load", "duplicate_records_ignored")
"""What a live run knew and its records do not (items that failed, rows left out of the data
before any call): taken from the folder's own metrics."""


def _scoring_metrics(config: dict) -> dict:
    command = str(config.get("command", ""))
    cmd = scoring_commands()[command]
    results: dict[str, dict] = {}
    groups = []
    for given in config.get("inputs") or []:
        if not isinstance(given, dict) or not {"path", "sha256", "options"} <= set(given):
            raise ValueError(f"run.json: an input of `confeval {command}` without its path, "
                             "sha256 or options")
        paths = given["path"] if isinstance(given["path"], list) else [given["path"]]
        hashes = given["sha256"] if isinstance(given["sha256"], list) else [given["sha256"]]
        option_files = given.get("option_files") or {}
        if not (paths and len(paths) == len(hashes)
                and all(isinstance(x, str) for x in paths)
                and all(x is None or isinstance(x, str) for x in hashes)   # None: not checked
                and isinstance(option_files, dict)
                and all(isinstance(x, str) for x in (*option_files, *option_files.values()))):
            raise ValueError(f"run.json: an input of `confeval {command}` whose path, sha256 "
                             "or option_files are not text (one path and one hash each)")
        found = [check_unchanged(config, p, h) for p, h in zip(paths, hashes)]
        for path, sha in option_files.items():
            check_unchanged(config, path, sha)
        options = build(cmd.Options, given["options"], what=f"confeval {command}")
        if cmd.together:
            groups.append(found)
            continue
        # the results are named by the paths as given (or, for one filter or scorer of a
        # file, by its name), as the run named them
        name = given.get("name") if isinstance(given.get("name"), str) else " vs ".join(paths)
        results[name] = cmd.score(found, options)
    if cmd.together:
        results[cmd.together] = cmd.score(groups, options)
    if config.get("extra") and cmd.finish is not None:
        cmd.finish(results, config["extra"],
                   build(cmd.Options, config.get("extra_options") or {},
                         what=f"confeval {command}"))
    return {"title": f"confeval {command}", "simulated": False,
            "sections": [cmd.section(results)]}


def _compare_metrics(config: dict) -> dict:
    from .compare import compare_section, rerun_compare

    return {"title": "confeval compare", "simulated": False,
            "sections": [compare_section(rerun_compare(config))]}


def _guarantee_metrics(config: dict) -> dict:
    from .guarantee import rerun_guarantee

    return rerun_guarantee(config)


def _apply_metrics(config: dict) -> dict:
    from .apply import rerun_apply

    return rerun_apply(config)


def _judge_mean_metrics(config: dict) -> dict:
    from .judge import rerun_judge_mean

    return rerun_judge_mean(config)


def _judge_card_metrics(config: dict) -> dict:
    from .judge_card import rerun_judge_card

    return rerun_judge_card(config)


def _judge_test_metrics(config: dict) -> dict:
    from .judge_tests import rerun_judge_test

    return rerun_judge_test(config)


REPEATABLE: Registry[Callable[[dict], dict]] = Registry("repeatable command", {
    "compare": _compare_metrics,
    "guarantee": _guarantee_metrics,
    "guarantee apply": _apply_metrics,
    "judge mean": _judge_mean_metrics,
    "judge card": _judge_card_metrics,
    "judge reruns": _judge_test_metrics,
    "judge position": _judge_test_metrics,
    "judge length": _judge_test_metrics,
})
"""The commands besides the scoring commands whose folders ``confeval rerun`` repeats."""


def _judge_live_metrics(run: RunFolder, config: dict) -> dict:
    from .judge_live import rescore_live
    from .judge_tests import rerun_options

    command = str(config["command"])
    return rescore_live(command, config, rerun_options(config), Path(run.path))


REPEATABLE_LIVE: Registry[Callable[[RunFolder, dict], dict]] = Registry(
    "repeatable live command", {"judge reruns": _judge_live_metrics,
                                "judge position": _judge_live_metrics})
"""Live commands besides the suites' runs (``"live": true`` in their ``run.json``) whose
folders ``confeval rerun`` scores again from their records, without calling the model."""


def _live_metrics(run: RunFolder, config: dict) -> dict:
    name = str(config["suite"])
    live = live_part(name)
    options = build(SUITES[name].Options, config["options"], what=f"the {name} suite")
    records, _ = first_per_item(load_run_records(run.file(RunFolder.RECORDS)))
    metrics = live.score(records, options, config.get("model") or "local")
    old = run.read_metrics() if run.file(RunFolder.METRICS).is_file() else {}
    for key in _COPIED_FROM_THE_RUN:
        if key in old:
            metrics[key] = old[key]
    for key, value in record_counts(records).items():
        metrics.setdefault(key, value)
    return metrics


@contextlib.contextmanager
def _in_the_runs_directory(config: Mapping[str, Any]):
    """Work in the directory the run was made in (its recorded ``cwd``, when it still
    exists), so that its inputs are found, and named, as the run named them."""
    cwd = config.get("cwd")
    if not (isinstance(cwd, str) and Path(cwd).is_dir()):
        yield
        return
    previous = os.getcwd()
    os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(previous)


def metrics_of(run: RunFolder, config: dict) -> dict:
    """The metrics of the run folder ``run`` computed again from its ``config``, in the
    directory the run was made in."""
    run = RunFolder(Path(run.path).resolve(), create=False)
    with _in_the_runs_directory(config):
        return _metrics_of(run, config)


def _metrics_of(run: RunFolder, config: dict) -> dict:
    command = str(config.get("command", ""))
    if command in ("run", "demo-live") and "suite" in config:
        return _live_metrics(run, config)
    if config.get("live") and command in REPEATABLE_LIVE:
        return REPEATABLE_LIVE[command](run, config)
    if command in REPEATABLE:
        return REPEATABLE[command](config)
    if command.endswith((" calibrate", " apply")):   # a suite's conformal predictor
        from .conformal import rerun_conformal

        return rerun_conformal(config)
    try:
        return _scoring_metrics(config)
    except UnknownName:
        raise ValueError(f"cannot rerun `confeval {command}` folders") from None


def rerun(run_dir: str | Path, out: str | Path | None = None, *, force: bool = False,
          problems: list | None = None) -> dict:
    """The metrics of ``run_dir`` computed again from its ``run.json`` (module docstring);
    written with the report into ``out`` (a new run folder) when given (``problems``
    receives what that report could not show)."""
    run = RunFolder(run_dir, create=False)
    config = run.config()
    if not config.get("command"):
        raise ValueError(f"{run.file(RunFolder.RUN)}: no command to repeat (not a run.json "
                         "confeval wrote)")
    try:
        metrics = metrics_of(run, config)
    except (TypeError, KeyError, IndexError, AttributeError) as exc:
        # run.json is the user's file: a field of another shape than confeval writes (edited,
        # or not confeval's) must be named as that file's, not reported as confeval's failure
        raise ValueError(f"{run.file(RunFolder.RUN)}: a field is missing or of another kind "
                         f"than confeval writes ({type(exc).__name__}: {exc}); not a run.json "
                         "confeval wrote, or edited since") from exc
    if out is not None:
        with write_run_folder(out, command=str(config.get("command")),
                              suite=config.get("suite"), force=force) as target:
            target.write_run(config)
            if run.file(RunFolder.RECORDS).is_file():
                target.copy_file(run.file(RunFolder.RECORDS), RunFolder.RECORDS)
            unshown = publish(target, metrics)
        if problems is not None:
            problems.extend(unshown)
    return metrics


def differences(old: Any, new: Any, where: str = "", *, rel: float = 1e-12) -> list[str]:
    """Where two metrics documents differ (floats to ``rel``), as JSON paths."""
    old, new = json.loads(dumps(old)), json.loads(dumps(new))
    return _diff(old, new, where, rel)


def _diff(old: Any, new: Any, where: str, rel: float) -> list[str]:
    if isinstance(old, dict) and isinstance(new, dict):
        out = []
        for key in sorted(set(old) | set(new), key=str):
            if key not in new or key not in old:
                out.append(f"{where}/{key}: only in the {'old' if key in old else 'new'}")
            else:
                out.extend(_diff(old[key], new[key], f"{where}/{key}", rel))
        return out
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        return [d for i, (a, b) in enumerate(zip(old, new)) for d in _diff(a, b, f"{where}[{i}]",
                                                                          rel)]
    if isinstance(old, float) and isinstance(new, (int, float)) and not isinstance(new, bool):
        return [] if math.isclose(old, new, rel_tol=rel, abs_tol=rel) else \
            [f"{where}: {old!r} -> {new!r}"]
    return [] if old == new else [f"{where}: {old!r} -> {new!r}"]
