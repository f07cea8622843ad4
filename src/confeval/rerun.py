"""``confeval rerun RUN_DIR``: repeat a run folder from its ``run.json`` alone.

A scoring folder (``confeval <suite> score ... --out``) holds every input's path, SHA-256 and
every option it was scored with: each input is checked to be the file it was (else a
:class:`ValueError` naming it) and scored again by the suite's one scoring path. A live folder
(``confeval <suite> run``) is scored again from its records with its options — no model is
called. Either way the metrics are those the folder would get now; :func:`differences` says
where they differ from the folder's ``metrics.json`` (nowhere, for a folder of this version).
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

from ._registry import UnknownName
from .report import publish
from .runner import record_counts
from .runs import RunFolder, check_output_folder, dumps, file_sha256, load_run_records
from .suites import SCORING_COMMANDS, suite_entry
from .suites.options import build

__all__ = ["differences", "rerun"]

_COPIED_FROM_THE_RUN = ("failed_items", "excluded_at_load", "duplicate_records_ignored")
"""What a live run knew and its records do not (items that failed, rows left out of the data
before any call): taken from the folder's own metrics."""


def _scoring_metrics(config: dict) -> dict:
    command = str(config.get("command", ""))
    try:
        cmd = SCORING_COMMANDS[command]
    except UnknownName:
        raise ValueError(f"cannot rerun `confeval {command}` folders") from None
    cls = cmd.options_class()
    results: dict[str, dict] = {}
    for given in config.get("inputs") or []:
        paths = given["path"] if isinstance(given["path"], list) else [given["path"]]
        hashes = given["sha256"] if isinstance(given["sha256"], list) else [given["sha256"]]
        for path, sha in [*zip(paths, hashes), *(given.get("option_files") or {}).items()]:
            _check_unchanged(path, sha)
        options = build(cls, given["options"], what=f"confeval {command}")
        results[" vs ".join(paths)] = cmd.score(paths, options)
    if config.get("extra"):
        cmd.finish(results, config["extra"],
                   build(cls, config.get("extra_options") or {}, what=f"confeval {command}"))
    return {"title": f"confeval {command}", "simulated": False,
            "sections": [cmd.section(results)]}


def _check_unchanged(path: str, sha256: str) -> None:
    if not Path(path).exists():
        raise ValueError(f"{path}: the input of this run is gone")
    if file_sha256(path) != sha256:
        raise ValueError(f"{path}: changed since the run (its SHA-256 differs from "
                         "run.json's)")


def _live_metrics(run: RunFolder, config: dict) -> dict:
    entry = suite_entry(config["suite"])
    suite = entry.live()
    options = build(suite.Options, config["options"], what=f"the {entry.name} suite")
    records = load_run_records(run.file(RunFolder.RECORDS))
    seen, first = set(), []
    for r in records:  # the run's own rule: the first record of each item
        if str(r.get("item_id")) not in seen:
            seen.add(str(r.get("item_id")))
            first.append(r)
    metrics = suite.score(first, options, config.get("model") or "local")
    old = run.read_metrics() if run.file(RunFolder.METRICS).is_file() else {}
    for key in _COPIED_FROM_THE_RUN:
        if key in old:
            metrics[key] = old[key]
    for key, value in record_counts(first).items():
        metrics.setdefault(key, value)
    return metrics


def rerun(run_dir: str | Path, out: str | Path | None = None, *, force: bool = False) -> dict:
    """The metrics of ``run_dir`` computed again from its ``run.json`` (module docstring);
    written with the report into ``out`` (a new run folder) when given."""
    run = RunFolder(run_dir, create=False)
    config = run.read_run().get("config") or {}
    if config.get("command") in ("run", "demo-live") and "suite" in config:
        metrics = _live_metrics(run, config)
    else:
        metrics = _scoring_metrics(config)
    if out is not None:
        check_output_folder(out, str(config.get("command")), force=force,
                            suite=config.get("suite"))
        target = RunFolder(out)
        target.write_run(config)
        if run.file(RunFolder.RECORDS).is_file():
            shutil.copyfile(run.file(RunFolder.RECORDS), target.file(RunFolder.RECORDS))
        publish(target, metrics)
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
