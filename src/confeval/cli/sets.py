"""``confeval sets``: conformal prediction sets for multiple-choice answers."""

from __future__ import annotations

from ..suites.sets import SetsOptions
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

app = group("Conformal prediction sets for multiple-choice answers.")


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
    score_inputs("sets score", [[path] for path in files], given, as_json=as_json,
                 out_dir=out_dir, force=force)


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


