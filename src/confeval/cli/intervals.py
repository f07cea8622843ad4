"""``confeval intervals``: conformal intervals and rating sets for judge scores."""

from __future__ import annotations

from ..suites.intervals import IntervalsOptions
from ._common import (
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
    group,
    run_live,
    score_inputs,
)
from ._options import Given, with_options

__all__ = ["app", "run", "score"]

app = group("Conformal intervals and label sets for judge scores.")


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
    score_inputs("intervals score", [[path] for path in files], given, as_json=as_json,
                 out_dir=out_dir, force=force)


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


