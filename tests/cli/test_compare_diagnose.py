"""``confeval compare --suite diagnose``: strict accuracy, parse rate and macro F1 of every
model on the shared items, equal to ``diagnose score``; McNemar for the 0/1 outcomes."""

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import f1_score

from confeval.cli import main

TYPES = ["vpe", "re", "qce", "kde"]


def _write(tmp_path, n=300):
    rng = np.random.default_rng(1)
    gold = rng.choice(TYPES, size=n, p=[0.2, 0.25, 0.1, 0.45])
    paths = []
    for m, skill in enumerate((0.8, 0.6, 0.4)):
        pred = np.where(rng.random(n) < skill, gold, rng.choice(TYPES, size=n)).astype(object)
        pred[rng.random(n) < 0.05 * (m + 1)] = None          # unparseable replies
        frame = pd.DataFrame({"item_id": [f"i{k}" for k in range(n)], "gold_type": gold,
                              "pred_type": pred, "domain": rng.choice(["ML", "PE"], n)})
        if m == 1:
            frame = frame.iloc[::-1]            # its own order
        path = tmp_path / f"model{m}.csv"
        frame.to_csv(path, index=False)
        paths.append(path)
    return paths


def test_values_equal_diagnose_score_and_tests(tmp_path, capsys):
    paths = _write(tmp_path)
    assert main(["compare", *map(str, paths), "--suite", "diagnose", "--bootstrap", "200",
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)["compare"]
    assert doc["n_items_shared"] == 300 and set(doc["metrics"]) == {
        "accuracy_strict", "parse_rate", "macro_f1"}
    assert doc["options"]["id_col"] == "item_id"
    for path in paths:
        assert main(["diagnose", "score", str(path), "--simulations", "0", "--json"]) == 0
        (own,) = json.loads(capsys.readouterr().out)["results"].values()
        for metric in ("accuracy_strict", "parse_rate", "macro_f1"):
            assert doc["metrics"][metric]["models"][path.stem]["value"] == pytest.approx(
                own[metric], abs=1e-12), metric
        frame = pd.read_csv(path, keep_default_na=False)
        pred = frame["pred_type"].replace("", "unparseable")
        labels = sorted(set(frame["gold_type"]) | set(pred) - {"unparseable"})
        assert own["macro_f1"] == pytest.approx(
            f1_score(frame["gold_type"], pred, labels=labels, average="macro"), abs=1e-12)
    assert {p["test"] for p in doc["metrics"]["accuracy_strict"]["pairs"]} == {"mcnemar_exact"}
    assert {p["test"] for p in doc["metrics"]["macro_f1"]["pairs"]} == {"paired_bootstrap"}
    ranked = doc["models"]
    assert ranked == ["model0", "model1", "model2"]
