"""``confeval sets``: conformal prediction sets for multiple-choice answers."""

from __future__ import annotations

from pathlib import Path

from rich.table import Table

from ..suites import SUITES
from ..suites.options import options_for_input, to_json
from ..suites.sets import SetsOptions, score_sets_file
from ._common import (
    TABLES,
    ApiKeyOpt,
    BaseUrlOpt,
    CacheOpt,
    ConcurrencyOpt,
    DataOpt,
    Files,
    ForceOpt,
    JsonOpt,
    ModelOpt,
    NoCacheOpt,
    NOpt,
    OutOpt,
    RunOutOpt,
    check_out,
    emit,
    group,
    progress,
    run_live,
    scoring_config,
    simple_table,
    write_run,
)
from ._options import Given, with_options

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
@with_options(SetsOptions, "score")
def score(
    given: Given,
    files: Files,
    as_json: JsonOpt = False,
    out_dir: OutOpt = None,
    force: ForceOpt = False,
) -> None:
    """Prediction sets with a coverage guarantee from option logits/log-probs/probabilities
    (a run folder of `confeval sets run` is scored with its own options unless overridden)."""
    check_out(out_dir, "sets score", force)
    results, used = {}, {}
    with progress(len(files), "sets", enabled=len(files) > 1) as step:
        for path in files:
            options = options_for_input(SetsOptions, path, given.values, given.explicit,
                                        suite="sets")
            results[str(path)] = score_sets_file(path, options)
            used[str(path)] = to_json(options)
            step(f"scored {path.name}")
    emit(results, as_json, sets_table)
    write_run(out_dir, scoring_config("sets score", files, used),
              SUITES["sets"].section(results))


@app.command("run")
@with_options(SetsOptions, "run")
def run(
    given: Given,
    out_dir: RunOutOpt,
    model: ModelOpt = None,
    data: DataOpt = None,
    n: NOpt = None,
    base_url: BaseUrlOpt = None,
    concurrency: ConcurrencyOpt = 8,
    api_key_env: ApiKeyOpt = "OPENAI_API_KEY",
    no_cache: NoCacheOpt = False,
    cache_path: CacheOpt = None,
) -> None:
    """Ask a model multiple-choice questions live and score its option distribution
    (prompts -> model -> records.jsonl -> metrics.json + report.html; resumable)."""
    run_live("sets", given.values, out_dir=out_dir, model=model, data=data, n=n,
             base_url=base_url, concurrency=concurrency, api_key_env=api_key_env,
             no_cache=no_cache, cache_path=cache_path)


TABLES["sets"] = sets_table
