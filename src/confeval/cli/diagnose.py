"""``confeval diagnose``: can a model name the type of the error in a reasoning chain (MMErroR)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from ..records import RecordSet, write_table
from ..suites import SUITES
from ..suites.diagnose import DiagnoseOptions, epd_drop_files, score_diagnosis_file
from ..suites.diagnose.inputs import parse_replies
from ..suites.options import build, options_for_input, to_json
from ._common import (
    TABLES,
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
    check_out,
    emit,
    group,
    metric_table,
    out,
    print_json,
    progress,
    run_live,
    scoring_config,
    write_run,
)
from ._options import Given, with_options

__all__ = ["app", "diagnose_table", "parse", "run", "score"]

app = group("Can a model tell why a reasoning chain is wrong (MMErroR).")

ProtocolOpt = Annotated[str, typer.Option(
    "--protocol", help="etc (types A-D), epd5 (A-E, E = no error), presence (P/N; parse only) "
                       "or epd (two-stage; score only).")]


def diagnose_table(results: dict) -> Table:
    return metric_table(results, [("n", "n"), ("accuracy_strict", "accuracy (strict)"),
                                  ("accuracy_parsed", "accuracy (parsed)"),
                                  ("parse_rate", "parse rate"), ("macro_f1", "macro-F1"),
                                  ("kappa", "kappa")], "Error diagnosis")


@app.command("parse")
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


@app.command("score")
@with_options(DiagnoseOptions, "score")
def score(
    given: Given,
    files: Files,
    pair: Annotated[list[str] | None, typer.Option(
        "--pair", help="ETC_FILE,EPD_FILE: the EPD drop between two runs on the same items "
                       "(repeatable).")] = None,
    human: Annotated[Path | None, typer.Option(
        "--human", help="A human row: CSV/JSONL with domain,accuracy (domain 'total' for the "
                        "Total), shown beside the baselines.")] = None,
    as_json: JsonOpt = False,
    out_dir: OutOpt = None,
    force: ForceOpt = False,
) -> None:
    """Score diagnoses: strict and parsed accuracy, by domain and subdomain with intervals, by
    type, confusion, macro-F1, kappa, baselines; the EPD drop for paired runs (a run folder
    is scored with its own options unless overridden)."""
    check_out(out_dir, "diagnose score", force)
    human_row = _human_row(human) if human else None
    results, used = {}, {}
    with progress(len(files), "diagnose", enabled=len(files) > 1) as step:
        for path in files:
            options = options_for_input(DiagnoseOptions, path, given.values, given.explicit,
                                        suite="diagnose")
            results[str(path)] = score_diagnosis_file(path, options, human=human_row)
            used[str(path)] = to_json(options)
            step(f"scored {path.name}")
    paired = build(DiagnoseOptions, given.values, what="the diagnose suite")
    for spec in pair or []:
        etc_file, _, epd_file = spec.partition(",")
        if not epd_file:
            raise ValueError(f"--pair must be ETC_FILE,EPD_FILE, got {spec!r}")
        results.setdefault(etc_file, {})["epd_drop"] = epd_drop_files(etc_file, epd_file,
                                                                      paired)
    emit(results, as_json, diagnose_table)
    write_run(out_dir, scoring_config("diagnose score", files, used, pairs=pair or []),
              SUITES["diagnose"].section(results))


@app.command("run")
@with_options(DiagnoseOptions, "run")
def run(
    given: Given,
    out_dir: RunOutOpt,
    model: ModelOpt = None,
    data: DataOpt = None,
    n: NOpt = None,
    image_root: ImageRootOpt = None,
    base_url: BaseUrlOpt = None,
    concurrency: ConcurrencyOpt = 8,
    api_key_env: ApiKeyOpt = "OPENAI_API_KEY",
    no_cache: NoCacheOpt = False,
    cache_path: CacheOpt = None,
) -> None:
    """Ask a model why each reasoning chain is wrong (ETC), or whether and why (EPD), and score
    it (records.jsonl, metrics.json, report.html; resumable)."""
    run_live("diagnose", given.values, out_dir=out_dir, model=model, data=data, n=n,
             base_url=base_url, concurrency=concurrency, api_key_env=api_key_env,
             no_cache=no_cache, cache_path=cache_path, image_root=image_root)


def _human_row(path: Path) -> dict[str, float]:
    rs = RecordSet.read(path)
    values = rs.numeric(["accuracy"], lo=0.0, hi=1.0, what="accuracy")[:, 0]
    domains = rs.groups("domain", what="domain")
    keep = rs.mask
    if not keep.any():
        raise ValueError(f"{path}: no usable human accuracy (fractions in [0, 1]); "
                         f"excluded: {rs.excluded}")
    return {str(d): float(v) for d, v in zip(domains[keep], values[keep])}


TABLES["diagnose"] = diagnose_table
