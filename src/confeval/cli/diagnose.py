"""``confeval diagnose``: can a model name the type of the error in a reasoning chain (MMErroR)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..suites.diagnose import SUITE, DiagnoseOptions
from ._common import (
    Files,
    ForceOpt,
    JsonOpt,
    OutOpt,
    out,
    print_json,
    score_and_print,
)
from ._options import Given, with_options

__all__ = ["parse", "register", "score"]

ProtocolOpt = Annotated[str, typer.Option(
    "--protocol", help="etc (types A-D), epd5 (A-E, E = no error) or presence (P/N: is there "
                       "an error? the first stage of a two-stage EPD run).")]


def parse(
    raw: Annotated[Path, typer.Argument(help="Replies: one row per item with the raw reply.")],
    out_path: Annotated[Path, typer.Option("--out", help="Rows with pred_type (or "
                                                         "pred_presence), parse_rule or "
                                                         "parse_failure.")],
    reply_col: Annotated[str, typer.Option("--reply-col", help="The raw reply column.")]
    = "reply",
    protocol: ProtocolOpt = "etc",
    letters_col: Annotated[str, typer.Option(
        "--letters-col", help="Per-row letter -> type mapping of permuted options, if "
                              "present.")] = "letters",
    as_json: JsonOpt = False,
) -> None:
    """Read the diagnosis out of raw replies (never a letter from running prose; every row
    kept with the rule that fired or why it failed)."""
    if protocol not in ("etc", "epd5", "presence"):
        raise ValueError("--protocol for parse must be etc, epd5 or presence")
    from ..records import RecordSet, write_table
    from ..suites.diagnose.inputs import parse_replies

    frame, summary = parse_replies(RecordSet.read(raw), reply_col=reply_col, protocol=protocol,
                                   letters_col=letters_col)
    write_table(frame, out_path)
    summary["out"] = str(out_path)
    if as_json:
        print_json(summary)
        return
    out.print(f"{summary['replies']} replies: {summary['parsed']} parsed "
              f"{summary['rules']}, {summary['replies'] - summary['parsed']} unparseable "
              f"{summary['unparseable'] or ''}; written to {out_path}")


def score(
    given: Given,
    files: Files,
    pair: Annotated[list[str] | None, typer.Option(
        "--pair", help="ETC_FILE,EPD_FILE: the EPD drop between two runs on the same items "
                       "(repeatable).")] = None,
    as_json: JsonOpt = False,
    out_dir: OutOpt = None,
    force: ForceOpt = False,
) -> None:
    score_and_print(SUITE.scoring_command(), [[path] for path in files], given,
                    as_json=as_json, out_dir=out_dir, force=force, extra=pair)


score.__doc__ = SUITE.score_help


def register(app: typer.Typer) -> None:
    """Add ``parse`` and ``score`` (with ``--pair``) to ``confeval diagnose``."""
    app.command("parse")(parse)
    app.command("score")(with_options(DiagnoseOptions, "score")(score))
