"""``confeval compare --suite sets``: every model scored by the sets suite's own path on one split
of the shared items — values equal to ``confeval sets score`` of each file with that split (the
26 VLMs of the shared data, both protocols), ranks consistent with values, a model compared
with itself in one group with p = 1, items missing counted."""

import json
from pathlib import Path

import numpy as np
import pytest

from confeval.cli import main
from confeval.simulate import simulate

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
MMBENCH = DATA / "vlm-uncertainty-bench" / "per_sample" / "mmbench"
needs_data = pytest.mark.skipif(not MMBENCH.is_dir(),
                                reason=f"shared data absent ({MMBENCH}); see its README")


def _run(capsys, argv):
    assert main(argv) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def _check_values_equal_sets_score(capsys, files, protocol, names=None):
    args = ["--id-col", "index", "--protocol", protocol, "--scores", "lac,aps",
            "--split-seed", "42"]
    doc = _run(capsys, ["compare", *map(str, files), "--suite", "sets", *args,
                        "--bootstrap", "200", "--json"])["compare"]
    assert doc["suite"] == "sets" and doc["n_items_shared"] == 4377
    assert set(doc["not_shared"].values()) == {0}
    single = _run(capsys, ["sets", "score", *map(str, files), *args[2:], "--json"])["results"]
    names = names or [f.name[: -len(".csv.gz")] for f in files]
    for name, file in zip(names, files):
        own = single[str(file)]
        metrics = doc["metrics"]
        assert metrics["accuracy"]["models"][name]["value"] == own["accuracy"]
        assert metrics["ece"]["models"][name]["value"] == own["ece"]
        for score in ("lac", "aps"):
            for key in ("coverage", "set_size", "uacc"):
                assert metrics[f"{score}_{key}"]["models"][name]["value"] == \
                    own["scores"][score][key], (name, score, key)
    for metric, table in doc["metrics"].items():   # ranks follow the values
        ranked = sorted(table["models"].items(), key=lambda kv: kv[1]["rank"])
        coverage = metric.endswith("_coverage")   # ranked by the distance to 1 - alpha
        assert coverage == ("target" in table)
        if coverage:
            assert table["higher_is_better"] is None
            values = [-abs(row["value"] - table["target"]) for _, row in ranked]
        else:
            sign = 1 if table["higher_is_better"] else -1
            values = [sign * row["value"] for _, row in ranked]
        assert values == sorted(values, reverse=True), metric
        for row in table["models"].values():
            assert row["rank_low"] <= row["rank"] + 1e-9 or row["rank_high"] >= row["rank"]
            assert 1 <= row["rank_low"] <= row["rank_high"] <= len(table["models"])
            # whole ranks (the README's 26 models once had [2-17.0125] from interpolation)
            assert type(row["rank_low"]) is int and type(row["rank_high"]) is int
    return doc


@needs_data
def test_26_vlms_equal_sets_score_with_the_same_split(capsys):
    files = sorted(MMBENCH.glob("*.csv.gz"))
    assert len(files) == 26
    doc = _check_values_equal_sets_score(capsys, files, "vlm-bench")
    assert len(doc["metrics"]["accuracy"]["pairs"]) == 325
    tests = {p["test"] for p in doc["metrics"]["lac_coverage"]["pairs"]}
    assert tests == {"mcnemar_exact"}
    assert {p["test"] for p in doc["metrics"]["lac_set_size"]["pairs"]} == {"paired_bootstrap"}


@needs_data
def test_exact_protocol_and_a_model_against_itself(capsys):
    files = sorted(MMBENCH.glob("*.csv.gz"))[:3]
    copy = files[0]
    argv_files = [*files, copy]
    names = [f.name[: -len(".csv.gz")] for f in files] + ["twin"]
    doc = _run(capsys, ["compare", *map(str, argv_files), "--name", f"twin={copy}",
                        "--suite", "sets", "--id-col", "index", "--bootstrap", "200",
                        "--json"])
    assert "twin" in doc["compare"]["models"]
    # the name given to the second occurrence of the same path: both kept, compared alike
    for metric, table in doc["compare"]["metrics"].items():
        first, twin = names[0], "twin"
        assert table["models"][first]["value"] == table["models"][twin]["value"]
        assert table["models"][first]["group"] == table["models"][twin]["group"], metric
        (pair,) = [p for p in table["pairs"] if {p["a"], p["b"]} == {first, twin}]
        assert pair["p"] == 1.0 and pair["p_holm"] == 1.0 and pair["diff"] == 0.0
    _check_values_equal_sets_score(capsys, files, "exact")


def test_simulated_models_share_the_split_and_count_missing_items(tmp_path, capsys):
    paths = []
    for k in range(3):
        frame = simulate("mcq", 300, seed=k)
        frame.insert(0, "qid", [f"q{i}" for i in range(300)])
        if k == 2:
            frame = frame.drop(index=[0, 10, 20])
        path = tmp_path / f"m{k}.csv"
        frame.to_csv(path, index=False)
        paths.append(path)
    doc = _run(capsys, ["compare", *map(str, paths), "--suite", "sets", "--id-col", "qid",
                        "--alpha", "0.2", "--scores", "lac", "--bootstrap", "100",
                        "--json"])["compare"]
    assert doc["n_items_shared"] == 297
    assert doc["not_shared"] == {"m0": 0, "m1": 0, "m2": 3}
    assert doc["options"]["alpha"] == 0.2 and doc["options"]["scores"] == ["lac"]
    assert set(doc["metrics"]) == {"accuracy", "ece", "lac_coverage", "lac_set_size",
                                   "lac_uacc"}
    # m0 on the shared items in the shared order: sets score of that file gives its values
    import pandas as pd

    shared = pd.read_csv(paths[0])
    shared = shared[~shared["qid"].isin(["q0", "q10", "q20"])]
    shared.to_csv(tmp_path / "m0_shared.csv", index=False)
    single = _run(capsys, ["sets", "score", str(tmp_path / "m0_shared.csv"), "--alpha", "0.2",
                           "--scores", "lac", "--json"])["results"]
    (own,) = single.values()
    assert doc["metrics"]["lac_coverage"]["models"]["m0"]["value"] == \
        own["scores"]["lac"]["coverage"]
    assert doc["metrics"]["accuracy"]["models"]["m0"]["value"] == own["accuracy"]
    assert np.isclose(doc["metrics"]["ece"]["models"]["m0"]["value"], own["ece"], atol=1e-15)
