"""Scoring inputs by a suite's scoring command, as a library (:mod:`confeval.verbs.score`):
every suite's command found by name, a run folder read with its own options unless overridden,
the run.json that repeats it, and another tool's file a suite has no layout for named."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from confeval.records import RecordSet
from confeval.simulate import simulate
from confeval.suites import SUITES
from confeval.suites.sets import SetsOptions, score_sets_records
from confeval.verbs.score import input_name, score_inputs, scoring_command, scoring_commands

SAMPLES = next((Path(__file__).resolve().parents[1] / "fixtures" / "ingest" / "lm_eval")
               .glob("samples_*.jsonl"))


def test_every_suite_and_its_extra_commands_are_scoring_commands():
    table = scoring_commands()
    expected = {suite.command for suite in SUITES.values()} | {
        c.command for suite in SUITES.values() for c in suite.extra_commands()}
    assert set(table) == expected
    assert {"score", "agreement", "sets score", "steps consistency",
            "measures thresholds", "measures noise", "measures compare"} <= set(table)
    for suite in SUITES.values():
        assert table[suite.command].suite == suite.name
        assert table[suite.command].Options is suite.Options


def test_a_file_is_scored_by_the_suites_one_path_and_its_run_json_repeats_it(tmp_path):
    path = tmp_path / "mcq.csv"
    simulate("mcq", 300, seed=3).to_csv(path, index=False)
    scored = score_inputs(scoring_command("sets score"), [[path]],
                          {"alpha": 0.2, "scores": "lac"}, {"alpha", "scores"})
    expected = score_sets_records(RecordSet.read(path), SetsOptions(alpha=0.2,
                                                                    scores=("lac",)))
    assert scored.results[str(path)] == expected
    (entry,) = scored.config["inputs"]
    assert entry["path"] == str(path) and entry["options"]["alpha"] == 0.2
    assert entry["resolved"]["logit_cols"] == [f"logit_{c}" for c in "ABCD"]
    assert scored.config["command"] == "sets score" and Path(scored.config["cwd"]).is_dir()
    assert scored.section == {"kind": "sets", "title": SUITES["sets"].title,
                              "results": scored.results}


def test_bounds_are_checked_before_any_input_is_read(tmp_path):
    with pytest.raises(ValueError, match="--bootstrap must be at most 100,000"):
        score_inputs(scoring_command("score"), [[tmp_path / "missing.csv"]],
                     {"bootstrap": 10**8, "confidence_col": "c", "correct_col": "y"})


def test_a_format_a_suite_cannot_read_names_the_commands_that_can():
    with pytest.raises(ValueError, match=r"an lm-eval file has no judge ratings \(it can be "
                                         r"read by: score, sets score, measures score\)"):
        score_inputs(scoring_command("agreement"), [[SAMPLES]], {})
    with pytest.raises(ValueError, match="no steps records .*score, sets score"):
        score_inputs(scoring_command("steps score"), [[SAMPLES]], {})


def test_commands_scoring_several_files_together(tmp_path):
    rng = np.random.default_rng(0)
    files = []
    for side in "AB":
        path = tmp_path / f"{side}.csv"
        pd.DataFrame({"score": rng.uniform(size=20), "sl": rng.normal(size=20),
                      "question_id": np.repeat(np.arange(5), 4)}).to_csv(path, index=False)
        files.append(path)
    with pytest.raises(ValueError, match="scores 2 file"):
        score_inputs(scoring_command("measures compare"), [[files[0]]], {})
    assert input_name(files) == f"{files[0]} vs {files[1]}"
