"""The run folder every command writes, and JSON that is always valid.

Layout (one folder per run)::

    RUN_DIR/
      run.json        config of the run + versions of confeval and its stack + creation time
      records.jsonl   one JSON object per scored record (including flagged/excluded ones)
      metrics.json    every computed result, including excluded-row counts
      report.html     self-contained report rendered from metrics.json
      inputs/         optional: input records a run produced itself (e.g. the demo's)

JSON written here never contains NaN or Infinity (not valid JSON): they become ``null``.

Writing. No write follows a symbolic link: every file is written to a new private file
(``O_CREAT|O_EXCL|O_NOFOLLOW``, a random name in the same folder) renamed onto its name, and
records are appended with ``O_NOFOLLOW|O_APPEND``; a folder to be written into, resumed or
replaced that is, or holds, a symbolic link is refused (:class:`SymlinkRefusedError`, naming
the link). One process writes a folder at a time: the lock is ``.NAME.lock`` beside the folder
(an ``flock``, which the kernel drops when its process dies), shared by the ways of writing:

* :func:`write_run_folder` — commands that write a whole folder at once (the scoring commands,
  ``compare``, ``guarantee``, ``rerun``, ``demo``): the folder is built privately and swapped
  in whole, so it holds exactly one run's files and never a mix of two.
* :class:`RunFolder` with :meth:`RunFolder.lock` — the live runner (``confeval <suite> run``, the
  demo's ``live-*`` folders), whose folder grows record by record and is resumed after a kill
  (:meth:`RunFolder.records_for_resume`).
* :func:`write_file` — one file the user named outside any run folder (``report --out FILE``).

Reading never writes: :func:`load_run_records` leaves a last line still being written (or cut
by a kill) in the file and out of the records.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as _dt
import errno
import fcntl
import hashlib
import json
import math
import os
import platform
import re
import secrets
import shutil
import stat
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any

import numpy as np

from ._untrusted import DuplicateKeyError, loads_unique
from ._validation import RUN_RECORDS, record_file

__all__ = ["RunFolder", "RunLockedError", "RunMismatchError", "RunRecords", "RunTransaction",
           "SymlinkRefusedError", "check_config", "check_no_symlinks", "check_output_folder",
           "dumps", "file_sha256", "load_run_records", "to_jsonable", "versions", "write_file",
           "write_run_folder"]


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
    """Versions of confeval, Python and the numeric stack, recorded in every run.json (numba
    too: with it the bootstrap of a million rows or more adds its float sums in another order,
    equal to 1e-10; confeval.metrics._compiled)."""
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": sys.version.split()[0], "platform": platform.platform()}
    for dist in ("confeval", "numpy", "scipy", "scikit-learn", "pandas", "matplotlib", "numba"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            out[dist] = "not installed"
    return out


class RunLockedError(RuntimeError):
    """Another live process is writing this run folder."""


class RunMismatchError(ValueError):
    """The run folder holds a run made with different arguments, or something confeval must
    not write into."""


class SymlinkRefusedError(RunMismatchError):
    """A path confeval was to write is, or is inside a folder that holds, a symbolic link: the
    write could land outside the run folder."""


# Flags of every open here. O_NOFOLLOW: a symbolic link as the last component fails (ELOOP)
# instead of being followed; O_NONBLOCK: a FIFO planted under a file's name fails instead of
# blocking the open (regular files ignore the flag).
_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW_FILE = os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC
_EXISTING = os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK


def _link_refused(link: Path) -> SymlinkRefusedError:
    return SymlinkRefusedError(f"{link} is a symbolic link; confeval never writes through one: "
                               "remove it, or use another --out")


def _os_error(path: Path, exc: OSError) -> Exception:
    """``exc`` as one line naming ``path``; a symbolic link met by O_NOFOLLOW said as such."""
    if exc.errno == errno.ELOOP or (exc.errno == errno.ENOTDIR and path.is_symlink()):
        return _link_refused(path)
    return OSError(exc.errno, f"{path}: {exc.strerror}")


def _shown(names: list[str]) -> str:
    return ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")


def check_no_symlinks(folder: str | Path) -> None:
    """Refuse (:class:`SymlinkRefusedError`, naming the link) a folder that is a symbolic link
    — a dangling one too — or holds one at any depth. Nothing happens for a path that does not
    exist (it will be created) or is not a folder."""
    folder = Path(folder)
    if folder.is_symlink():
        raise _link_refused(folder)
    if not folder.is_dir():
        return
    pending = [folder]
    while pending:
        with os.scandir(pending.pop()) as entries:
            for entry in entries:
                if entry.is_symlink():
                    raise _link_refused(Path(entry.path))
                if entry.is_dir(follow_symlinks=False):
                    pending.append(Path(entry.path))


def _name_parts(name: str) -> list[str]:
    """A file name inside a run folder (``a.json``, ``inputs/a.jsonl``) as its parts."""
    parts = name.split("/")
    if any(p in ("", ".", "..") for p in parts):
        raise ValueError(f"{name!r}: not a file name inside a run folder")
    return parts


@contextlib.contextmanager
def _folder_fd(folder: Path, subfolders: Iterable[str] = (), *,
               follow: bool = False) -> Iterator[int]:
    """A descriptor of ``folder`` (opened without following a link there, unless ``follow``)
    and of its ``subfolders`` below it (created when missing, never followed): the writes
    below happen relative to it, so no folder on the way can be swapped for a link."""
    try:
        fd = os.open(folder, _FOLDER & ~os.O_NOFOLLOW if follow else _FOLDER)
    except OSError as exc:
        raise _os_error(folder, exc) from None
    try:
        for part in subfolders:
            folder = folder / part
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, dir_fd=fd)
            try:
                sub = os.open(part, _FOLDER, dir_fd=fd)
            except OSError as exc:
                raise _os_error(folder, exc) from None
            os.close(fd)
            fd = sub
        yield fd
    finally:
        os.close(fd)


def _new_private_file(dfd: int, base: str, target: Path) -> tuple[str, int]:
    """A new file (O_EXCL: never one that exists, link or not) named after ``base`` with a
    random part, in the folder of ``dfd``."""
    for _ in range(16):
        tmp = f".{base[:100]}.{secrets.token_hex(8)}.tmp"
        try:
            return tmp, os.open(tmp, _NEW_FILE, 0o666, dir_fd=dfd)
        except FileExistsError:
            continue
        except OSError as exc:
            raise _os_error(target.parent / tmp, exc) from None
    raise FileExistsError(f"{target.parent}: no free name for a temporary file")


def _replace_in(folder: Path, name: str, fill: Callable[[IO[bytes]], object], *,
                follow_folder: bool = False) -> Path:
    """Write ``folder/name`` through a new private file renamed onto the name: a link at the
    name is replaced, never followed, and a reader (or a kill) sees the old file or the new one,
    whole. ``fill`` writes the content into the open file."""
    *subfolders, base = _name_parts(name)
    target = folder.joinpath(*subfolders, base)
    with _folder_fd(folder, subfolders, follow=follow_folder) as dfd:
        tmp, fd = _new_private_file(dfd, base, target)
        try:
            with os.fdopen(fd, "wb") as fh:
                fill(fh)
            try:
                os.replace(tmp, base, src_dir_fd=dfd, dst_dir_fd=dfd)
            except OSError as exc:
                raise _os_error(target, exc) from None
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dfd)
            raise
    return target


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _require_regular(fd: int, path: Path) -> None:
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        raise RunMismatchError(f"{path}: not a regular file; move it away, or use another --out")


def write_file(path: str | Path, data: str | bytes) -> Path:
    """Write one file the user named outside a run folder (``confeval report --out FILE``),
    atomically: ``path`` being a symbolic link (a dangling one too) is refused
    (:class:`SymlinkRefusedError`); the folder it is in is the user's choice and may be one."""
    path = Path(path)
    if path.is_symlink():
        raise _link_refused(path)
    blob = data.encode("utf-8") if isinstance(data, str) else data
    return _replace_in(path.parent, path.name, lambda fh: fh.write(blob), follow_folder=True)


# ---------------------------------------------------------------------------------- the lock

def _lock_path(folder: Path) -> Path:
    # Beside the folder, not in it: a swap that replaces the folder cannot take the lock along.
    return folder.parent / f".{folder.name}.lock"


def _same_file(fd: int, path: Path) -> bool:
    try:
        named = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        return False
    own = os.fstat(fd)
    return (named.st_dev, named.st_ino) == (own.st_dev, own.st_ino)


def _holder(fd: int) -> str:
    """The pid a lock file names ("" while its holder has not written it yet)."""
    pid = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    return pid if pid.isdigit() else ""


def _locked_error(folder: Path, fd: int) -> RunLockedError:
    pid = _holder(fd)
    who = f" (pid {pid})" if pid else ""
    return RunLockedError(f"{folder} is being written by another process{who}; wait for it to "
                          "finish, or use another --out")


def _refuse_if_held_elsewhere(folder: Path) -> None:
    """:class:`RunLockedError` if another process holds ``folder``'s lock, before anything
    judges what the folder holds: a live run writing it has its files half-written (a
    ``.run.json.*.tmp`` before its rename), which is no reason to call them foreign. Reads
    only: the lock file is opened if it exists, never created, and a shared lock is tried and
    dropped. The lock this process holds itself (its pid in the file) is not another's."""
    path = _lock_path(folder)
    try:
        fd = os.open(path, os.O_RDONLY | _EXISTING)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise _os_error(path, exc) from None
    try:
        _require_regular(fd, path)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            if _holder(fd) != str(os.getpid()):
                raise _locked_error(folder, fd) from None
    finally:
        os.close(fd)   # drops the shared lock, if taken


def _acquire(folder: Path) -> int:
    """Lock ``folder`` for this process (an flock on ``.NAME.lock``, holding our pid for the
    message another process gets) or raise :class:`RunLockedError`. The kernel drops the lock
    when its process dies, however: a kill -9 leaves no lock to take over."""
    path = _lock_path(folder)
    for _ in range(100):
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | _EXISTING, 0o666)
        except OSError as exc:
            raise _os_error(path, exc) from None
        try:
            _require_regular(fd, path)
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            error = _locked_error(folder, fd)
            os.close(fd)
            raise error from None
        except BaseException:
            os.close(fd)
            raise
        # Its holder may have released and removed the file between our open and our flock:
        # a lock on a file no longer under the name excludes nobody, so start again.
        if _same_file(fd, path):
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            return fd
        os.close(fd)
    raise RunLockedError(f"{folder}: its lock {path} changed hands 100 times; try again")


@contextlib.contextmanager
def _held(folder: Path) -> Iterator[None]:
    fd = _acquire(folder)
    try:
        yield
    finally:
        # Removed while still locked: a process that opened the file meanwhile gets the flock
        # only after the close below, finds the name gone (_same_file) and starts again.
        with contextlib.suppress(FileNotFoundError):
            os.unlink(_lock_path(folder))
        os.close(fd)


# ----------------------------------------------------------------------------- run folders

def _make_folder(path: Path) -> None:
    """Create ``path`` (and its parents), or check the existing folder holds no link."""
    if path.is_symlink():
        raise _link_refused(path)
    if path.exists() and not path.is_dir():
        raise RunMismatchError(f"{path}: exists and is not a folder; use another --out")
    path.mkdir(parents=True, exist_ok=True)
    check_no_symlinks(path)


class RunFolder:
    """Read and write the files of one run folder (see the module docstring).

    ``RunFolder(path)`` creates the folder, or refuses (:class:`SymlinkRefusedError`) an
    existing one that is or holds a symbolic link; ``create=False`` only reads. This is the
    live runner's folder, written over time under :meth:`lock`; a command that writes a whole
    folder at once uses :func:`write_run_folder` instead."""

    LOCK = ".lock"  # the lock file earlier versions kept inside the folder (now .NAME.lock)
    RUN = "run.json"
    RECORDS = RUN_RECORDS
    METRICS = "metrics.json"
    REPORT = "report.html"

    def __init__(self, path: str | Path, *, create: bool = True) -> None:
        self.path = Path(path)
        self._locked = False
        if create:
            _make_folder(self.path)
        elif not self.path.is_dir():
            raise FileNotFoundError(f"{self.path}: not a run folder (no such directory)")

    def file(self, name: str) -> Path:
        return self.path / name

    def write_bytes(self, name: str, data: bytes) -> Path:
        """Write ``name`` (``inputs/x.jsonl`` makes the subfolder) atomically, never through
        a symbolic link: a new private file renamed onto the name."""
        return _replace_in(self.path, name, lambda fh: fh.write(data))

    def write_text(self, name: str, text: str) -> Path:
        """:meth:`write_bytes` of UTF-8 text (``compare.csv``, ...)."""
        return self.write_bytes(name, text.encode("utf-8"))

    def copy_file(self, source: str | Path, name: str) -> Path:
        """Copy ``source`` (read, even through a link: reading is harmless) to ``name`` as
        :meth:`write_bytes` writes, in blocks."""
        with open(source, "rb") as src:
            return _replace_in(self.path, name, lambda fh: shutil.copyfileobj(src, fh))

    def write_run(self, config: Mapping[str, Any]) -> Path:
        now = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
        return self.write_text(self.RUN, dumps({"config": config, "versions": versions(),
                                                "created": now}) + "\n")

    def read_run(self) -> dict:
        """run.json; a damaged one is a :class:`ValueError` naming the file."""
        return _read_json_object(self.file(self.RUN))

    def config(self) -> dict:
        """run.json's ``config``: an object with a ``command`` (an empty one when run.json has
        none); anything else is a :class:`ValueError` naming the file and the key."""
        config = self.read_run().get("config", {})
        if not isinstance(config, dict):
            raise ValueError(f"{self.file(self.RUN)}: 'config' is a {type(config).__name__}, "
                             "not an object: not a run.json confeval wrote")
        command = config.get("command")
        if command is not None and not isinstance(command, str):
            raise ValueError(f"{self.file(self.RUN)}: 'command' is {command!r}, not a name")
        for key in ("suite", "model"):
            if config.get(key) is not None and not isinstance(config[key], str):
                raise ValueError(f"{self.file(self.RUN)}: {key!r} is {config[key]!r}, not a "
                                 "name")
        return config

    def write_records(self, records: Iterable[Mapping[str, Any]], name: str = RECORDS) -> Path:
        text = "".join(dumps(r, indent=None) + "\n" for r in records)
        return self.write_text(name, text)

    def append_records(self, records: Iterable[Mapping[str, Any]], *, sync: bool = True) -> None:
        """Append complete lines to records.jsonl (O_APPEND, never through a link), in one
        write handed to the OS (and to disk with ``sync``): a killed process loses nothing the
        OS has received."""
        path = self.file(self.RECORDS)
        data = "".join(dumps(r, indent=None) + "\n" for r in records).encode("utf-8")
        with _folder_fd(self.path) as dfd:
            try:
                fd = os.open(self.RECORDS, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _EXISTING,
                             0o666, dir_fd=dfd)
            except OSError as exc:
                raise _os_error(path, exc) from None
        try:
            _require_regular(fd, path)
            _write_all(fd, data)
            if sync:
                os.fsync(fd)
        finally:
            os.close(fd)

    def read_records(self) -> RunRecords:
        """The records of records.jsonl (see :func:`load_run_records`)."""
        return load_run_records(self.file(self.RECORDS))

    def records_for_resume(self) -> RunRecords:
        """The records of records.jsonl for a run resuming this folder, the file made ready
        for appending: a last line a kill cut short is cut off, one that lacks only its newline
        gets it. It changes the file, so it needs :meth:`lock` (else ``RuntimeError``);
        readers use :func:`load_run_records`, which never writes."""
        if not self._locked:
            raise RuntimeError(f"{self.path}: records_for_resume() changes records.jsonl; call "
                               "it inside `with run.lock():`")
        path = self.file(self.RECORDS)
        with _folder_fd(self.path) as dfd:
            try:
                fd = os.open(self.RECORDS, os.O_RDWR | _EXISTING, dir_fd=dfd)
            except FileNotFoundError:
                return RunRecords()
            except OSError as exc:
                raise _os_error(path, exc) from None
        with os.fdopen(fd, "r+b") as fh:
            _require_regular(fh.fileno(), path)
            complete, tail = _split_tail(fh.read())
            if tail and _whole_record(tail):
                fh.write(b"\n")  # at the end, after the read
                complete += tail + b"\n"
            elif tail:
                fh.truncate(len(complete))
        return _parse_records(path, complete)

    @contextlib.contextmanager
    def lock(self) -> Iterator[RunFolder]:
        """Hold the folder for one writing process: a second run into it — live, or a
        :func:`write_run_folder` of the same folder — is refused (:class:`RunLockedError`,
        naming the holder's pid) while the first is alive (two runs would write every record
        twice). The folder is checked again for links once held."""
        with _held(self.path):
            check_no_symlinks(self.path)
            self._locked = True
            try:
                yield self
            finally:
                self._locked = False

    def write_json(self, name: str, document: Any) -> Path:
        """Another JSON file of the run (a guarantee's ``policy.json``), written atomically."""
        return self.write_text(name, dumps(document) + "\n")

    def write_metrics(self, metrics: Mapping[str, Any]) -> Path:
        return self.write_text(self.METRICS, dumps(metrics) + "\n")

    def read_metrics(self) -> dict:
        path = self.file(self.METRICS)
        if not path.is_file():
            raise FileNotFoundError(f"{self.path}: no {self.METRICS} (was the run finished?)")
        return _read_json_object(path)

    def write_report(self, html: str) -> Path:
        return self.write_text(self.REPORT, html)


class RunTransaction(RunFolder):
    """A run folder being written by :func:`write_run_folder`: every write goes to ``path``,
    a private folder beside ``target`` (``.NAME.tmp-<random>``), which becomes ``target``, whole,
    when the ``with`` block ends without an exception. Its lock is the transaction's."""

    def __init__(self, target: Path, path: Path) -> None:
        super().__init__(path, create=False)
        self.target = target
        self._locked = True

    @contextlib.contextmanager
    def lock(self) -> Iterator[RunFolder]:
        yield self  # the transaction holds the target's lock already


def _private_name(target: Path, kind: str) -> Path:
    return target.parent / f".{target.name}.{kind}-{secrets.token_hex(8)}"


def _private_folder(target: Path) -> Path:
    for _ in range(16):
        path = _private_name(target, "tmp")
        try:
            os.mkdir(path)  # never an existing entry, link or not
            return path
        except FileExistsError:
            continue
        except OSError as exc:
            raise _os_error(path, exc) from None
    raise FileExistsError(f"{target.parent}: no free name for a temporary folder")


def _target_folder(out: str | Path) -> Path:
    if not str(out).strip():
        raise RunMismatchError("--out is empty: name a folder")
    path = Path(out)
    if path.name in ("", ".", ".."):
        raise RunMismatchError(f"--out {out}: name the folder itself (e.g. --out ../NAME): a "
                               "run folder is replaced whole")
    return path


def _recover(target: Path) -> None:
    """Finish what a killed writer of ``target`` left beside it (called under the lock, so no
    live writer owns any of it): a temporary folder or an old one set for deletion is removed;
    an old folder renamed away but not replaced — killed between the swap's two renames — is
    put back, so the last complete run is the folder again."""
    pattern = re.compile(rf"\.{re.escape(target.name)}\.(tmp|old|del)-[0-9a-f]{{16}}")
    with os.scandir(target.parent) as entries:
        found = [(m.group(1), Path(e.path)) for e in entries
                 if (m := pattern.fullmatch(e.name)) and e.is_dir(follow_symlinks=False)]
    for kind, path in sorted(found, key=lambda found: found[0] != "old"):
        if kind == "old" and not os.path.lexists(target):
            os.rename(path, target)
        else:
            shutil.rmtree(path)


def _check_replaceable(target: Path) -> None:
    """A folder replaced whole is deleted: even with --force (which lets
    :func:`check_output_folder` pass anything), refuse one that is not a run folder."""
    if not os.path.lexists(target):
        return
    if not target.is_dir():
        raise RunMismatchError(f"--out {target}: exists and is not a folder; use another --out")
    names = sorted(n for n in os.listdir(target) if n != RunFolder.LOCK)
    if names and RunFolder.RUN not in names:
        raise RunMismatchError(f"--out {target} holds files confeval did not write "
                               f"({_shown(names)}) and would be replaced whole; use another "
                               "folder")


def _swap_in(new: Path, target: Path) -> None:
    """Put the complete folder ``new`` at ``target``.

    POSIX has no rename of a folder onto a non-empty one, and no portable atomic exchange, so:
    (1) ``target`` -> ``.NAME.old-R``, (2) ``new`` -> ``target``, (3) ``.NAME.old-R`` ->
    ``.NAME.del-R``, (4) delete that. Every name holds one complete run or nothing, at every
    instant: a reader never sees a mixed folder, only for the instant between (1) and (2) no
    folder. A kill anywhere leaves a state :func:`_recover` resolves under the lock: before (1)
    the target is untouched; between (1) and (2) the old folder is put back; after (2) the
    leftovers are deleted (``.old`` beside an existing target is one whose swap finished)."""
    if not os.path.lexists(target):
        os.rename(new, target)
        return
    old = _private_name(target, "old")
    os.rename(target, old)
    try:
        os.rename(new, target)
    except BaseException:
        os.rename(old, target)
        raise
    with contextlib.suppress(OSError):  # the new run is in place; a later writer cleans up
        trash = _private_name(target, "del")
        os.rename(old, trash)
        shutil.rmtree(trash, ignore_errors=True)


@contextlib.contextmanager
def write_run_folder(out: str | Path, *, command: str, suite: str | None = None,
                     force: bool = False) -> Iterator[RunTransaction]:
    """Write the run folder ``out`` as one transaction, by one writer::

        with write_run_folder(out, command="compare", force=force) as folder:
            folder.write_run(config)
            publish(folder, metrics)                # metrics.json, report.html
            folder.write_text("compare.csv", csv)

    On entry: the lock of ``out`` is taken (:class:`RunLockedError` if another process holds
    it — a live run of the folder too), what a killed writer left beside it is cleaned up,
    :func:`check_output_folder` (``command``, ``suite``, ``force``) is applied, links are
    refused (:class:`SymlinkRefusedError`), and a folder holding files confeval did not write is
    refused even with ``force`` (it would be deleted). Inside, ``folder`` writes into a private
    temporary folder beside ``out``; ``folder.target`` is ``out``. On a normal exit the folder
    (which must hold run.json) replaces ``out`` whole (:func:`_swap_in`): ``out`` then holds
    exactly this run's files. On an exception (or a kill) ``out`` is left as it was and the
    temporary folder removed (by a later writer, after a kill)."""
    target = _target_folder(out)
    target.parent.mkdir(parents=True, exist_ok=True)
    with _held(target):
        _recover(target)
        check_output_folder(target, command, force=force, suite=suite)
        _check_replaceable(target)
        folder = RunTransaction(target, _private_folder(target))
        try:
            yield folder
            if not folder.file(RunFolder.RUN).is_file():
                raise RuntimeError(f"{target}: the run wrote no {RunFolder.RUN} (write_run "
                                   "first); the folder was left as it was")
            try:
                _swap_in(folder.path, target)
            except OSError as exc:
                raise _os_error(target, exc) from None
        finally:
            shutil.rmtree(folder.path, ignore_errors=True)  # gone already once swapped in


def _inputs_inside(folder: Path, inputs: Iterable[str | Path]) -> list[Path]:
    """The ``inputs`` that are ``folder`` or lie inside it (paths resolved, links followed:
    what would be read is what the folder's replacement would delete)."""
    root = folder.resolve()
    inside = []
    for item in inputs:
        path = Path(item).resolve()
        if path.exists() and (path == root or root in path.parents):
            inside.append(Path(item))
    return inside


def check_output_folder(out: str | Path | None, command: str, *, force: bool = False,
                        suite: str | None = None, inputs: Iterable[str | Path] = (),
                        option: str = "--out") -> None:
    """Refuse (:class:`RunMismatchError`) to write into a folder that holds anything
    ``command`` did not write — another command's or another suite's run folder, a
    ``records.jsonl`` without a ``run.json``, any other file — unless ``force``. A folder of
    the same command (and suite) passes: a scoring command rewrites it, a live run resumes
    it. ``out`` being a symbolic link (a dangling one too), or a folder holding one, is refused
    whatever ``force`` (:class:`SymlinkRefusedError`); so is a folder another process is writing
    (its lock held: :class:`RunLockedError`), before its files are judged. Called before
    anything expensive (a model load) happens, and again by :func:`write_run_folder` under the
    lock. ``inputs``, the files the command reads: one that is the folder or inside it is
    refused whatever ``force`` (writing the folder replaces it whole, the input with it).
    ``option`` is the flag that named the folder, for the messages."""
    if out is None:
        return
    path = Path(out)
    if not str(out).strip():
        raise RunMismatchError(f"{option} is empty: name a folder")
    check_no_symlinks(path)
    if not path.exists():
        return
    inside = _inputs_inside(path, inputs)
    if inside:
        raise RunMismatchError(f"{option} {path} holds {_shown([str(p) for p in inside])}, "
                               "read by this command; writing the folder would replace it: "
                               "write elsewhere")
    _refuse_if_held_elsewhere(path)
    if force:
        return
    if not path.is_dir():
        raise RunMismatchError(f"{option} {path}: exists and is not a folder")
    names = sorted(p.name for p in path.iterdir() if p.name != RunFolder.LOCK)
    if not names:
        return
    if RunFolder.RUN not in names:
        raise RunMismatchError(f"{option} {path} holds files confeval did not write "
                               f"({_shown(names)}); use another folder, or --force to write "
                               "into it")
    config = RunFolder(path, create=False).config()
    previous = config.get("command")
    if previous == command and (suite is None or config.get("suite") == suite):
        return
    what = f"`confeval {previous or '?'}`" + (f" ({config['suite']})"
                                                if config.get("suite") else "")
    raise RunMismatchError(f"{option} {path} holds the results of {what}; use another "
                           "folder, or --force to overwrite it")


def file_sha256(path: str | Path) -> str:
    """The SHA-256 of a record file (a run folder: of its records), read in blocks."""
    digest = hashlib.sha256()
    with open(record_file(path), "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _read_json_object(path: Path) -> dict:
    try:
        value = loads_unique(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not UTF-8 text") from None
    except DuplicateKeyError as exc:   # json would keep the last value, another reader the first
        raise ValueError(f"{path}: {exc}; not a file confeval wrote, or edited since") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON ({exc.msg}, line {exc.lineno})") from None
    except ValueError as exc:   # a number past Python's digit limit for integers
        raise ValueError(f"{path}: not valid JSON ({exc})") from None
    except RecursionError:
        raise ValueError(f"{path}: JSON nested too deeply") from None
    if not isinstance(value, dict):
        raise ValueError(f"{path}: expected a JSON object, got {type(value).__name__}")
    return value


class RunRecords(list):
    """The records of a records.jsonl (a list of dicts), with ``incomplete``: 1 when its last
    line had no newline and was not a whole record — cut short by a kill, or still being
    written by a live run — and was left out; else 0."""

    def __init__(self, records: Iterable[dict] = (), incomplete: int = 0) -> None:
        super().__init__(records)
        self.incomplete = incomplete


def _split_tail(data: bytes) -> tuple[bytes, bytes]:
    """The bytes of a records file as (its complete lines, a last line without newline)."""
    cut = data.rfind(b"\n") + 1
    return data[:cut], data[cut:]


def _whole_record(tail: bytes) -> bool:
    """Whether a last line without its newline is a whole record nonetheless (written by
    hand, or a kill between the record and its newline). A line cut short never is: a record
    is a JSON object, and only its last character closes it. A key named twice does not
    make it partial: :func:`_parse_records` then names that line, which a resume must not
    repair away as a cut one."""
    try:
        value = json.loads(tail)
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError too
        return False
    return isinstance(value, dict) and "item_id" in value


def _parse_records(path: Path, data: bytes, incomplete: int = 0) -> RunRecords:
    records = RunRecords(incomplete=incomplete)
    # split on b"\n" alone: str.splitlines would also split inside a record at U+2028 and the
    # other line breaks JSON leaves unescaped (written raw with ensure_ascii=False)
    for number, raw in enumerate(data.split(b"\n"), 1):
        line = raw.decode("utf-8", errors="replace")
        if not line.strip():
            continue
        try:
            record = loads_unique(line)
        # a number past the digit limit, a key named twice (DuplicateKeyError) too
        except (ValueError, RecursionError) as exc:
            why = getattr(exc, "msg", str(exc)) if isinstance(exc, ValueError) else \
                "nested too deeply"
            raise ValueError(f"{path}, line {number}: not a record this run wrote ({why}); "
                             "move the file away or use another --out") from None
        if not isinstance(record, dict) or "item_id" not in record:
            raise ValueError(f"{path}, line {number}: not a record this run wrote (a JSON "
                             "object with an item_id); move the file away or use another "
                             "--out")
        records.append(record)
    return records


def load_run_records(path: str | Path) -> RunRecords:
    """Read records.jsonl without changing it. A last line without its newline is a record
    when it is a whole one; otherwise (cut short by a kill, or being written by a live run
    right now) it is left out and counted in ``.incomplete``. Only a resuming run, holding the
    lock, repairs the file (:meth:`RunFolder.records_for_resume`)."""
    path = Path(path)
    if not path.is_file():
        return RunRecords()
    complete, tail = _split_tail(path.read_bytes())
    if not tail.strip():
        return _parse_records(path, complete)
    if _whole_record(tail):
        return _parse_records(path, complete + tail)
    return _parse_records(path, complete, incomplete=1)


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
