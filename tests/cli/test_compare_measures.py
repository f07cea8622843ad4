"""``confeval compare --suite measures``: models ranked per measure on the (question, option)
rows they share, resampled by question; the measures ranked over all models at once."""

import json

import numpy as np
import pandas as pd
import pytest

from confeval.cli import main


def _write(tmp_path, n_questions=80, k=4):
    rng = np.random.default_rng(0)
    paths = []
    for m, skill in enumerate((1.5, 0.8, 0.3)):
        q = np.repeat([f"q{i}" for i in range(n_questions)], k)
        option = np.tile(list("ABCD"[:k]), n_questions)
        gold = (option == "A").astype(int)
        good = gold * skill + rng.normal(0, 0.7, q.size)
        frame = pd.DataFrame({"question_id": q, "option": option, "correct": gold,
                              "good": good, "likert": np.round(np.clip(good, -1, 2) * 2) / 2,
                              "noise": rng.normal(0, 1, q.size)})
        if m == 2:
            frame = frame[frame["question_id"] != "q3"]   # one question missing
        frame = frame.sample(frac=1.0, random_state=m)   # its own row order
        path = tmp_path / f"model{m}.csv"
        frame.to_csv(path, index=False)
        paths.append(path)
    return paths


def test_models_per_measure_and_measures_across_models(tmp_path, capsys):
    paths = _write(tmp_path)
    cols = ["--measure-cols", "good,likert,noise"]
    assert main(["compare", *map(str, paths), "--suite", "measures", *cols, "--bootstrap",
                 "200", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)["compare"]
    assert doc["n_items_shared"] == 79 * 4
    assert doc["not_shared"] == {"model0": 0, "model1": 0, "model2": 4}
    assert list(doc["metrics"]) == [f"{m}_{k}" for m in ("good", "likert", "noise")
                                    for k in ("auroc", "auarc")]
    # each value is measures score's on the shared rows
    for path in paths:
        frame = pd.read_csv(path)
        frame[frame["question_id"] != "q3"].to_csv(tmp_path / "shared.csv", index=False)
        assert main(["measures", "score", str(tmp_path / "shared.csv"), *cols,
                     "--bootstrap", "0", "--json"]) == 0
        (own,) = json.loads(capsys.readouterr().out)["results"].values()
        for measure in ("good", "likert", "noise"):
            for key in ("auroc", "auarc"):
                assert doc["metrics"][f"{measure}_{key}"]["models"][path.stem]["value"] == \
                    pytest.approx(own["measures"][measure][key], abs=1e-12)
    good = doc["metrics"]["good_auroc"]
    assert [n for n, _ in sorted(good["models"].items(), key=lambda kv: kv[1]["rank"])] == \
        ["model0", "model1", "model2"]
    assert {p["test"] for p in good["pairs"]} == {"paired_bootstrap"}   # questions resampled
    across = doc["measures_across_models"]
    assert across["ranked"][:2] == ["good", "likert"] and across["ranked"][-1] == "noise"
    mean = across["metrics"]["mean_auroc"]["models"]
    assert mean["good"]["value"] == pytest.approx(
        np.mean([good["models"][m]["value"] for m in good["models"]]), abs=1e-12)
    noise_pairs = [p for p in across["metrics"]["mean_auroc"]["pairs"] if "noise" in
                   (p["a"], p["b"])]
    assert all(p["p_holm"] < 0.05 for p in noise_pairs)


def test_models_without_a_shared_measure_are_refused_in_one_line(tmp_path, capsys):
    paths = _write(tmp_path, n_questions=10)
    frame = pd.read_csv(paths[1]).rename(columns={"good": "g2", "likert": "l2", "noise": "n2"})
    frame.to_csv(paths[1], index=False)
    assert main(["compare", str(paths[0]), str(paths[1]), "--suite", "measures",
                 "--measure-cols", "good,likert,noise"]) == 2
    err = capsys.readouterr().err
    assert "model1.csv: measure column 'good' not found" in err and err.count("\n") == 1
    from confeval.suites.measures.compare import _shared_measures

    with pytest.raises(ValueError, match="the models share no measure: a: SL; b: Deg"):
        _shared_measures({"a": {"names": ["SL"]}, "b": {"names": ["Deg"]}})
    assert _shared_measures({"a": {"names": ["SL", "Deg"]}, "b": {"names": ["Deg", "SL"]}}) \
        == ["SL", "Deg"]
