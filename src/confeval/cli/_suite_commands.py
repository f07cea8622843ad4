"""The ``score`` and ``run`` commands every suite has, made once from the suite's options
class: a suite's command module adds them with its help text, and declares only the commands
that are its own."""

from __future__ import annotations

from typing import Any

import typer

from ..suites import SCORING_COMMANDS, SUITES
from ._common import (
    ApiKeyOpt,
    BaseUrlOpt,
    CacheOpt,
    ConcurrencyOpt,
    DataOpt,
    Files,
    ForceOpt,
    ImageRootOpt,
    JsonOpt,
    ModelOpt,
    NoCacheOpt,
    NOpt,
    OutOpt,
    RunOutOpt,
    TextOnlyOpt,
    run_live,
    score_inputs,
)
from ._options import Given, with_options

__all__ = ["add_run_command", "add_score_command", "add_scoring_command"]


def _register(app: typer.Typer, name: str, options: type, stage: str, fn: Any,
              doc: str) -> None:
    fn.__doc__ = doc  # typer's help, read from the function it is given
    app.command(name)(with_options(options, stage)(fn))


def add_scoring_command(app: typer.Typer, name: str, command: str, doc: str, *,
                        bootstrap_progress: bool = False) -> None:
    """A command scoring record files (``FILE...``, run folders too) by its one scoring
    path (:data:`~confeval.suites.SCORING_COMMANDS` ``[command]``), with every option of its
    options class as a flag."""
    def score(given: Given, files: Files, as_json: JsonOpt = False, out_dir: OutOpt = None,
              force: ForceOpt = False) -> None:
        score_inputs(command, [[path] for path in files], given, as_json=as_json,
                     out_dir=out_dir, force=force, bootstrap_progress=bootstrap_progress)

    _register(app, name, SCORING_COMMANDS[command].options_class(), "score", score, doc)


def add_score_command(app: typer.Typer, suite: str, doc: str) -> None:
    """``confeval SUITE score FILE...``: the suite's one scoring path over record files and
    run folders, with every scoring option of the suite as a flag."""
    add_scoring_command(app, "score", f"{suite} score", doc)


def add_run_command(app: typer.Typer, suite: str, doc: str, *, images: bool = False) -> None:
    """``confeval SUITE run``: the one live driver with the model and server flags, every
    option of the suite, and for suites whose items have images ``--image-root`` and
    ``--text-only``."""
    def run(given: Given, out_dir: RunOutOpt, model: ModelOpt = None, data: DataOpt = None,
            n: NOpt = None, base_url: BaseUrlOpt = None, concurrency: ConcurrencyOpt = 8,
            api_key_env: ApiKeyOpt = "OPENAI_API_KEY", no_cache: NoCacheOpt = False,
            cache_path: CacheOpt = None) -> None:
        run_live(suite, given.values, out_dir=out_dir, model=model, data=data, n=n,
                 base_url=base_url, concurrency=concurrency, api_key_env=api_key_env,
                 no_cache=no_cache, cache_path=cache_path)

    def run_with_images(given: Given, out_dir: RunOutOpt, model: ModelOpt = None,
                        data: DataOpt = None, n: NOpt = None, image_root: ImageRootOpt = None,
                        text_only: TextOnlyOpt = False, base_url: BaseUrlOpt = None,
                        concurrency: ConcurrencyOpt = 8,
                        api_key_env: ApiKeyOpt = "OPENAI_API_KEY",
                        no_cache: NoCacheOpt = False, cache_path: CacheOpt = None) -> None:
        run_live(suite, given.values, out_dir=out_dir, model=model, data=data, n=n,
                 base_url=base_url, concurrency=concurrency, api_key_env=api_key_env,
                 no_cache=no_cache, cache_path=cache_path, image_root=image_root,
                 text_only=text_only)

    _register(app, "run", SUITES[suite].options_class(), "run",
              run_with_images if images else run, doc)
