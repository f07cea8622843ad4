"""The ``run.json`` of a scoring command: what ``confeval rerun`` needs to repeat it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..runs import file_sha256
from . import SCORING_COMMANDS

__all__ = ["input_name", "scoring_config"]


def scoring_config(command: str, inputs: Sequence[Sequence[Path]],
                   options: Mapping[str, dict], **extra: Any) -> dict:
    """The ``run.json`` config of a scoring command: every input as given (``path``: one file,
    or the list of files scored together), its SHA-256, every option it was scored with, the
    columns each column glob matched (``resolved``) and the SHA-256 of files named by
    options (what ``confeval rerun`` needs to repeat it)."""
    cmd = SCORING_COMMANDS[command]
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
        named = {used[k]: file_sha256(used[k]) for k in cmd.file_options if used.get(k)}
        if named:
            entry["option_files"] = named
        entries.append(entry)
    return {"command": command, **extra, "inputs": entries}


def _resolved_globs(path: Path, used: Mapping[str, Any]) -> dict[str, list[str]]:
    """The columns each glob option (``'logit_*'``) matched in ``path``: the file is read
    again for its header, only when a glob was given."""
    globs = {k: v for k, v in used.items()
             if isinstance(v, str) and any(ch in v for ch in "*?[")}
    if not globs:
        return {}
    from ..ingest import detect
    from ..records import RecordsError, RecordSet, resolve_columns  # pandas: only for a glob

    if detect(path) is not None:   # another tool's file: its columns are confeval's layout
        return {}
    columns = list(RecordSet.read(path).frame.columns)
    out = {}
    for key, spec in globs.items():
        try:
            out[key] = resolve_columns(columns, spec)
        except RecordsError:        # a glob on other rows (a run folder's nested records)
            continue
    return out


def input_name(paths: Sequence[Path]) -> str:
    return " vs ".join(str(p) for p in paths)
