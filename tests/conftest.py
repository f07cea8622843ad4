"""What every test shares: a home of the run's own, so the suite leaves the user's alone.

Tools the tests run keep files in the home directory whatever they are told: headless Chromium
writes ``~/.config/chromium/Crash Reports`` and ``~/.cache/dconf`` even with
``--user-data-dir``; Inspect keeps its trace logs, sample buffer and control files under
``~/.local/share/inspect_ai``; matplotlib its font list under ``~/.cache/matplotlib``. So HOME
and the XDG base directories point into one temporary folder for the whole run, which every
child process inherits; it is removed when the run ends.

The exception is the embedded model's export, ``~/.cache/confeval/models``: the shared cache
the README's demo fills (500 MB, minutes to write). Tests that load the model read it there
(``CONFEVAL_MODELS``), and on a fresh machine the first of them exports it there once, as the
demo would. Nothing else of confeval's goes to the real home: the response cache follows
XDG_CACHE_HOME into the temporary folder.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

XDG_DIRS = {"XDG_CONFIG_HOME": ".config", "XDG_DATA_HOME": ".local/share",
            "XDG_CACHE_HOME": ".cache", "XDG_STATE_HOME": ".local/state"}
"""The base directories tools read before falling back to HOME (platformdirs, Chromium)."""


def model_root(home: Path, environ: dict[str, str] | None = None) -> Path:
    """Where confeval exports the embedded model when CONFEVAL_MODELS is unset: the default of
    ``confeval.backends.local.export_dir``, in the user's XDG_CACHE_HOME else ``home/.cache``
    (written out, not imported: nothing of confeval is imported before HOME moves;
    tests/test_home.py checks the two agree)."""
    cache = (environ or {}).get("XDG_CACHE_HOME")
    here = (Path(cache) if cache and os.path.isabs(cache) else home / ".cache") / "confeval" / \
        "models"
    legacy = home / ".cache" / "confeval" / "models"   # an export made before XDG was followed
    return legacy if here != legacy and not here.exists() and legacy.is_dir() else here


def home_env(real_home: Path, run_home: Path, environ: dict[str, str]) -> dict[str, str]:
    """The variables that move the tests' home to ``run_home``, keeping the embedded model's
    export where ``environ`` (the user's environment) puts it."""
    env = {"HOME": str(run_home)}
    env.update({name: str(run_home / sub) for name, sub in XDG_DIRS.items()})
    # matplotlib honours MPLCONFIGDIR before HOME; one set by the user would still be theirs
    env["MPLCONFIGDIR"] = str(run_home / ".config" / "matplotlib")
    env["CONFEVAL_MODELS"] = (environ.get("CONFEVAL_MODELS")
                              or str(model_root(real_home, environ)))
    return env


def user_settings(environ: dict[str, str]) -> list[str]:
    """The user's confeval variables the tests must not inherit: their response cache
    (``CONFEVAL_CACHE``, which the tests would fill), decompression caps the tests of those
    caps assume at their defaults, an Inspect report hook. Not ``CONFEVAL_MODELS``: the
    model is read where the user keeps it."""
    return sorted(name for name in environ
                  if name.startswith("CONFEVAL_") and name != "CONFEVAL_MODELS")


HOME_PREFIX = "confeval-tests-home-"


def stale_homes(temp: Path, alive=None) -> list[Path]:
    """Homes left in ``temp`` by runs that were killed before their exit handler ran: the
    folder names the run's process id, and that process is gone (``alive(pid)``, by default
    a signal-0 probe). A run beside this one keeps its home."""
    alive = alive or _alive
    out = []
    for path in temp.glob(HOME_PREFIX + "*"):
        pid = path.name[len(HOME_PREFIX):].split("-", 1)[0]
        if pid.isdigit() and not alive(int(pid)) and path.is_dir() and not path.is_symlink():
            out.append(path)
    return out


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:   # another user's process: alive, not ours to judge
        return True
    return True


def pytest_configure(config):
    # here, not in a fixture: test modules import matplotlib and Inspect while being
    # collected, and some read their directories then
    temp = Path(tempfile.gettempdir())
    for path in stale_homes(temp):
        shutil.rmtree(path, ignore_errors=True)
    run_home = Path(tempfile.mkdtemp(prefix=f"{HOME_PREFIX}{os.getpid()}-"))
    for name in user_settings(dict(os.environ)):
        del os.environ[name]
    os.environ.update(home_env(Path.home(), run_home, dict(os.environ)))
    # at exit, after Inspect's own exit handler (registered later, run first) has compressed
    # its trace log inside run_home
    atexit.register(shutil.rmtree, run_home, ignore_errors=True)
