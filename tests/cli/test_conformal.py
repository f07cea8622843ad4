"""``confeval sets|intervals calibrate`` and ``apply``: the JSON contract (``validity.p_value``,
``validity.holds``), --strict's exit 4, the run folders and rerun, one-line errors."""

import json

import numpy as np
import pandas as pd

from confeval.cli import main

from ..verbs.test_conformal import _judge, _mc


def test_sets_calibrate_then_apply(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _mc(tmp_path / "cal.csv", 1000, seed=1)
    _mc(tmp_path / "new.csv", 300, seed=2, labels=False)
    _mc(tmp_path / "flat.csv", 300, seed=3, concentration=3.0, labels=False)
    flags = ["--input", "probs", "--logit-cols", "p_*", "--precision", "float64"]
    assert main(["sets", "calibrate", "cal.csv", *flags, "--alpha", "0.2", "--out", "cal",
                 "--json"]) == 0
    result = json.loads(capsys.readouterr().out)["calibrate"]
    predictor = json.loads((tmp_path / "cal" / "conformal.json").read_text())
    assert result["state"] == predictor["state"] and result["n_calibration"] == 1000
    assert "probability at least 0.8" in result["promise"]
    assert main(["sets", "apply", "cal/conformal.json", "new.csv", "--json", "--strict",
                 "--out", "sets.jsonl"]) == 0
    document = json.loads(capsys.readouterr().out)
    v = document["validity"]
    assert v["holds"] is True and 0.05 < v["p_value"] <= 1 and document["apply"]["validity"] == v
    rows = [json.loads(line) for line in (tmp_path / "sets.jsonl").read_text().splitlines()]
    assert len(rows) == 300 and all(r["set_size"] == len(r["set"]) >= 1 for r in rows)
    assert main(["sets", "apply", "cal/conformal.json", "flat.csv", "--strict"]) == 4
    assert "promise void" in capsys.readouterr().out
    assert main(["sets", "apply", "cal/conformal.json", "flat.csv", "--report", "rep"]) == 0
    capsys.readouterr()
    assert "Does the promise still apply?" in (tmp_path / "rep" / "report.html").read_text()
    for folder in ("cal", "rep"):
        assert main(["rerun", folder]) == 0
        assert "metrics identical" in capsys.readouterr().out
    for argv, message in [
        (["sets", "apply", "cal/run.json", "new.csv"], "not a confeval conformal predictor"),
        (["sets", "apply", "cal/conformal.json", "new.csv", "--out", "sets.jsonl"],
         "exists; use --force"),
        (["sets", "calibrate", "cal.csv", *flags, "--score", "zzz"], "--score 'zzz'"),
        (["intervals", "calibrate", "cal.csv", "--method", "cqr"], "a stored predictor"),
    ]:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err


def test_intervals_calibrate_then_apply_with_the_truth(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _judge(tmp_path / "cal.csv", 600, seed=1)
    _judge(tmp_path / "new.csv", 200, seed=2)
    assert main(["intervals", "calibrate", "cal.csv", "--out", "cal"]) == 0
    assert "holds the human score with probability at least 0.9" in capsys.readouterr().out
    assert main(["intervals", "apply", "cal/conformal.json", "new.csv", "--json"]) == 0
    v = json.loads(capsys.readouterr().out)["validity"]
    assert v["quantity"] == "nonconformity score of the true label" and v["holds"] is True
    assert v["risk"]["n_labelled"] == 200 and v["risk"]["holds"] is True
    # the human scores shuffled: the scores stop looking like the calibration's
    frame = pd.read_csv(tmp_path / "new.csv")
    frame["gt_score"] = np.random.default_rng(0).permutation(frame["gt_score"].to_numpy())
    frame.to_csv(tmp_path / "wrong.csv", index=False)
    assert main(["intervals", "apply", "cal/conformal.json", "wrong.csv", "--strict"]) == 4
    assert "promise void" in capsys.readouterr().out
