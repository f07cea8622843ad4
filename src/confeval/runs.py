"""The run folder every suite writes, and JSON that is always valid.

Layout (one folder per run)::

    RUN_DIR/
      run.json        config of the run + versions of confeval and its stack + creation time
      records.jsonl   one JSON object per scored record (including flagged/excluded ones)
      metrics.json    every computed result, including excluded-row counts
      report.html     self-contained report rendered from metrics.json
      inputs/         optional: input records a run produced itself (e.g. the demo's)

JSON written here never contains NaN or Infinity (not valid JSON): they become ``null``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as _dt
import hashlib
import json
import math
import os
import platform
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ._validation import RUN_RECORDS, record_file

__all__ = ["RunFolder", "RunLockedError", "RunMismatchError", "check_config",
           "check_output_folder", "dumps", "file_sha256", "load_run_records", "to_jsonable",
           "versions"]


def to_jsonable(obj: Any) -> Any:
    """Convert numpy scalars/arrays, dataclasses, paths and non-finite floats for JSON."""
    if isinstance(obj, Mapping):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return to_jsonable(obj.tolist())
    if isinstance(obj, (np.bool_, bool)):
        return bool(obj)
    if isinstance(obj, (np.integer, int)):
        return int(obj)
    if isinstance(obj, (np.floating, float)):
        value = float(obj)
        return value if math.isfinite(value) else None
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return to_jsonable(obj.to_dict() if hasattr(obj, "to_dict") else dataclasses.asdict(obj))
    if isinstance(obj, Path):
        return str(obj)
    return obj


def dumps(obj: Any, *, indent: int | None = 2) -> str:
    """JSON text of ``obj`` after :func:`to_jsonable` (strict: no NaN)."""
    return json.dumps(to_jsonable(obj), indent=indent, allow_nan=False, ensure_ascii=False)


def versions() -> dict[str, str]:
    """Versions of confeval, Python and the numeric stack, recorded in every run.json."""
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": sys.version.split()[0], "platform": platform.platform()}
    for dist in ("confeval", "numpy", "scipy", "scikit-learn", "pandas", "matplotlib"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            out[dist] = "not installed"
    return out


class RunLockedError(RuntimeError):
    """Another live process is writing to this run folder."""


class RunFolder:
    """Read and write the files of one run folder (see the module docstring)."""

    LOCK = ".lock"
    RUN = "run.json"
    RECORDS = RUN_RECORDS
    METRICS = "metrics.json"
    REPORT = "report.html"

    def __init__(self, path: str | Path, *, create: bool = True) -> None:
        self.path = Path(path)
        if create:
            self.path.mkdir(parents=True, exist_ok=True)
        elif not self.path.is_dir():
            raise FileNotFoundError(f"{self.path}: not a run folder (no such directory)")

    def file(self, name: str) -> Path:
        return self.path / name

    def _write_text(self, name: str, text: str) -> Path:
        # Write then rename, so a killed process never leaves a half-written file behind.
        target = self.file(name)
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(target.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, target)
        return target

    def write_run(self, config: Mapping[str, Any]) -> Path:
        now = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
        return self._write_text(self.RUN, dumps({"config": config, "versions": versions(),
                                                 "created": now}) + "\n")

    def read_run(self) -> dict:
        """run.json; a damaged one is a :class:`ValueError` naming the file."""
        return _read_json_object(self.file(self.RUN))

    def write_records(self, records: Iterable[Mapping[str, Any]], name: str = RECORDS) -> Path:
        text = "".join(dumps(r, indent=None) + "\n" for r in records)
        return self._write_text(name, text)

    def append_records(self, records: Iterable[Mapping[str, Any]], *, sync: bool = True) -> None:
        """Append complete lines to records.jsonl, flushed to the OS (and to disk with
        ``sync``): a killed process loses nothing the OS has received."""
        with open(self.file(self.RECORDS), "a", encoding="utf-8") as fh:
            for r in records:
                fh.write(dumps(r, indent=None) + "\n")
            fh.flush()
            if sync:
                os.fsync(fh.fileno())

    def read_records(self) -> list[dict]:
        """The records of records.jsonl (see :func:`load_run_records`)."""
        return load_run_records(self.file(self.RECORDS))

    @contextlib.contextmanager
    def lock(self):
        """Hold the folder for one writing process: a second run into the same folder is
        refused while the first is alive (two runs would write every record twice). A lock
        left by a killed process (its pid no longer runs) is taken over."""
        path = self.file(self.LOCK)
        for _ in range(2):
            try:
                fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                try:
                    pid = int(path.read_text().strip() or 0)
                except (OSError, ValueError):
                    pid = 0
                if pid and pid != os.getpid() and _alive(pid):
                    raise RunLockedError(f"{self.path} is being written by another run (pid "
                                         f"{pid}); wait for it, or use another --out") from None
                path.unlink(missing_ok=True)  # stale: its process is gone
                continue
            with os.fdopen(fd, "w") as fh:
                fh.write(str(os.getpid()))
            break
        try:
            yield self
        finally:
            path.unlink(missing_ok=True)

    def write_json(self, name: str, document: Any) -> Path:
        """Another JSON file of the run (a guarantee's ``policy.json``), written atomically."""
        return self._write_text(name, dumps(document) + "\n")

    def write_metrics(self, metrics: Mapping[str, Any]) -> Path:
        return self._write_text(self.METRICS, dumps(metrics) + "\n")

    def read_metrics(self) -> dict:
        path = self.file(self.METRICS)
        if not path.is_file():
            raise FileNotFoundError(f"{self.path}: no {self.METRICS} (was the run finished?)")
        return _read_json_object(path)

    def write_report(self, html: str) -> Path:
        return self._write_text(self.REPORT, html)


class RunMismatchError(ValueError):
    """The run folder holds a run made with different arguments."""


def check_output_folder(out: str | Path | None, command: str, *, force: bool = False,
                        suite: str | None = None) -> None:
    """Refuse (:class:`RunMismatchError`) to write into a folder that holds anything
    ``command`` did not write — another command's or another suite's run folder, a
    ``records.jsonl`` without a ``run.json``, any other file — unless ``force``. A folder of
    the same command (and suite) passes: a scoring command rewrites it, a live run resumes
    it. Called before anything expensive (a model load) happens."""
    if out is None:
        return
    path = Path(out)
    if not str(out).strip():
        raise RunMismatchError("--out is empty: name a folder")
    if force or not path.exists():
        return
    if not path.is_dir():
        raise RunMismatchError(f"--out {path}: exists and is not a folder")
    names = sorted(p.name for p in path.iterdir() if p.name != RunFolder.LOCK)
    if not names:
        return
    if RunFolder.RUN not in names:
        shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
        raise RunMismatchError(f"--out {path} holds files confeval did not write ({shown}); "
                               "use another folder, or --force to write into it")
    config = RunFolder(path, create=False).read_run().get("config") or {}
    previous = config.get("command")
    if previous == command and (suite is None or config.get("suite") == suite):
        return
    what = f"`confeval {previous or '?'}`" + (f" ({config['suite']})"
                                                if config.get("suite") else "")
    raise RunMismatchError(f"--out {path} holds the results of {what}; use another folder, "
                           "or --force to overwrite it")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def file_sha256(path: str | Path) -> str:
    """The SHA-256 of a record file (a run folder: of its records), read in blocks."""
    digest = hashlib.sha256()
    with open(record_file(path), "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _read_json_object(path: Path) -> dict:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON ({exc.msg}, line {exc.lineno})") from None
    except RecursionError:
        raise ValueError(f"{path}: JSON nested too deeply") from None
    if not isinstance(value, dict):
        raise ValueError(f"{path}: expected a JSON object, got {type(value).__name__}")
    return value


def load_run_records(path: Path) -> list[dict]:
    """Read records.jsonl, cutting off a last line left incomplete by a kill."""
    if not path.is_file():
        return []
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        data = data[: data.rfind(b"\n") + 1]
        path.write_bytes(data)
    records = []
    for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except (json.JSONDecodeError, RecursionError) as exc:
            why = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
            raise ValueError(f"{path}, line {number}: not a record this run wrote ({why}); "
                             "move the file away or use another --out") from None
        if not isinstance(record, dict) or "item_id" not in record:
            raise ValueError(f"{path}, line {number}: not a record this run wrote (a JSON "
                             "object with an item_id); move the file away or use another "
                             "--out")
        records.append(record)
    return records


def _first_difference(old: Any, new: Any, path: tuple = ()) -> tuple | None:
    """(key path, old value, new value) of the first difference, or None."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in [*old, *(k for k in new if k not in old)]:
            found = _first_difference(old.get(key), new.get(key), (*path, key))
            if found:
                return found
        return None
    return None if old == new else (path, old, new)


def check_config(run: RunFolder, config: Mapping[str, Any]) -> None:
    """Write ``config`` into a new run folder's run.json; in an existing one, refuse (with a
    :class:`RunMismatchError` naming the first differing option) anything but the same."""
    path = run.file(RunFolder.RUN)
    if not path.is_file():
        run.write_run(config)
        return
    old = _read_json_object(path).get("config")
    found = _first_difference(old, json.loads(dumps(config)))
    if found and not run.file(RunFolder.RECORDS).is_file():
        run.write_run(config)  # a start that failed before its first record holds nothing
        return
    if found:
        keys, was, now = found
        name = keys[-1] if keys else "config"
        flag = "--" + str(name).replace("_", "-")
        raise RunMismatchError(f"{run.path} holds a run made with {flag} {was!r}; this one has "
                               f"{flag} {now!r}: use another --out, or the same options to "
                               "resume it")
