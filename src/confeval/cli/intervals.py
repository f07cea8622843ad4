"""``confeval intervals``: conformal intervals and rating sets for judge scores."""

from __future__ import annotations

from pathlib import Path

from rich.table import Table

from ..suites import SUITES
from ..suites.intervals import IntervalsOptions, score_intervals_file
from ..suites.options import options_for_input, to_json
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
@with_options(IntervalsOptions, "score")
def score(
    given: Given,
    files: Files,
    as_json: JsonOpt = False,
    out_dir: OutOpt = None,
    force: ForceOpt = False,
) -> None:
    """Conformal intervals (the VLM-judge paper's nine methods) and rating sets for judge
    scores, with coverage, width and diagnostics over seeds (a run folder of `confeval
    intervals run` is scored with its own options unless overridden)."""
    check_out(out_dir, "intervals score", force)
    results, used = {}, {}
    with progress(len(files), "intervals", enabled=True) as step:
        for path in files:
            options = options_for_input(IntervalsOptions, path, given.values, given.explicit,
                                        suite="intervals")
            results[str(path)] = score_intervals_file(path, options)
            used[str(path)] = to_json(options)
            step(f"scored {path.name}")
    emit(results, as_json, intervals_table)
    write_run(out_dir, scoring_config("intervals score", files, used),
              SUITES["intervals"].section(results))


@app.command("run")
@with_options(IntervalsOptions, "run")
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
    """Ask a judge to grade answers 1-5 live and score conformal intervals on its rating
    distribution (resumable, cached)."""
    run_live("intervals", given.values, out_dir=out_dir, model=model, data=data, n=n,
             base_url=base_url, concurrency=concurrency, api_key_env=api_key_env,
             no_cache=no_cache, cache_path=cache_path)


TABLES["intervals"] = intervals_table
