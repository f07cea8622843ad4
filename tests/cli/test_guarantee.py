"""``confeval guarantee``: the JSON contract, the split, no threshold said as such, one-line
errors."""

import json

import numpy as np
import pandas as pd
import pytest

from confeval.cli import main
from confeval.guarantee import ltt_threshold


def _file(tmp_path, n=1500, informative=True, seed=0):
    rng = np.random.default_rng(seed)
    q = rng.beta(4, 2, n)
    conf = q if informative else rng.random(n)
    frame = pd.DataFrame({"p": np.round(conf, 3), "y": (rng.random(n) < q).astype(int)})
    path = tmp_path / "judge.csv"
    frame.to_csv(path, index=False)
    return path, frame


def test_contract_and_values_equal_the_library(tmp_path, capsys):
    path, frame = _file(tmp_path)
    assert main(["guarantee", str(path), "-c", "p", "-y", "y", "--target", "0.15", "--delta",
                 "0.1", "--method", "ltt", "--json"]) == 0
    g = json.loads(capsys.readouterr().out)["guarantee"]
    assert {"threshold", "answer_if", "bound", "method", "n_calibration", "test"} <= set(g)
    assert g["answer_if"] == "confidence >= threshold" and g["method"] == "ltt"
    assert g["n_calibration"] == 1500 and g["test"] is None
    expected = ltt_threshold(frame["p"], frame["y"], target=0.15, delta=0.1)
    assert g["threshold"] == expected.threshold and g["bound"] == pytest.approx(expected.bound)
    assert g["bound"] <= 0.15 and "at most 0.15" in g["guarantee"]
    assert main(["guarantee", str(path), "-c", "p", "-y", "y", "--target", "0.2",
                 "--split-seed", "3", "--json"]) == 0
    g = json.loads(capsys.readouterr().out)["guarantee"]
    assert g["n_calibration"] == 750 and g["test"]["n"] == 750
    assert 0 < g["test"]["coverage"] <= 1 and 0 <= g["test"]["risk"] <= 1


def test_nothing_certified_and_errors(tmp_path, capsys):
    path, _ = _file(tmp_path, n=200, informative=False)
    assert main(["guarantee", str(path), "-c", "p", "-y", "y", "--target", "0.05",
                 "--json"]) == 0
    g = json.loads(capsys.readouterr().out)["guarantee"]
    assert g["threshold"] is None and g["bound"] is None
    assert g["guarantee"].startswith("No threshold is certified")
    for argv, message in [
        (["--target", "0.1", "--method", "crc"], "--method 'crc': so far ltt"),
        (["--target", "1.5"], "--target must be in (0, 1)"),
        (["--target", "0.1", "--fwer", "bh"], "--fwer 'bh'"),
    ]:
        assert main(["guarantee", str(path), "-c", "p", "-y", "y", *argv]) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err


def test_the_sets_decision_is_the_top_option(tmp_path, capsys):
    from confeval.simulate import simulate

    frame = simulate("mcq", 2000, seed=4)
    path = tmp_path / "mcq.csv"
    frame.to_csv(path, index=False)
    assert main(["guarantee", str(path), "--suite", "sets", "--target", "0.2",
                 "--json"]) == 0
    g = json.loads(capsys.readouterr().out)["guarantee"]
    logits = frame[[c for c in frame.columns if c.startswith("logit_")]].to_numpy(np.float32)
    probs = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs /= probs.sum(axis=1, keepdims=True)
    gold = frame["answer"].map("ABCD".index).to_numpy()
    expected = ltt_threshold(probs.max(axis=1).astype(np.float64),
                             (probs.argmax(axis=1) == gold).astype(float), target=0.2,
                             delta=0.1)
    assert g["threshold"] == pytest.approx(expected.threshold, rel=1e-6)
    assert g["calibration"]["answered"] == int(expected.to_dict()["calibration"]["answered"])
