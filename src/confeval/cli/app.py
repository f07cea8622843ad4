"""The ``confeval`` command: the root app, and one command group per module. This file only
assembles; every command lives in its group's module and calls the library."""

from __future__ import annotations

import copy
import inspect
import sys
import warnings
from collections.abc import Sequence
from typing import Annotated

import typer

from .._validation import RecordsError
from ..suites import SUITES
from . import diagnose, judge, measures, steps, tools, verbs
from ._common import UserError, err, out, report_status
from ._root import root_app
from ._suite_commands import add_scoring_command, suite_group

__all__ = ["app", "main"]

app = root_app()


SUITE_COMMANDS = {"steps": steps.register, "measures": measures.register,
                  "diagnose": diagnose.register}
"""The commands a suite's command module adds to its group besides ``score`` and ``run``
(``diagnose`` declares its own ``score``, with ``--pair``)."""

for name, suite in SUITES.items():   # every suite: `confeval NAME ...`, made from the suite
    if suite.top_level:
        add_scoring_command(app, name, suite.scoring_command(), suite.score_help)
    else:
        app.add_typer(suite_group(suite, SUITE_COMMANDS.get(name)), name=name)
verbs.register(app)
app.add_typer(judge.app, name="judge")
app.command()(tools.simulate)
app.command()(tools.demo)
app.command()(tools.report)
app.command()(tools.cache)
app.command("perturb", help="Alias of `confeval steps perturb`.")(steps.perturb_command)


@app.command("run", context_settings={"allow_extra_args": True,
                                     "ignore_unknown_options": True})
def _run_alias(
    ctx: typer.Context,
    suite: Annotated[str, typer.Argument(help="The suite: " + ", ".join(
        name for name, entry in SUITES.items() if entry.runs_live) + ".")],
) -> None:
    """Alias of `confeval SUITE run ...`: every argument after SUITE goes to that command,
    whose options are the suite's own (see `confeval SUITE run --help`)."""
    live = [name for name, entry in SUITES.items() if entry.runs_live]
    if suite not in live:
        raise UserError(f"unknown suite {suite!r}; choose from {', '.join(live)}")
    raise typer.Exit(main([suite, "run", *ctx.args]))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: run the app; turn input errors into one line on stderr and exit code 2.

    Usage errors (an unknown option, a missing argument, a value of the wrong type) are one
    line too, with the command whose ``--help`` lists what it takes.

    Exit status: 0 done; 2 an error (one line on stderr); 3 done, but a report.html written
    is incomplete, a chart not drawn or a section not rendered (one line each on stderr,
    ``report incomplete: section '...': chart '...' not drawn (reason)``; the page says the
    same in place, and the rest of the report and every other output are written). A command
    reports them with :func:`_common.report_incomplete` on what
    :func:`confeval.report.publish` returns.
    """
    args = _routed(list(sys.argv[1:] if argv is None else argv))
    debug = "--debug" in args
    previous = warnings.showwarning
    if not debug:
        warnings.showwarning = _one_line_warning
    report_status()  # nothing left over from an earlier call in this process
    # the consoles were made at import, and rich fixes a $COLUMNS it saw then: each call
    # writes at the width of its own terminal (or $COLUMNS), as the tables are laid out
    from ..report.terminal import terminal_width

    out.width = err.width = terminal_width()
    try:
        code = app_for(args)(args=args, prog_name="confeval", standalone_mode=False)
        code = code if isinstance(code, int) else 0
        return code or report_status()
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except typer.Abort:
        sys.stderr.write("aborted\n")
        return 130
    except (UserError, RecordsError, ValueError, FileNotFoundError, OSError,
            RuntimeError) as exc:
        if debug:
            raise
        sys.stderr.write(f"error: {_one_line(exc)}\n")  # one line, never wrapped
        return 2
    except Exception as exc:  # a bug or an input nobody foresaw: still one line, exit 2
        if _is_usage_error(exc) and type(exc).__name__ == "NoArgsIsHelpError":
            out.print(exc.ctx.get_help(), highlight=False, markup=False)  # a bare group: help
            return int(exc.exit_code)
        if _is_usage_error(exc):
            ctx = getattr(exc, "ctx", None)
            where = ctx.command_path if ctx is not None else "confeval"
            sys.stderr.write(f"error: {_one_line(exc.format_message())} (see `{where} "
                             "--help`)\n")
            return int(exc.exit_code)
        if debug:
            raise
        sys.stderr.write(f"error: unexpected {type(exc).__name__}: {_one_line(exc)} (run with "
                         "--debug for the traceback)\n")
        return 2
    finally:
        warnings.showwarning = previous


def app_for(args: Sequence[str]) -> typer.Typer:
    """The app as ``args`` needs it: the command or group ``args`` names in full, every other
    one a stand-in holding its help text alone; within a group named, the same for the
    command named right after it. Calling an app makes typer read the signature of every
    registered command into options, most of start-up once there are ~80 commands; a
    stand-in lists in ``confeval --help`` exactly as the command does (a test compares the
    pages) and is never run (``confeval NAME`` builds NAME in full)."""
    return _pruned(app, list(args))


def _pruned(typer_app: typer.Typer, args: list[str]) -> typer.Typer:
    """``typer_app`` with only ``args[0]`` (a command or group name, or an option) built."""
    name = next((a for a in args if not a.startswith("-")), None)
    pruned = copy.copy(typer_app)
    pruned.registered_commands = [c if _command_name(c) == name else _stand_in(c)
                                  for c in typer_app.registered_commands]
    pruned.registered_groups = [_group_for(g, args[args.index(name) + 1:])
                                if g.name == name else _stand_in_group(g)
                                for g in typer_app.registered_groups]
    return pruned


def _group_for(info, rest: list[str]):
    """A group named on the command line: pruned for the command named right after it (a
    group takes no option, so that is its first word; if an option comes first the group is
    kept whole)."""
    if rest and rest[0].startswith("-") and rest[0] != "--help":
        return info
    info = copy.copy(info)
    info.typer_instance = _pruned(info.typer_instance, rest)
    return info


def _command_name(info) -> str:
    return info.name or typer.main.get_command_name(info.callback.__name__)


def _stand_in(info):
    """A command with ``info``'s name and help, and no options to build."""
    def stand_in() -> None:
        raise RuntimeError("a stand-in command was run")   # app_for never lets it be

    stand_in.__name__ = info.callback.__name__
    stand_in.__doc__ = inspect.getdoc(info.callback)
    info = copy.copy(info)
    info.callback = stand_in
    return info


def _stand_in_group(info):
    """A group with ``info``'s name and help (its callback's docstring kept), no commands."""
    group = copy.copy(info.typer_instance)
    group.registered_commands, group.registered_groups = [], []
    info = copy.copy(info)
    info.typer_instance = group
    return info


def _routed(args: list[str]) -> list[str]:
    """``guarantee apply ...`` -> the hidden ``guarantee-apply`` command (``guarantee`` takes
    files itself, so ``apply`` cannot be a subcommand of it)."""
    if args[:2] == ["guarantee", "apply"]:
        return ["guarantee-apply", *args[2:]]
    return args


def _is_usage_error(exc: BaseException) -> bool:
    """A usage error of the command-line parser (click's, or the copy typer bundles)."""
    return hasattr(exc, "format_message") and isinstance(getattr(exc, "exit_code", None), int)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _one_line_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Warnings as one line each on stderr (no source line of confeval's code)."""
    sys.stderr.write(f"warning: {' '.join(str(message).split())}\n")
