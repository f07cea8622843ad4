"""``confeval compare`` (score suite): exit codes, the JSON contract, values equal to
``confeval score`` on the shared items, names and one-line errors."""

import json

import numpy as np
import pandas as pd
import pytest

from confeval.cli import main


def _write(tmp_path, n=150, seed=0):
    rng = np.random.default_rng(seed)
    truth = rng.random(n)
    paths = []
    for k, skill in enumerate([0.3, 0.8, 1.2]):
        conf = np.round(np.clip(truth * skill + rng.random(n) * 0.5, 0, 1), 2)
        correct = (rng.random(n) < np.clip(truth + 0.1 * k, 0, 1)).astype(int)
        frame = pd.DataFrame({"id": [f"q{i}" for i in range(n)], "p": conf, "y": correct})
        if k == 2:
            frame = frame.iloc[5:]   # five items missing
        path = tmp_path / f"judge{k}.csv"
        frame.sample(frac=1.0, random_state=k).to_csv(path, index=False)
        paths.append(path)
    return paths


def test_compare_json_contract_and_values_equal_score(tmp_path, capsys):
    paths = _write(tmp_path)
    args = ["--id-col", "id", "-c", "p", "-y", "y", "--bootstrap", "200", "--json"]
    assert main(["compare", *map(str, paths), *args]) == 0
    doc = json.loads(capsys.readouterr().out)["compare"]
    assert doc["suite"] == "score" and doc["n_items_shared"] == 145
    assert doc["not_shared"] == {"judge0": 0, "judge1": 0, "judge2": 5}
    assert set(doc["metrics"]) >= {"accuracy", "auroc", "ece", "brier", "auarc"}
    for table in doc["metrics"].values():
        assert set(table) == {"higher_is_better", "models", "pairs"}
        for row in table["models"].values():
            assert set(row) == {"value", "low", "high", "rank", "rank_low", "rank_high",
                                "group"}
        assert len(table["pairs"]) == 3
        for pair in table["pairs"]:
            assert pair["test"] in ("mcnemar_exact", "delong", "paired_bootstrap")
            assert 0 <= pair["p"] <= pair["p_holm"] <= 1
    accuracy = doc["metrics"]["accuracy"]["models"]
    assert doc["models"] == sorted(accuracy, key=lambda m: accuracy[m]["rank"])
    # each model's value is confeval score's on the shared items
    shared = tmp_path / "shared.csv"
    frame = pd.read_csv(paths[0])
    frame[frame["id"].isin([f"q{i}" for i in range(5, 150)])].to_csv(shared, index=False)
    assert main(["score", str(shared), "-c", "p", "-y", "y", "--bootstrap", "0",
                 "--json"]) == 0
    (single,) = json.loads(capsys.readouterr().out)["results"].values()
    for metric in ("accuracy", "auroc", "ece", "brier", "auarc"):
        assert doc["metrics"][metric]["models"]["judge0"]["value"] == pytest.approx(
            single[metric], abs=1e-12)


def test_names_table_and_one_line_errors(tmp_path, capsys):
    paths = _write(tmp_path)
    args = ["--id-col", "id", "-c", "p", "-y", "y", "--bootstrap", "50"]
    assert main(["compare", str(paths[0]), str(paths[1]), "--name", f"A={paths[0]}",
                 *args]) == 0
    text = capsys.readouterr().out
    assert "accuracy (higher is better), 150 shared items" in text and " A " in text
    for argv, message in [
        (["compare", str(paths[0]), *args], "at least two inputs"),
        (["compare", str(paths[0]), str(paths[0]), *args], "two inputs are named 'judge0'"),
        (["compare", *map(str, paths[:2]), "--suite", "sets", *args], "compares score so far"),
        (["compare", *map(str, paths[:2]), "--id-col", "nope", "-c", "p", "-y", "y"],
         "no id column 'nope'"),
    ]:
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err
