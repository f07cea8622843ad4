"""``confeval compare --suite steps``: CRS, CSS, CCS and their average of every process judge on
the chains all judged, equal to ``steps score`` on those chains; intervals and ranks from the
suite's own item resamples, the same for every judge."""

import json

import numpy as np
import pytest

from confeval.cli import main
from confeval.simulate import simulate


def _write(tmp_path):
    paths = []
    for k, behaviour in enumerate(("typical", "overconfident", "typical")):
        frame = simulate("steps", 60, behaviour, seed=k)
        if k == 2:
            frame = frame[frame["item_id"] != 7]          # one chain not judged
        path = tmp_path / f"judge{k}.csv"
        frame.to_csv(path, index=False)
        paths.append(path)
    return paths


def test_values_equal_steps_score_on_the_shared_chains(tmp_path, capsys):
    paths = _write(tmp_path)
    assert main(["compare", *map(str, paths), "--suite", "steps", "--bootstrap", "300",
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)["compare"]
    assert doc["n_items_shared"] == 59 and doc["not_shared"] == {"judge0": 0, "judge1": 0,
                                                                 "judge2": 1}
    assert list(doc["metrics"]) == ["crs", "css", "ccs", "avg"]
    import pandas as pd

    for path in paths:
        frame = pd.read_csv(path)
        frame[frame["item_id"] != 7].to_csv(tmp_path / "shared.csv", index=False)
        assert main(["steps", "score", str(tmp_path / "shared.csv"), "--bootstrap", "0",
                     "--json"]) == 0
        (own,) = json.loads(capsys.readouterr().out)["results"].values()
        for metric in ("crs", "css", "ccs", "avg"):
            assert doc["metrics"][metric]["models"][path.stem]["value"] == pytest.approx(
                own[metric], abs=1e-12), metric
    for table in doc["metrics"].values():
        for row in table["models"].values():
            assert row["low"] <= row["high"] and np.isfinite(row["rank_low"])
        assert {p["test"] for p in table["pairs"]} == {"paired_bootstrap"}
    # the overconfident judge is the least calibrated
    assert doc["metrics"]["ccs"]["models"]["judge1"]["rank"] == 3
