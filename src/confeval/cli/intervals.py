"""``confeval intervals``: conformal intervals and rating sets for judge scores."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from ..parse import DEFAULT_FLOOR
from ..suites.intervals import IntervalsConfig, score_intervals_file
from ..suites.intervals.live import LIVE_METHODS
from ._common import (
    TABLES,
    AlphaOpt,
    ApiKeyOpt,
    BaseUrlOpt,
    BootOpt,
    CacheOpt,
    ConcurrencyOpt,
    DataOpt,
    Files,
    ForceOpt,
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
    progress,
    run_live,
    simple_table,
    write_run,
)

__all__ = ["app", "intervals_table", "run", "score"]

app = group("Conformal intervals and label sets for judge scores.")


def intervals_table(results: dict) -> Table:
    """One row per (file, method): coverage and width (raw, adjusted) or set size."""
    table = simple_table("Conformal intervals for judge scores (mean over seeds)")
    table.add_column("file", overflow="fold", min_width=15)
    for header in ("method", "cov raw", "width raw", "cov adj", "width adj / size"):
        table.add_column(header, justify="right", no_wrap=True)
    def v(m: dict, key: str) -> str:
        return f"{m[key]['mean']:.3f}" if key in m else "–"

    for source, res in results.items():
        for i, (name, m) in enumerate(res["methods"].items()):
            interval = "width_adj" in m  # an interval method, else a rating-set method
            cov = v(m, "coverage_raw" if interval else "coverage")
            table.add_row(Path(source).name if i == 0 else "", name, cov, v(m, "width_raw"),
                          v(m, "coverage_adj") if interval else cov,
                          v(m, "width_adj" if interval else "set_size"))
    return table


@app.command("score")
def score(
    files: Files,
    logprob_cols: Annotated[str, typer.Option(
        "--logprob-cols", help="Rating-token log-prob columns, lowest rating first. Several "
                               "comma-separated patterns (one per judge, K columns each) fuse "
                               "the judges' features.")] = "s2_lp*",
    label_col: Annotated[str, typer.Option("--label-col", help="Human score.")] = "gt_score",
    pred_col: Annotated[str | None, typer.Option("--pred-col", help="The judge's parsed score "
                                                                    "(adds point metrics).")]
    = None,
    methods: Annotated[str, typer.Option(
        "--methods", help="all, or a comma list: naive, cqr, asym_cqr, chr, lvd, boosted_cqr, "
                          "boosted_lcp, r2ccp, ordinal_aps (intervals); lac, aps, "
                          "raps_randomized, ... (rating sets).")] = "all",
    seeds: Annotated[str, typer.Option("--seeds", help="Splits, e.g. 1-10.")] = "1-10",
    alpha: AlphaOpt = 0.1,
    min_score: Annotated[int, typer.Option("--min-score", help="Rating of the first "
                                                               "column.")] = 1,
    floor: Annotated[float, typer.Option("--floor", help="Log-prob for missing (NaN) rating "
                                                         "tokens (default ln 1e-5).")]
    = DEFAULT_FLOOR,
    base: Annotated[str | None, typer.Option(
        "--base", help="Override every method's base model: gbr, hgb, linear or rf (default: "
                       "each method's own, as documented).")] = None,
    paper_protocol: Annotated[bool, typer.Option(
        "--paper-protocol", help="Run CHR and the boosted methods as the VLM-judge paper did "
                                 "(uncalibrated CHR; fit and calibrate on the same rows): "
                                 "reproduces its tables, loses the guarantee.")] = False,
    cal_fraction: Annotated[float, typer.Option(
        "--cal-fraction", min=0.0, max=1.0, help="Calibration share of each split (the "
                                                 "paper: 0.5).")] = 0.5,
    seed_sweep: Annotated[str | None, typer.Option(
        "--seed-sweep", help="e.g. 5,10,20: also report every method over the first k "
                             "seeds (needs that many --seeds).")] = None,
    separately: Annotated[bool, typer.Option(
        "--separately", help="Run the whole analysis on each group of --group-col on its own "
                             "(the paper's per-task Table 3).")] = False,
    group_col: Annotated[str | None, typer.Option("--group-col", help="Break every metric down "
                                                                      "by this column.")] = None,
    mondrian: Annotated[bool, typer.Option("--mondrian", help="Calibrate per group of "
                                                              "--group-col.")] = False,
    group_map: Annotated[str | None, typer.Option(
        "--group-map", help="Map group values first: 'paper-difficulty' (the VLM-judge "
                            "paper's easy/medium/hard task groups).")] = None,
    join: Annotated[list[str] | None, typer.Option(
        "--join", help="FILE:KEY — attach the columns of FILE to the records by KEY "
                       "(e.g. error_analysis.csv:sample_id for the task category).")] = None,
    as_json: JsonOpt = False,
    out_dir: OutOpt = None,
    force: ForceOpt = False,
) -> None:
    """Conformal intervals (the VLM-judge paper's nine methods) and rating sets for judge
    scores, with coverage, width and diagnostics over seeds."""
    check_out(out_dir, "intervals score", force)
    config = IntervalsConfig(methods=methods, seeds=seeds, alpha=alpha, base=base,
                             paper_protocol=paper_protocol, cal_fraction=cal_fraction,
                             seed_sweep=seed_sweep, mondrian=mondrian, separately=separately)
    results = {}
    with progress(len(files), "intervals", enabled=True) as step:
        for path in files:
            results[str(path)] = score_intervals_file(
                path, config, logprob_cols=logprob_cols, label_col=label_col,
                pred_col=pred_col, min_score=min_score, floor=floor, group_col=group_col,
                group_map=group_map, join=join or ())
            step(f"scored {path.name}")
    emit(results, as_json, intervals_table)
    write_run(out_dir, {"command": "intervals score", "files": [str(f) for f in files],
                        "methods": list(config.methods), "seeds": list(config.seeds),
                        "alpha": alpha, "base": base, "paper_protocol": paper_protocol,
                        "separately": separately, "cal_fraction": cal_fraction,
                        "seed_sweep": seed_sweep, "group_col": group_col, "mondrian": mondrian,
                        "join": join, "config": config},
              {"kind": "intervals", "title": "Conformal intervals for judge scores",
               "results": results})


@app.command("run")
def run(
    out_dir: RunOutOpt,
    model: ModelOpt = None,
    data: DataOpt = None,
    n: NOpt = None,
    seed: SeedOpt = 0,
    alpha: AlphaOpt = 0.1,
    methods: Annotated[str, typer.Option("--methods", help="Methods scored (comma list).")]
    = ",".join(LIVE_METHODS),
    seeds: Annotated[str, typer.Option("--seeds", help="Scoring splits, e.g. 1-5.")] = "1-5",
    max_tokens: Annotated[int, typer.Option("--max-tokens", min=1, help="Reply length limit "
                                                                       "(generated mode).")]
    = 160,
    answer: Annotated[str, typer.Option(
        "--answer", help="scored (exact rating scores), generated (a reply's rating-token "
                         "log-probs) or auto (--method decides).")] = "auto",
    method: MethodOpt = "auto",
    top_k: TopKOpt = 20,
    bootstrap: BootOpt = 1000,
    base_url: BaseUrlOpt = None,
    concurrency: ConcurrencyOpt = 8,
    api_key_env: ApiKeyOpt = "OPENAI_API_KEY",
    no_cache: NoCacheOpt = False,
    cache_path: CacheOpt = None,
) -> None:
    """Ask a judge to grade answers 1-5 live and score conformal intervals on its rating
    distribution (resumable, cached)."""
    run_live("intervals", {"method": method, "top_k": top_k, "seed": seed,
                           "bootstrap": bootstrap, "alpha": alpha, "methods": methods,
                           "seeds": seeds, "max_tokens": max_tokens, "answer": answer},
             out_dir=out_dir, model=model, data=data, n=n, base_url=base_url,
             concurrency=concurrency, api_key_env=api_key_env, no_cache=no_cache,
             cache_path=cache_path)


TABLES["intervals"] = intervals_table
