"""`confeval score` and `confeval agreement`: values, exclusions, tables, one-line errors."""

import json

import numpy as np
import pandas as pd
import pytest

from confeval.cli import main
from confeval.metrics import auroc, expected_calibration_error
from confeval.simulate import simulate


def run(capsys, *args):
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def conf_file(tmp_path):
    df = simulate("confidence", 400, "overconfident", seed=3)
    df.loc[0, "confidence"] = 1.7       # out of range
    df["confidence"] = df["confidence"].astype(object)
    df.loc[1, "confidence"] = "high"    # not a number
    df.loc[2, "correct"] = np.nan       # missing
    path = tmp_path / "judge.csv"
    df.to_csv(path, index=False)
    return path, df


def test_score_json_values_and_exclusions(capsys, conf_file):
    path, df = conf_file
    code, out, _ = run(capsys, "score", str(path), "-c", "confidence", "-y", "correct",
                       "--json", "--bootstrap", "50")
    assert code == 0
    doc = json.loads(out)
    res = doc["results"][str(path)]
    assert res["excluded"] == {"non_numeric_confidence": 1, "confidence_out_of_range": 1,
                               "missing_correct": 1}
    assert res["n_read"] == 400 and res["n_used"] == 397
    # CSV line numbers count the header as line 1
    assert [(f["row"], f["reason"]) for f in res["flagged"]] == [
        (2, "confidence_out_of_range"), (3, "non_numeric_confidence"), (4, "missing_correct")]
    good = df.iloc[3:]
    conf = good.confidence.astype(float)
    assert res["auroc"] == pytest.approx(auroc(conf, good.correct), abs=1e-12)
    assert res["ece"] == pytest.approx(expected_calibration_error(conf, good.correct), abs=1e-12)
    assert 0 <= res["ci"]["auroc"]["low"] <= res["auroc"] <= res["ci"]["auroc"]["high"]


def test_score_several_files_table_and_run_folder(capsys, tmp_path, conf_file):
    path, _ = conf_file
    other = tmp_path / "other.jsonl"
    simulate("confidence", 300, "calibrated", seed=1).to_json(other, orient="records",
                                                               lines=True)
    code, out, _ = run(capsys, "score", str(path), str(other), "-c", "confidence", "-y",
                       "correct", "--bootstrap", "0", "--out", str(tmp_path / "run"))
    assert code == 0
    # each file a row under its stem (extensions dropped: the table is about the records)
    rows = [line.split()[0] for line in out.splitlines() if line.split()[1:2] == ["397"]
            or line.split()[1:2] == ["300"]]
    assert rows == ["judge", "other"] and "judge.csv: excluded 3 row(s)" in out
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert set(metrics["sections"][0]["results"]) == {str(path), str(other)}
    assert (tmp_path / "run" / "report.html").stat().st_size > 10_000


def test_agreement_with_logprobs(capsys, tmp_path):
    df = simulate("scores", 300, "compressing", seed=2)
    path = tmp_path / "judge.parquet"
    df.to_parquet(path)
    code, out, _ = run(capsys, "agreement", str(path), "--pred-col", "parsed_score",
                       "--gt-col", "gt_score", "--logprob-cols", "score_lp*", "--json",
                       "--bootstrap", "20")
    assert code == 0
    res = json.loads(out)["results"][str(path)]
    assert res["accuracy"] == pytest.approx(np.mean(df.parsed_score == df.gt_score))
    assert res["bias_by_level"]["1.0"]["bias"] > 0
    assert "top_prob_ece" in res and res["excluded"] == {}


@pytest.mark.parametrize("args,message", [
    (["score", "missing.csv", "-c", "a", "-y", "b"], "missing.csv: no such file"),
    (["report", "no-such-run"], "no-such-run: not a run folder"),
    (["simulate", "scores", "--behaviour", "smug", "--out", "x.jsonl"],
     "unknown scores behaviour 'smug'"),
])
def test_errors_are_one_line_exit_2(capsys, args, message):
    code, _, err = run(capsys, *args)
    assert code == 2
    assert message in err and "Traceback" not in err
    assert err.strip().count("\n") == 0


def test_missing_column_names_file_and_columns(capsys, conf_file):
    path, _ = conf_file
    code, _, err = run(capsys, "score", str(path), "-c", "conf", "-y", "correct")
    assert code == 2
    assert f"{path}: confidence 'conf' not found; columns are: item_id, confidence" in err




# ---- a user's own CSV (issue #37 item 6): every problem said at once, with its way out ----

def _issue_csv(tmp_path, correct_words=("yes", "no")):
    """The issue's file: 300 answers, a confidence on a 0-100 scale (87, 42.5, ...) and
    correctness written as words."""
    rng = np.random.default_rng(37)
    confidence = np.round(rng.uniform(1.5, 100, 300), 1)
    confidence[:2] = [87, 42.5]
    right = rng.random(300) < confidence / 100
    path = tmp_path / "f.csv"
    pd.DataFrame({"confidence": confidence,
                  "correct": np.where(right, *correct_words)}).to_csv(path, index=False)
    return path, confidence, right.astype(float)


def test_a_percentage_confidence_is_refused_with_the_flag_then_scored(capsys, tmp_path):
    path, confidence, right = _issue_csv(tmp_path)
    code, _, err = run(capsys, "score", str(path), "-c", "confidence", "-y", "correct")
    assert code == 2 and err.count("\n") == 1
    assert err == (f"error: {path}: fewer than two usable rows of 300 (excluded: "
                   "{'confidence_out_of_range': 300}): confidence: 300 out of [0, 1] (e.g. "
                   "87, 42.5) — looks like percentages: --confidence-scale 100 reads it as "
                   "value / 100 (--any-confidence ranks by it as it is)\n")
    # one run with the flag the message names
    code, out, err = run(capsys, "score", str(path), "-c", "confidence", "-y", "correct",
                         "--confidence-scale", "100", "--bootstrap", "0", "--json")
    assert code == 0, err
    res = json.loads(out)["results"][str(path)]
    assert res["n_used"] == 300 and res["excluded"] == {}
    assert res["accuracy"] == pytest.approx(right.mean(), abs=1e-12)
    assert res["ece"] == pytest.approx(expected_calibration_error(confidence / 100, right),
                                       abs=1e-12)
    assert res["auroc"] == pytest.approx(auroc(confidence / 100, right), abs=1e-12)


def test_every_problem_of_every_column_in_one_message(capsys, tmp_path):
    path, _, _ = _issue_csv(tmp_path, correct_words=("maybe", "unsure"))
    code, _, err = run(capsys, "score", str(path), "-c", "confidence", "-y", "correct")
    assert code == 2 and err.count("\n") == 1
    assert "confidence: 300 out of [0, 1] (e.g. 87, 42.5) — looks like percentages: " \
           "--confidence-scale 100" in err
    assert err.rstrip().endswith("; correct: 300 not numeric (e.g. 'maybe', 'unsure')")


def test_a_column_mostly_outside_the_scale_is_refused_not_scored_on_the_rest(capsys,
                                                                              tmp_path):
    """-c item_id by mistake: 1,998 of 2,000 ids out of [0, 1], and the score of the two
    rows left (ids 0 and 1) was printed with exit 0."""
    df = simulate("confidence", 2000, seed=5)
    path = tmp_path / "judge.csv"
    df.to_csv(path, index=False)
    code, _, err = run(capsys, "score", str(path), "-c", "item_id", "-y", "correct")
    assert code == 2 and err.count("\n") == 1
    assert err.rstrip().endswith("item_id: 1,998 out of [0, 1] (e.g. 2, 3) — 1,998 of 2,000 "
                                 "values lie outside [0, 1]: no probability (another column?);"
                                 " --any-confidence ranks by it as it is")
    code, out, _ = run(capsys, "score", str(path), "-c", "item_id", "-y", "correct",
                       "--any-confidence", "--bootstrap", "0", "--json")
    assert code == 0 and json.loads(out)["results"][str(path)]["n_used"] == 2000


def test_a_few_percentages_among_probabilities_are_counted_not_refused(capsys, tmp_path):
    df = simulate("confidence", 200, seed=5)
    df.loc[:4, "confidence"] = [87, 42.5, 3, 50, 1.2]      # five typos, not a 0-100 column
    path = tmp_path / "typos.csv"
    df.to_csv(path, index=False)
    code, out, _ = run(capsys, "score", str(path), "-c", "confidence", "-y", "correct",
                       "--bootstrap", "0", "--json")
    res = json.loads(out)["results"][str(path)]
    assert code == 0 and res["n_used"] == 195
    assert res["excluded"] == {"confidence_out_of_range": 5}


def test_a_scale_given_to_probabilities_is_refused(capsys, tmp_path):
    df = simulate("confidence", 100, seed=6)
    path = tmp_path / "probs.csv"
    df.to_csv(path, index=False)
    code, _, err = run(capsys, "score", str(path), "-c", "confidence", "-y", "correct",
                       "--confidence-scale", "100")
    assert code == 2 and err.count("\n") == 1
    assert "confidence: --confidence-scale 100 was given, but every confidence is in [0, 1] " \
           "already: leave it out" in err
    for bad in ("0", "-1", "nan"):
        code, _, err = run(capsys, "score", str(path), "-c", "confidence", "-y", "correct",
                           "--confidence-scale", bad)
        assert code == 2 and "--confidence-scale must be a positive number" in err


def test_correctness_words_are_read_as_one_and_zero(capsys, tmp_path):
    words = ["yes", "No", " Y ", "n", "TRUE", "false", "Correct", "INCORRECT", "right",
             "Wrong", "1", "0"]
    truth = [1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0]
    conf = np.linspace(0.05, 0.95, len(words))
    path = tmp_path / "words.csv"
    pd.DataFrame({"p": conf, "y": words}).to_csv(path, index=False)
    code, out, err = run(capsys, "score", str(path), "-c", "p", "-y", "y", "--bootstrap", "0",
                         "--json")
    assert code == 0, err
    res = json.loads(out)["results"][str(path)]
    assert res["n_used"] == 12 and res["accuracy"] == pytest.approx(0.5)
    assert res["auroc"] == pytest.approx(auroc(conf, truth), abs=1e-12)


def test_a_value_outside_its_interval_is_marked_and_the_mark_explained(capsys, tmp_path):
    # a calibrated judge on a 0.05 grid: ECE 0.011 under its resamples' interval (binned ECE
    # rises on resamples); the verdict marks it, one footnote says why
    path = tmp_path / "verbalised.csv"
    simulate("confidence", 2000, "calibrated", seed=4, step=0.05).to_csv(path, index=False)
    code, out, _ = run(capsys, "score", str(path), "-c", "confidence", "-y", "correct",
                       "--bootstrap", "200")
    flat = " ".join(out.split())
    assert code == 0 and "(ECE 0.01 [0.02, 0.04]†)" in flat
    assert flat.count("† the value lies outside its own 95% interval") == 1
    # no mark, no footnote
    calibrated = tmp_path / "calibrated.csv"
    simulate("confidence", 2000, "calibrated", seed=1).to_csv(calibrated, index=False)
    code, out, _ = run(capsys, "score", str(calibrated), "-c", "confidence", "-y", "correct",
                       "--bootstrap", "200")
    assert code == 0 and "†" not in out
