"""The ``confeval`` command line (entry point ``confeval.cli:console``, which calls :func:`main`).

Every scoring command reads one or more record files, prints a table (or, with ``--json``, one
JSON document on stdout), and reports how many rows it excluded and why. Errors are one line
on stderr with exit code 2; ``--debug`` shows the traceback. Modules: ``app`` (assembly),
``_root`` (the root, and its pages printed without building the rest), ``_common`` (shared
options and output), one module per command group.
"""

from __future__ import annotations

import gc
import importlib
import sys
import types
from collections.abc import Sequence

__all__ = ["app", "console", "main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: :func:`confeval.cli.app.main`, except that ``confeval``, ``confeval
    --help`` and ``confeval --version`` are printed from the root alone (the same pages, in a
    third of the time: :mod:`._root`) when no suite has been loaded yet."""
    args = list(sys.argv[1:] if argv is None else argv)
    from ._root import FAST_ARGS

    # a suite registered from outside confeval (its package imported before main) adds a
    # top-level command the index cannot know: once confeval.suites is loaded, build it all
    if args in FAST_ARGS and "confeval.suites" not in sys.modules:
        from ._root import print_root_page

        return print_root_page(args)
    from .app import main as whole_main

    return whole_main(args)


def console() -> int:
    """The ``confeval`` program (the console script, and ``python -m confeval.cli``):
    :func:`main` in a process of its own, whose end it is.

    Such a process tunes the garbage collector, which a function called from other code must
    not do. A command imports several thousand objects' worth of modules (pandas, numpy, the
    suites), and the collector's default thresholds make it walk them again and again while
    they are imported; then, at exit, once more over everything still alive. Collecting young
    objects every 50,000 allocations instead of every 700, and freezing what is alive before
    the interpreter finalises it (objects alive at exit get no ``__del__`` guarantee in
    Python anyway; atexit handlers and open files are unaffected), takes ~1/7 off the wall
    time of ``confeval score`` on a 500-row file (measured side by side, 30 pairs; 7.7% fewer
    instructions under callgrind). It changes no output.
    """
    gc.set_threshold(50_000, 20, 20)
    code = main()
    gc.freeze()
    return code


class _Package(types.ModuleType):
    """This package, whose ``app`` is always the whole Typer app, built on first use.

    ``from confeval.cli import app`` gave the Typer app when this file imported it eagerly.
    Lazily, a module ``__getattr__`` is not enough: importing the submodule ``cli.app`` makes
    the import system set this package's ``app`` to that module, so the name would mean the
    app before that import and the module after it. A property answers the app either way
    (the submodule stays in ``sys.modules``: ``from confeval.cli.app import main`` works)."""

    @property
    def app(self):
        return importlib.import_module(".app", __name__).app

    @app.setter
    def app(self, value) -> None:
        """The import system binding the submodule: nothing to keep."""


sys.modules[__name__].__class__ = _Package
