"""``confeval measures``: which confidence measure ranks the gold option first (MCQA-Eval)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from ..suites import SUITES
from ..suites.measures import MeasuresOptions, score_measures_file
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

__all__ = ["app", "measures_table", "run", "score"]

app = group("Which confidence measure of an LLM can be trusted (MCQA-Eval).")


def measures_table(results: dict) -> Table:
    """One row per (file, measure), in ranking order."""
    table = simple_table("Confidence measures on multiple-choice options (ranked by AUROC)")
    table.add_column("file", overflow="fold", min_width=15)
    for header in ("rank", "measure", "AUROC", "AUARC", "RCE", "ECE (binned)", "p vs next"):
        table.add_column(header, justify="right", no_wrap=True)

    def num(v):
        return "–" if v is None else f"{v:.3f}"

    for source, res in results.items():
        for i, row in enumerate(res["ranking"]):
            m = res["measures"][row["measure"]]
            table.add_row(Path(source).name if i == 0 else "", str(row["rank"]),
                          row["measure"], num(m["auroc"]), num(m["auarc"]), num(m["rce"]),
                          num(m["ece"]), num((row.get("vs_next") or {}).get("p_value")))
    return table


@app.command("score")
@with_options(MeasuresOptions, "score")
def score(
    given: Given,
    files: Files,
    as_json: JsonOpt = False,
    out_dir: OutOpt = None,
    force: ForceOpt = False,
) -> None:
    """Score confidence measures of (question, option) rows — a file, or a `measures run`
    folder with its own options unless overridden: AUROC, AUARC, RCE, ECE after histogram
    binning, question-bootstrap intervals and a ranking."""
    check_out(out_dir, "measures score", force)
    results, used = {}, {}
    with progress(len(files), "measures", enabled=len(files) > 1) as step:
        for path in files:
            options = options_for_input(MeasuresOptions, path, given.values, given.explicit,
                                        suite="measures")
            results[str(path)] = score_measures_file(path, options)
            used[str(path)] = to_json(options)
            step(f"scored {path.name}")
    emit(results, as_json, measures_table)
    write_run(out_dir, scoring_config("measures score", files, used),
              SUITES["measures"].section(results))


@app.command("run")
@with_options(MeasuresOptions, "run")
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
    """MCQA-Eval live: inject every option as the model's answer, compute every measure,
    score how well each ranks the gold option first (records.jsonl, options.jsonl with one
    line per (question, option), metrics.json, report.html; resumable)."""
    from ..suites.measures.live import write_option_rows

    run_live("measures", given.values, out_dir=out_dir, model=model, data=data, n=n,
             base_url=base_url, concurrency=concurrency, api_key_env=api_key_env,
             no_cache=no_cache, cache_path=cache_path, after=write_option_rows)


MeasureCols = Annotated[str | None, typer.Option(
    "--measure-cols", help="Confidence columns, higher = more confident.")]
UncertaintyCols = Annotated[str | None, typer.Option(
    "--uncertainty-cols", help="Columns where higher = less confident (negated).")]
ScoreCol = Annotated[str, typer.Option(
    "--score-col", help="Continuous correctness score in [0, 1] of each answer (similarity to "
                        "the reference, a judge's probability).")]


def _study_inputs(path: Path, measure_cols, uncertainty_cols, score_col):
    from ..records import RecordSet
    from ..suites.measures.inputs import read_study_records

    rs = RecordSet.read(path)
    data = read_study_records(rs, measure_cols=measure_cols, uncertainty_cols=uncertainty_cols,
                              score_col=score_col)
    return data, {"n_read": rs.summary()["n_read"], "n_used": int(data.score.size),
                  "excluded": rs.excluded}


def _floats(text: str, option: str) -> list[float]:
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ValueError(f"{option} must be a comma list of numbers, got {text!r}") from None


@app.command("thresholds")
def thresholds(
    files: Files,
    measure_cols: MeasureCols = None,
    uncertainty_cols: UncertaintyCols = None,
    score_col: ScoreCol = "score",
    taus: Annotated[str, typer.Option("--thresholds", help="Thresholds tau: correct = "
                                                           "score > tau.")] = "0.5,0.7,0.9",
    as_json: JsonOpt = False,
    out_dir: OutOpt = None,
    force: ForceOpt = False,
) -> None:
    """Threshold sensitivity: the ranking of the measures (by AUROC) at each correctness
    threshold, and Kendall's tau between the rankings of every pair of thresholds."""
    from ..suites.measures.studies import threshold_sensitivity

    check_out(out_dir, "measures thresholds", force)
    grid = _floats(taus, "--thresholds")
    results = {}
    for path in files:
        data, counts = _study_inputs(path, measure_cols, uncertainty_cols, score_col)
        results[str(path)] = {**counts, **threshold_sensitivity(data.values, data.names,
                                                                 data.score, grid)}
    emit(results, as_json, _study_table)
    write_run(out_dir, {"command": "measures thresholds", "files": [str(f) for f in files],
                        "thresholds": grid, "score_col": score_col},
              {"kind": "measures_study", "title": "Threshold sensitivity of the ranking",
               "results": results})


@app.command("noise")
def noise(
    files: Files,
    measure_cols: MeasureCols = None,
    uncertainty_cols: UncertaintyCols = None,
    score_col: ScoreCol = "score",
    threshold: Annotated[float, typer.Option("--threshold", help="correct = noisy score > "
                                                                 "this.")] = 0.5,
    sigmas: Annotated[str, typer.Option("--sigmas", help="Noise levels sigma (Eq. 7).")]
    = "0,0.5,1,2",
    seeds: Annotated[str, typer.Option("--seeds", help="Seeds of the noise, e.g. 1-10.")]
    = "1-10",
    eps: Annotated[float, typer.Option("--eps", help="Scores are clipped to [eps, 1 - eps] "
                                                     "before the logit.")] = 1e-3,
    as_json: JsonOpt = False,
    out_dir: OutOpt = None,
    force: ForceOpt = False,
) -> None:
    """Label noise (MCQA-Eval Eq. 7): Kendall's tau between the clean ranking of the measures
    and the ranking under logit-normal noise on the correctness score, per sigma."""
    from ..suites._seeds import parse_seeds
    from ..suites.measures.studies import label_noise

    check_out(out_dir, "measures noise", force)
    grid, seed_list = _floats(sigmas, "--sigmas"), parse_seeds(seeds)
    results = {}
    for path in files:
        data, counts = _study_inputs(path, measure_cols, uncertainty_cols, score_col)
        results[str(path)] = {**counts, **label_noise(
            data.values, data.names, data.score, threshold=threshold, sigmas=grid,
            seeds=seed_list or [0], eps=eps)}
    emit(results, as_json, _study_table)
    write_run(out_dir, {"command": "measures noise", "files": [str(f) for f in files],
                        "sigmas": grid, "seeds": seed_list, "threshold": threshold,
                        "eps": eps, "score_col": score_col},
              {"kind": "measures_study", "title": "Label noise and the ranking (Eq. 7)",
               "results": results})


@app.command("compare")
def compare(
    options_file: Annotated[Path, typer.Argument(help="MCQA-Eval rows: (question, option) "
                                                      "with --correct-col.")],
    samples_file: Annotated[Path, typer.Argument(help="Sampled answers with --score-col.")],
    measure_cols: MeasureCols = None,
    uncertainty_cols: UncertaintyCols = None,
    correct_col: Annotated[str, typer.Option("--correct-col")] = "correct",
    group_col: Annotated[str, typer.Option("--group-col")] = "question_id",
    score_col: ScoreCol = "score",
    threshold: Annotated[float, typer.Option("--threshold")] = 0.5,
    as_json: JsonOpt = False,
) -> None:
    """MCQA-Eval against threshold-based evaluation on the same items: both rankings of the
    measures and Kendall's tau between them."""
    from ..records import RecordSet
    from ..suites.measures.inputs import read_measure_records
    from ..suites.measures.studies import compare_rankings, ranking, shared_questions

    rs = RecordSet.read(options_file)
    mc = read_measure_records(rs, measure_cols=measure_cols, uncertainty_cols=uncertainty_cols,
                              correct_col=correct_col, group_col=group_col)
    data, counts = _study_inputs(samples_file, measure_cols, uncertainty_cols, score_col)
    sample_questions = data.records.groups(group_col, what="question")[data.records.mask]
    in_mc, in_samples = shared_questions(mc.questions, sample_questions)
    mcqa = ranking(mc.values[in_mc], mc.names, mc.correct[in_mc])
    threshold_based = ranking(data.values[in_samples], data.names,
                              data.score[in_samples] > threshold)
    result = {"mcqa_eval": {"n_used": int(in_mc.sum()), "excluded": rs.excluded,
                            "not_shared": int((~in_mc).sum()), **mcqa},
              "threshold_based": {**counts, "n_used": int(in_samples.sum()),
                                  "not_shared": int((~in_samples).sum()),
                                  "threshold": threshold, **threshold_based},
              "kendall": compare_rankings(mcqa["auroc"], threshold_based["auroc"])}
    emit({f"{options_file} vs {samples_file}": result}, as_json, _study_table)


def _study_table(results: dict) -> Table:
    table = simple_table("Rankings of the measures (by AUROC)")
    for header in ("file", "setting", "ranking", "base rate / mean Kendall tau"):
        table.add_column(header, overflow="fold")
    for name, r in results.items():
        parts = r.get("by_threshold") or r.get("by_sigma") or {
            k: r[k] for k in ("mcqa_eval", "threshold_based") if k in r}
        for key, part in parts.items():
            order = " > ".join(part.get("order") or r.get("clean", {}).get("order") or [])
            summary = part.get("kendall_mean", part.get("base_rate"))
            table.add_row(name, key, order or "-", "-" if summary is None else f"{summary:.3f}")
        if isinstance(r.get("kendall"), (float, type(None))) and "kendall" in r:
            table.add_row(name, "Kendall tau between them", "-", f"{r['kendall']}")
    return table


TABLES["measures"] = measures_table
