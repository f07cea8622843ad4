"""``confeval``, ``confeval --help`` and ``confeval --version`` are printed from the root and
the index of top-level commands alone (confeval.cli._root): the same pages and exit statuses
as the whole app, and a fresh process that prints them builds no suite and imports no numpy."""

from __future__ import annotations

import pytest

from confeval.cli import main
from confeval.cli._index import root_index
from confeval.cli._root import FAST_ARGS, print_root_page
from confeval.cli._root_index import COMMANDS
from confeval.cli.app import app_for
from confeval.cli.app import main as whole_main

from ..child import fresh_python


@pytest.mark.parametrize("columns", ["30", "50", "80", "200"])
@pytest.mark.parametrize("args", FAST_ARGS, ids=lambda a: " ".join(a) or "no-args")
def test_the_root_pages_equal_the_whole_apps(args, columns, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", columns)
    fast_code = print_root_page(list(args))
    fast = capsys.readouterr()
    whole_code = whole_main(list(args))
    whole = capsys.readouterr()
    assert (fast.out, fast.err, fast_code) == (whole.out, whole.err, whole_code)
    assert fast.out.startswith("confeval ") if args == ["--version"] else "Commands:" in fast.out
    assert fast_code == (2 if not args else 0)   # a bare `confeval` is a usage error


def test_the_index_is_what_the_whole_app_lists():
    assert list(COMMANDS) == root_index(app_for(["--help"])), (
        "a top-level command was added, renamed or its help changed: rewrite the index with "
        "python -c \"from confeval.cli._index import write_index; write_index()\"")
    names = [name for name, _, _ in COMMANDS]
    assert {"score", "compare", "guarantee", "sets", "judge", "demo"} <= set(names)
    assert "guarantee-apply" not in names   # hidden commands are not listed


def test_other_arguments_go_to_the_whole_app(capsys):
    assert main(["--debug", "--help"]) == 0   # not an index page: the whole app prints it
    assert "Commands:" in capsys.readouterr().out
    assert main(["no-such-command"]) == 2
    assert "no-such-command" in capsys.readouterr().err


def test_the_root_pages_build_no_suite():
    """A fresh process printing ``confeval --help`` imports neither numpy nor any suite (this
    test process has loaded them: here ``main`` builds the whole app, as the next test
    shows)."""
    loaded = fresh_python(
        "import contextlib, io, sys\n"
        "from confeval.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as page:\n"
        "    code = main(['--help'])\n"
        "assert code == 0 and 'Commands:' in page.getvalue()\n"
        "print(sorted(m for m in ('numpy', 'pandas', 'rich', 'confeval.suites',\n"
        "                         'confeval.cli.app') if m in sys.modules))\n")
    assert loaded == ["[]"]


def test_once_a_suite_is_loaded_the_whole_app_prints_the_root_pages():
    """A suite registered from outside confeval adds a top-level command the index does not
    hold (``tests/suites/test_toy_suite.py`` lists one in ``--help``): after
    ``confeval.suites`` is imported, ``main`` builds the whole app for these pages too."""
    loaded = fresh_python(
        "import contextlib, io, sys\n"
        "import confeval.suites\n"
        "from confeval.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    assert main(['--help']) == 0\n"
        "print('confeval.cli.app' in sys.modules)\n")
    assert loaded == ["True"]


def test_the_package_app_is_the_typer_app_before_and_after_its_module_is_imported():
    """``confeval.cli.app`` (the attribute) is the whole Typer app, built on first use, also
    once the submodule of that name is imported (which rebinds the name in the package)."""
    printed = fresh_python(
        "import sys\n"
        "import confeval.cli as package\n"
        "print('confeval.cli.app' in sys.modules)\n"
        "first = package.app\n"
        "import confeval.cli.app\n"
        "from confeval.cli import app\n"
        "from confeval.cli.app import app as built\n"
        "print(type(first).__name__, first is app is built is package.app)\n")
    assert printed == ["False", "Typer", "True"]
