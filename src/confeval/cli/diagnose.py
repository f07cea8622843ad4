"""``confeval diagnose``: can a model name the type of the error in a reasoning chain (MMErroR)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from ..records import RecordSet, write_table
from ..suites.diagnose import DiagnoseConfig, epd_drop_files, score_diagnosis_file
from ..suites.diagnose.inputs import parse_replies
from ._common import (
    TABLES,
    ApiKeyOpt,
    BaseUrlOpt,
    BootOpt,
    CacheOpt,
    ConcurrencyOpt,
    DataOpt,
    Files,
    ForceOpt,
    ImageRootOpt,
    JsonOpt,
    MethodOpt,
    ModelOpt,
    NoCacheOpt,
    NOpt,
    OutOpt,
    RunOutOpt,
    SeedOpt,
    TopKOpt,
    check_out,
    emit,
    group,
    metric_table,
    out,
    print_json,
    progress,
    run_live,
    write_run,
)

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
def score(
    files: Files,
    protocol: ProtocolOpt = "etc",
    gold_col: Annotated[str, typer.Option("--gold-col", help="Gold type (keys, the authors' "
                                                             "labels or aliases).")]
    = "gold_type",
    pred_col: Annotated[str, typer.Option("--pred-col", help="Predicted type key.")]
    = "pred_type",
    reply_col: Annotated[str | None, typer.Option(
        "--reply-col", help="Parse this raw reply column instead of --pred-col.")] = None,
    domain_col: Annotated[str, typer.Option("--domain-col")] = "domain",
    subdomain_col: Annotated[str, typer.Option("--subdomain-col")] = "subdomain",
    id_col: Annotated[str, typer.Option("--id-col", help="Item id (pairs ETC and EPD).")]
    = "item_id",
    pair: Annotated[list[str] | None, typer.Option(
        "--pair", help="ETC_FILE,EPD_FILE: the EPD drop between two runs on the same items "
                       "(repeatable).")] = None,
    simulations: Annotated[int, typer.Option("--simulations", help="Random guessers "
                                                                   "simulated.")] = 1000,
    human: Annotated[Path | None, typer.Option(
        "--human", help="A human row: CSV/JSONL with domain,accuracy (domain 'total' for the "
                        "Total), shown beside the baselines.")] = None,
    bootstrap: BootOpt = 1000,
    seed: SeedOpt = 0,
    as_json: JsonOpt = False,
    out_dir: OutOpt = None,
    force: ForceOpt = False,
) -> None:
    """Score diagnoses: strict and parsed accuracy, by domain and subdomain with intervals, by
    type, confusion, macro-F1, kappa, baselines; the EPD drop for paired runs."""
    check_out(out_dir, "diagnose score", force)
    config = DiagnoseConfig(protocol=protocol, gold_col=gold_col, pred_col=pred_col,
                            reply_col=reply_col, domain_col=domain_col,
                            subdomain_col=subdomain_col, id_col=id_col,
                            n_simulations=simulations, bootstrap=bootstrap, seed=seed)
    human_row = _human_row(human) if human else None
    results = {}
    with progress(len(files), "diagnose", enabled=len(files) > 1) as step:
        for path in files:
            results[str(path)] = score_diagnosis_file(path, config, human=human_row)
            step(f"scored {path.name}")
    for spec in pair or []:
        etc_file, _, epd_file = spec.partition(",")
        if not epd_file:
            raise ValueError(f"--pair must be ETC_FILE,EPD_FILE, got {spec!r}")
        results.setdefault(etc_file, {})["epd_drop"] = epd_drop_files(etc_file, epd_file,
                                                                      config)
    emit(results, as_json, diagnose_table)
    write_run(out_dir, {"command": "diagnose score", "files": [str(f) for f in files],
                        "config": config, "pairs": pair or []},
              {"kind": "diagnose", "title": "Error diagnosis (MMErroR)", "results": results})


@app.command("run")
def run(
    out_dir: RunOutOpt,
    model: ModelOpt = None,
    data: DataOpt = None,
    n: NOpt = None,
    image_root: ImageRootOpt = None,
    protocol: ProtocolOpt = "etc",
    answer: Annotated[str, typer.Option(
        "--answer", help="scored (option probabilities), generated (a parsed reply) or auto "
                         "(scored when the model can score exactly).")] = "auto",
    permute: Annotated[bool, typer.Option("--permute", help="Seeded option order per item "
                                                            "(letter bias).")] = False,
    max_tokens: Annotated[int, typer.Option("--max-tokens", help="Generated reply limit.")]
    = 256,
    ablation: Annotated[bool, typer.Option(
        "--ablation", help="Also answer each question under the paper's four input "
                           "conditions (items with an answer key).")] = False,
    answer_judge: Annotated[str, typer.Option(
        "--answer-judge", help="A model that grades free-text ablation answers (numbers and "
                               "letters are always checked strictly).")] = "",
    self_judge: Annotated[bool, typer.Option(
        "--self-judge", help="Allow --answer-judge to be the model under test.")] = False,
    method: MethodOpt = "auto",
    top_k: TopKOpt = 20,
    seed: SeedOpt = 0,
    bootstrap: BootOpt = 1000,
    base_url: BaseUrlOpt = None,
    concurrency: ConcurrencyOpt = 8,
    api_key_env: ApiKeyOpt = "OPENAI_API_KEY",
    no_cache: NoCacheOpt = False,
    cache_path: CacheOpt = None,
) -> None:
    """Ask a model why each reasoning chain is wrong (ETC), or whether and why (EPD), and score
    it (records.jsonl, metrics.json, report.html; resumable)."""
    run_live("diagnose", {"method": method, "top_k": top_k, "seed": seed,
                          "bootstrap": bootstrap, "protocol": protocol, "answer": answer,
                          "permute": permute, "max_tokens": max_tokens,
                          "ablation": ablation, "answer_judge": answer_judge,
                          "self_judge": self_judge},
             out_dir=out_dir, model=model, data=data, n=n, base_url=base_url,
             concurrency=concurrency, api_key_env=api_key_env, no_cache=no_cache,
             cache_path=cache_path, image_root=image_root)


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
