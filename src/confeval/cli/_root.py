"""The root of the ``confeval`` command, and its pages printed without building the rest.

``confeval``, ``confeval --help`` and ``confeval --version`` are what a newcomer types first.
Building the whole app imports every suite, numpy and the options of ~80 commands (~0.3 s);
these three need the root's options and the name and help of each top-level command alone.
So :func:`root_app` is the one definition of the root (``app.py`` registers every command on
it), and :mod:`._root_index` holds each top-level command's name and help, written from the
whole app by :func:`confeval.cli._index.write_index`. ``tests/cli/test_root_page.py`` checks
that the pages printed from it equal the whole app's, word for word, at several widths, and
that the index equals what the whole app gives (it names the command that rewrites it).
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from .. import __version__

__all__ = ["FAST_ARGS", "print_root_page", "root_app"]

FAST_ARGS = ([], ["--help"], ["--version"])
"""The argument lists answered from the index, without building the app."""


def _version(value: bool) -> None:
    if value:
        sys.stdout.write(f"confeval {__version__}\n")
        raise typer.Exit()


def _root(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print the version and exit.")] = False,
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks on errors.")] = False,
) -> None:
    """confeval: trustworthy-confidence evaluation for LLMs, VLMs and LLM/VLM judges."""


def root_app() -> typer.Typer:
    """A new root app: its name, help and options, no command."""
    app = typer.Typer(
        name="confeval",
        help="Can the confidence of an LLM, a VLM or an LLM/VLM judge be trusted? "
             "Score records you already have, or run the demo on simulated judges.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
    )
    app.callback()(_root)
    return app


def print_root_page(args: list[str]) -> int:
    """``confeval`` with ``args`` (one of :data:`FAST_ARGS`) on the root app with a stand-in
    per top-level command; the exit status the whole app gives."""
    from ._root_index import COMMANDS

    app = root_app()
    for name, help_text, short_help in COMMANDS:
        app.command(name, help=help_text, short_help=short_help)(_stand_in)
    try:
        app(args=args, prog_name="confeval", standalone_mode=False)
    except SystemExit as exc:   # typer.Exit from --version
        return exc.code if isinstance(exc.code, int) else 0
    except Exception as exc:
        if type(exc).__name__ != "NoArgsIsHelpError":
            raise
        # as app.main prints it: the page and a newline, exit status 2
        sys.stdout.write(exc.ctx.get_help() + "\n")
        return int(exc.exit_code)
    return 0


def _stand_in() -> None:
    raise RuntimeError("a stand-in command was run")   # FAST_ARGS never run a command
