"""The commands every suite has, made once from the suite object: its scoring command (``confeval
NAME FILE...`` for a top-level suite, else ``confeval NAME score``) and, for a suite with a
live part, ``confeval NAME run`` — every option a flag generated from the suite's options
class, the run flags from :class:`~confeval.verbs.run.RunFlags`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import typer

from ..suites.base import ScoringCommand, Suite
from ..suites.options import RunFlags
from ._common import (
    Files,
    ForceOpt,
    JsonOpt,
    OutOpt,
    RunOutOpt,
    group,
    run_and_print,
    score_and_print,
)
from ._options import Given, with_options

__all__ = ["add_run_command", "add_scoring_command", "suite_group"]


def _register(app: typer.Typer, name: str, fn: Any, doc: str, decorate) -> None:
    fn.__doc__ = doc  # typer's help, read from the function it is given
    app.command(name)(decorate(fn))


def add_scoring_command(app: typer.Typer, name: str, command: ScoringCommand,
                        doc: str) -> None:
    """A command scoring record files (``FILE...``, run folders too) by ``command``'s one
    scoring path, with every option of its options class as a flag."""
    def score(given: Given, files: Files, as_json: JsonOpt = False, out_dir: OutOpt = None,
              force: ForceOpt = False) -> None:
        score_and_print(command, [[path] for path in files], given, as_json=as_json,
                        out_dir=out_dir, force=force)

    _register(app, name, score, doc, with_options(command.Options, "score"))


def add_run_command(app: typer.Typer, suite: Suite) -> None:
    """``confeval NAME run``: the one live driver with the run flags (``--image-root`` and
    ``--text-only`` for suites whose items may hold images) and every option of the suite."""
    def run(given: Given, out_dir: RunOutOpt) -> None:
        run_and_print(suite.name, given, out_dir=out_dir)

    skip = () if suite.images else RunFlags.IMAGE_FLAGS
    _register(app, "run", run, suite.run_help,
              with_options(suite.Options, "run", also=(RunFlags,), skip=skip))


def suite_group(suite: Suite, extras: Callable[[typer.Typer], None] | None = None
                ) -> typer.Typer:
    """``confeval NAME``: the commands its command module adds (``extras``), its ``score``
    (unless those include one) and, with a live part, its ``run``."""
    app = group(suite.help or suite.title)
    if extras is not None:
        extras(app)
    if "score" not in {info.name for info in app.registered_commands}:
        add_scoring_command(app, "score", suite.scoring_command(), suite.score_help)
    if suite.runs_live:
        add_run_command(app, suite)
    if suite.conformalises:
        from .conformal import add_conformal_commands

        add_conformal_commands(app, suite)
    return app
