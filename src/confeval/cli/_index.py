"""The index of top-level commands the root pages are printed from (:mod:`._root_index`),
written from the whole app: after a top-level command is added, renamed or its help changed,
``python -c "from confeval.cli._index import write_index; write_index()"``
(``tests/cli/test_root_page.py`` fails until it is)."""

from __future__ import annotations

from pathlib import Path

import typer

from .app import app_for

__all__ = ["root_index", "write_index"]


def root_index(app: typer.Typer) -> list[tuple[str, str | None, str | None]]:
    """Each top-level command ``confeval --help`` lists, in its order: (name, help, short
    help), as the whole ``app`` builds them (a group's help is its own)."""
    import typer.main

    group = typer.main.get_command(app)
    ctx = typer.Context(group, info_name="confeval")
    rows = []
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if not command.hidden:
            rows.append((name, command.help, command.short_help))
    return rows


def write_index() -> Path:
    """Rewrite :mod:`._root_index` from the whole app (after a top-level command is added,
    renamed or its help changed): ``python -c "from confeval.cli._index import write_index;
    write_index()"``."""
    import pprint

    from ..runs import write_file

    rows = tuple(root_index(app_for(["--help"])))
    text = ('"""Each top-level command\'s name, help and short help, as the whole app builds '
            'them.\nWritten by ``confeval.cli._index.write_index``; never edited by hand."""'
            "\n\nCOMMANDS = " + pprint.pformat(rows, width=88) + "\n")
    return write_file(Path(__file__).with_name("_root_index.py"), text)
