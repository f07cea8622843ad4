"""``confeval sets``: conformal prediction sets for multiple-choice answers."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from ..suites._seeds import parse_seeds
from ..suites.sets import SetsConfig, score_sets_file
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

__all__ = ["app", "run", "score", "sets_table"]

app = group("Conformal prediction sets for multiple-choice answers.")


def sets_table(results: dict) -> Table:
    """One row per (file, score): long format, so it fits a narrow terminal."""
    table = simple_table("Conformal prediction sets")
    table.add_column("file", overflow="fold", min_width=15)
    for header in ("n test", "acc", "ECE", "score", "coverage", "size", "UAcc"):
        table.add_column(header, justify="right", no_wrap=True)

    def num(v):
        if isinstance(v, dict):
            v = v.get("mean")
        return "–" if v is None else (f"{v:,}" if isinstance(v, int) else f"{v:.3f}")

    for source, res in results.items():
        for i, (name, m) in enumerate(res["scores"].items()):
            lead = ([Path(source).name, num(res["n_test"]), num(res["accuracy"]),
                     num(res["ece"])] if i == 0 else ["", "", "", ""])
            table.add_row(*lead, name, num(m["coverage"]), num(m["set_size"]), num(m["uacc"]))
    return table


@app.command("score")
def score(
    files: Files,
    label_col: Annotated[str, typer.Option("--label-col", help="Gold option (a letter, or "
                                                               "the column suffix).")]
    = "answer",
    logit_cols: Annotated[str, typer.Option("--logit-cols", help="Option columns (glob or "
                                                                 "comma list); the part after "
                                                                 "the last '_' names the "
                                                                 "option.")] = "logit_*",
    input_kind: Annotated[str, typer.Option("--input", help="logits | logprobs | probs")]
    = "logits",
    alpha: AlphaOpt = 0.1,
    split_seed: Annotated[int, typer.Option("--split-seed", help="Seed of the 50/50 split.")]
    = 42,
    seeds: Annotated[str | None, typer.Option("--seeds", help="Repeat over splits, e.g. 1-10; "
                                                              "numbers become {mean, std}.")]
    = None,
    scores: Annotated[str, typer.Option("--scores", help="Comma list of lac, aps, "
                                                         "aps_randomized, raps, "
                                                         "raps_randomized, margin.")]
    = "lac,aps,raps,margin",
    protocol: Annotated[str, typer.Option("--protocol", help="exact (default) or vlm-bench "
                                                             "(the published benchmark's "
                                                             "quantile and ECE).")] = "exact",
    group_col: Annotated[str | None, typer.Option("--group-col", help="Mondrian: calibrate per "
                                                                      "group of this column.")]
    = None,
    precision: Annotated[str, typer.Option("--precision", help="Softmax precision: float32 "
                                                               "(as published) or float64.")]
    = "float32",
    lam: Annotated[float, typer.Option("--raps-lambda", help="RAPS rank penalty.")] = 0.01,
    k_reg: Annotated[int, typer.Option("--raps-k", help="RAPS free ranks.")] = 1,
    allow_empty: Annotated[bool, typer.Option("--allow-empty", help="Keep empty sets (default: "
                                                                    "an empty set gets the top "
                                                                    "label).")] = False,
    as_json: JsonOpt = False,
    out_dir: OutOpt = None,
    force: ForceOpt = False,
) -> None:
    """Prediction sets with a coverage guarantee from option logits/log-probs/probabilities."""
    check_out(out_dir, "sets score", force)
    seed_list = parse_seeds(seeds)
    config = SetsConfig(alpha=alpha, split_seed=split_seed, seeds=seed_list,
                        scores=tuple(s.strip() for s in scores.split(",") if s.strip()),
                        protocol=protocol, input=input_kind, precision=precision, lam=lam,
                        k_reg=k_reg, allow_empty=allow_empty)
    results = {}
    with progress(len(files), "sets", enabled=len(files) > 1) as step:
        for path in files:
            results[str(path)] = score_sets_file(path, config, label_col=label_col,
                                                 logit_cols=logit_cols, group_col=group_col)
            step(f"scored {path.name}")
    emit(results, as_json, sets_table)
    write_run(out_dir, {"command": "sets score", "files": [str(f) for f in files],
                        "alpha": alpha, "split_seed": split_seed, "seeds": seed_list,
                        "scores": list(config.scores), "protocol": protocol,
                        "group_col": group_col, "config": config},
              {"kind": "sets", "title": "Conformal prediction sets", "results": results})


@app.command("run")
def run(
    out_dir: RunOutOpt,
    model: ModelOpt = None,
    data: DataOpt = None,
    n: NOpt = None,
    seed: SeedOpt = 0,
    alpha: AlphaOpt = 0.1,
    idk: Annotated[bool, typer.Option("--idk", help="Add an \"I don't know\" option.")] = False,
    nota: Annotated[bool, typer.Option("--nota", help="Add \"None of the above\".")] = False,
    method: MethodOpt = "auto",
    top_k: TopKOpt = 20,
    bootstrap: BootOpt = 1000,
    base_url: BaseUrlOpt = None,
    concurrency: ConcurrencyOpt = 8,
    api_key_env: ApiKeyOpt = "OPENAI_API_KEY",
    no_cache: NoCacheOpt = False,
    cache_path: CacheOpt = None,
) -> None:
    """Ask a model multiple-choice questions live and score its option distribution
    (prompts -> model -> records.jsonl -> metrics.json + report.html; resumable)."""
    run_live("sets", {"method": method, "top_k": top_k, "seed": seed, "bootstrap": bootstrap,
                      "alpha": alpha, "idk": idk, "nota": nota},
             out_dir=out_dir, model=model, data=data, n=n, base_url=base_url,
             concurrency=concurrency, api_key_env=api_key_env, no_cache=no_cache,
             cache_path=cache_path)


TABLES["sets"] = sets_table
