"""Start-up in proportion to the work: building the command line (``confeval --help``) imports
no heavy library; each is loaded by the command that uses it."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("pandas", "pyarrow", "scipy", "sklearn", "matplotlib", "torch", "transformers",
         "PIL", "openai", "inspect_ai", "lm_eval", "numba")


def _printed_by(probe: str) -> list[str]:
    """The JSON list a fresh process running ``probe`` prints last."""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True, timeout=120)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _loaded_after(code: str, modules: tuple[str, ...] = HEAVY) -> list[str]:
    return _printed_by(f"import sys, json\n{code}\n"
                       f"print(json.dumps(sorted(m for m in {modules!r} if m in sys.modules)))")


def test_the_command_line_imports_no_heavy_library():
    assert _loaded_after("import confeval.cli.app") == []
    # the help of every command is built from the options classes: still nothing heavy
    assert _loaded_after(
        "from confeval.cli.app import app\n"
        "import typer.main\n"
        "cmd = typer.main.get_command(app)\n"
        "import click\n"
        "ctx = click.Context(cmd)\n"
        "for name in cmd.list_commands(ctx):\n"
        "    sub = cmd.get_command(ctx, name)\n"
        "    sub.get_help(click.Context(sub, info_name=name))\n") == []


def test_the_command_line_and_scoring_import_no_model_client():
    """The backends (asyncio, ssl, the HTTP client) are for ``run`` commands: ``confeval
    --help`` and scoring a file never import them (they were ~35 ms of --help)."""
    assert _loaded_after("from confeval.cli.app import app\n"
                         "from confeval.verbs.score import scoring_command\n"
                         "scoring_command('score').Options\n"
                         "import confeval.records, confeval.suites",
                         ("asyncio", "ssl", "confeval.backends")) == []


def _commands_made_after(args: list[str]) -> list[str]:
    """The commands whose flags were made by ``main(args)`` in a fresh process."""
    return _printed_by(
        "import contextlib, io, json\n"
        "from confeval.cli.app import app, main\n"
        "from confeval.cli._options import _Command\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    main({args!r})\n"
        "def walk(typer_app, path):\n"
        "    for info in typer_app.registered_commands:\n"
        "        if isinstance(info.callback, _Command) and info.callback._made:\n"
        "            yield ' '.join([*path, info.name or info.callback.__name__])\n"
        "    for group in typer_app.registered_groups:\n"
        "        yield from walk(group.typer_instance, [*path, group.name])\n"
        "print(json.dumps(sorted(walk(app, []))))")


def test_a_command_makes_its_flags_only_when_run():
    """Reading an options class into ~30 flags is made for the command a process runs, not
    for the ~80 it lists: ``confeval --help`` makes none."""
    assert _commands_made_after(["--help"]) == []
    assert _commands_made_after(["score", "--help"]) == ["score"]
    assert _commands_made_after(["sets", "score", "--help"]) == ["sets score"]


def test_a_command_loads_what_it_uses():
    assert "pandas" in _loaded_after(
        "from confeval.verbs.score import scoring_command\n"
        "scoring_command('score').Options\n"
        "import confeval.records")
    assert "matplotlib" in _loaded_after(
        "from confeval.report.figures import line_figure\n"
        "line_figure({'a': ([0, 1], [0, 1])}, xlabel='x', ylabel='y', title='t')")


def test_lazy_package_names_are_the_functions_whatever_was_imported_first():
    """A package's names load lazily; one named like its module (conformal.set_metrics) is
    the function even when a sibling module imported that module first."""
    import confeval.conformal.regression  # noqa: F401 - imports the metrics modules first
    from confeval.conformal import interval_metrics, prediction_sets, set_metrics
    from confeval.suites.sets import score_sets

    assert all(callable(f) and not hasattr(f, "__path__") and type(f).__name__ == "function"
               for f in (interval_metrics, prediction_sets, set_metrics, score_sets))


def test_a_terminal_table_needs_no_matplotlib():
    """A scoring command prints its table without loading the report's figures."""
    assert "matplotlib" not in _loaded_after(
        "from confeval.report.terminal import TERMINAL_TABLES\n"
        "TERMINAL_TABLES['sets']\n"
        "TERMINAL_TABLES['measures']\n")


def test_scoring_confidence_loads_no_scipy():
    """``confeval score`` computes every metric and its bootstrap without scipy (scipy.stats
    alone took half a second to import): mid-ranks and harmonic numbers are numpy. Nor numba
    below a million rows (its import and compiling take ~2 s; confeval.metrics._compiled)."""
    loaded = _loaded_after(
        "import numpy as np\n"
        "from confeval.evaluate import evaluate_confidence\n"
        "rng = np.random.default_rng(0)\n"
        "c = rng.uniform(size=300)\n"
        "evaluate_confidence(c, (rng.uniform(size=300) < c).astype(float), n_resamples=20)")
    assert "scipy" not in loaded and "numba" not in loaded


def _page(the_app, args) -> str:
    import typer.main
    from click.testing import CliRunner

    done = CliRunner().invoke(typer.main.get_command(the_app), args, prog_name="confeval")
    assert done.exit_code == 0, done.output
    return done.output


def test_the_app_built_for_a_command_prints_every_page_as_the_whole_app():
    """``main`` builds the command it runs in full and every other one as a stand-in with its
    help alone: the top-level page, each group's page and each top-level command's page are
    the whole app's, word for word."""
    import typer.main

    from confeval.cli.app import app, app_for

    assert _page(app_for(["--help"]), ["--help"]) == _page(app, ["--help"])
    whole = typer.main.get_command(app)
    for name in whole.list_commands(None):
        args = [name, "--help"]
        assert _page(app_for(args), args) == _page(app, args), name
    # a command of a group, built within its group of stand-ins
    for args in (["sets", "score", "--help"], ["judge", "mean", "--help"],
                 ["steps", "run", "--help"], ["--debug", "measures", "compare", "--help"]):
        assert _page(app_for(args), args) == _page(app, args), args


def test_a_stand_in_is_cheap_and_never_runs():
    """The stand-ins read no signature (a command's options are built only for the command
    named), and a stand-in's callback refuses to run."""
    import pytest

    from confeval.cli.app import app, app_for

    pruned = app_for(["score", "x.csv"])
    pairs = list(zip(pruned.registered_commands, app.registered_commands))
    assert [p.name for p, _ in pairs] == [w.name for _, w in pairs]
    kept = [w for p, w in pairs if p.callback is w.callback]
    assert [c.name or c.callback.__name__ for c in kept] == ["score"]
    stand_in = next(p.callback for p, w in pairs if p.callback is not w.callback)
    assert not __import__("inspect").signature(stand_in).parameters
    with pytest.raises(RuntimeError, match="stand-in"):
        stand_in()
    assert all(not g.typer_instance.registered_commands for g in pruned.registered_groups)


def test_the_console_script_is_main_with_the_collector_tuned():
    """The installed ``confeval`` runs ``console``: ``main``, with the garbage collector's
    young-object threshold raised and what is alive frozen before exit (confeval.cli.console);
    ``main`` itself, called from other code, leaves the collector alone."""
    from importlib.metadata import entry_points

    (script,) = entry_points(group="console_scripts", name="confeval")
    assert script.value == "confeval.cli:console"
    printed = _printed_by(
        "import contextlib, gc, io, json, sys\n"
        "from confeval.cli import console, main\n"
        "before = gc.get_threshold()\n"
        "with contextlib.redirect_stdout(io.StringIO()) as page:\n"
        "    assert main(['--version']) == 0\n"
        "assert gc.get_threshold() == before and gc.get_freeze_count() == 0\n"
        "sys.argv = ['confeval', '--version']\n"
        "with contextlib.redirect_stdout(io.StringIO()) as page:\n"
        "    code = console()\n"
        "print(json.dumps([code, page.getvalue(), gc.get_threshold()[0],\n"
        "                  gc.get_freeze_count() > 0]))")
    from confeval import __version__

    assert printed == [0, f"confeval {__version__}\n", 50_000, True]
