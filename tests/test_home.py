"""The suite leaves the user's home alone (tests/conftest.py): the tools that wrote there
whatever they were told (headless Chromium's crash reports, Inspect's trace logs) write into
the run's own home, and the embedded model is still read from the shared cache."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from confeval.backends import local

from .conftest import HOME_PREFIX, XDG_DIRS, home_env, model_root, stale_homes, user_settings

ROOT = Path(__file__).resolve().parents[1]
SRC = Path(local.__file__).resolve().parents[2]  # the confeval under test, for the child
WRITERS = ["tests/report/test_html.py::test_report_renders_in_headless_chromium",
           "tests/integrations/test_inspect_report.py::test_the_hook_runs_at_the_end_of_a_real_eval"]
"""Tests that wrote into the home before the run had one of its own: Chromium left
``~/.config/chromium/Crash Reports`` and ``~/.cache/dconf``, Inspect
``~/.local/share/inspect_ai/traces``, and matplotlib ``~/.cache/matplotlib``."""


def test_the_run_has_a_home_of_its_own():
    home = Path(os.environ["HOME"])
    assert home.name.startswith("confeval-tests-home-") and Path.home() == home
    for name, sub in XDG_DIRS.items():
        assert Path(os.environ[name]) == home / sub, name
    # the exported model stays in the shared cache the README's demo fills
    assert not Path(os.environ["CONFEVAL_MODELS"]).is_relative_to(home)


def test_the_users_confeval_settings_are_not_the_tests(tmp_path):
    # the run itself: no CONFEVAL_ variable of the user's but the model's folder
    assert [n for n in os.environ if n.startswith("CONFEVAL_")] == ["CONFEVAL_MODELS"]
    assert user_settings({"CONFEVAL_CACHE": "/mine.sqlite", "CONFEVAL_MODELS": "/m",
                          "CONFEVAL_MAX_DECOMPRESSED_MB": "1", "HOME": "/h"}) == [
        "CONFEVAL_CACHE", "CONFEVAL_MAX_DECOMPRESSED_MB"]


def test_a_killed_runs_home_is_removed_by_the_next_run_not_a_running_ones(tmp_path):
    dead, running = tmp_path / f"{HOME_PREFIX}111-abc", tmp_path / f"{HOME_PREFIX}222-def"
    for path in (dead, running, tmp_path / f"{HOME_PREFIX}x-old", tmp_path / "other-111"):
        path.mkdir()
    (tmp_path / f"{HOME_PREFIX}333-link").symlink_to(tmp_path / "other-111")
    assert stale_homes(tmp_path, alive=lambda pid: pid == 222) == [dead]
    assert Path.home().name.startswith(f"{HOME_PREFIX}{os.getpid()}-")


def test_the_model_is_kept_where_confeval_puts_it(tmp_path, monkeypatch):
    monkeypatch.delenv("CONFEVAL_MODELS")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert local.export_dir().parent == model_root(tmp_path)   # the default, written out
    assert local.export_dir().parent == tmp_path / ".cache" / "confeval" / "models"
    # under the user's XDG cache when set, as the response cache
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    environ = {"XDG_CACHE_HOME": str(tmp_path / "xdg")}
    assert local.export_dir().parent == model_root(tmp_path, environ) == \
        tmp_path / "xdg" / "confeval" / "models"
    # a relative XDG_CACHE_HOME is ignored, as the XDG spec says (not the working folder)
    monkeypatch.setenv("XDG_CACHE_HOME", "relative")
    assert local.export_dir().parent == model_root(tmp_path, {"XDG_CACHE_HOME": "relative"}) \
        == tmp_path / ".cache" / "confeval" / "models"
    # an export made under ~/.cache before the XDG cache was followed is used, not remade
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    (tmp_path / ".cache" / "confeval" / "models" / local.MODEL_NAME).mkdir(parents=True)
    assert local.export_dir().parent == model_root(tmp_path, environ) == \
        tmp_path / ".cache" / "confeval" / "models"
    env = home_env(Path("/real"), tmp_path / "run", {})
    assert env["CONFEVAL_MODELS"] == str(model_root(Path("/real")))
    assert home_env(Path("/real"), tmp_path / "run",
                    {"CONFEVAL_MODELS": "/m"})["CONFEVAL_MODELS"] == "/m"


def test_chromium_and_inspect_write_nothing_into_the_home(tmp_path):
    """The tests that wrote there, run by a new pytest whose home is an empty folder: it is
    still empty when they have passed (or skipped, where Chromium or Inspect is absent)."""
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in XDG_DIRS and k != "MPLCONFIGDIR"}
    env.update(HOME=str(home), PYTHONPATH=os.pathsep.join(
        filter(None, [str(SRC), os.environ.get("PYTHONPATH")])))
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         f"--basetemp={tmp_path / 'basetemp'}", *WRITERS],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    written = sorted(str(p.relative_to(home)) for p in home.rglob("*"))
    assert written == [], written
