"""Scoring multiple-choice record files with conformal sets (library calls; the command line is
in tests/cli/test_sets.py)."""

import numpy as np
import pytest

from confeval.simulate import simulate
from confeval.suites.sets import SetsOptions, score_sets, score_sets_file


@pytest.fixture
def mcq_file(tmp_path):
    df = simulate("mcq", 600, "overconfident", seed=4, n_options=4)
    df.loc[0, "answer"] = "Z"            # unknown label
    df.loc[1, "logit_B"] = np.nan       # a missing option is fine ...
    df.loc[1, "answer"] = "A"
    df.loc[2, "logit_C"] = np.nan       # ... unless it is the gold one
    df.loc[2, "answer"] = "C"
    path = tmp_path / "mcq.jsonl"
    df.to_json(path, orient="records", lines=True)
    return path


def test_a_file_with_exclusions_seeds_and_groups(mcq_file):
    config = SetsOptions(seeds=(1, 2, 3, 4, 5),
                         scores=("lac", "aps", "raps", "margin", "aps_randomized"),
                         group_col="category")
    res = score_sets_file(mcq_file, config)
    assert res["excluded"] == {"unknown_label": 1, "gold_option_missing": 1}
    assert res["n_used"] == 598 and res["n_splits"] == 5 and res["seeds"] == [1, 2, 3, 4, 5]
    assert res["options"] == ["A", "B", "C", "D"]
    for name in config.scores:
        cov = res["scores"][name]["coverage"]
        assert set(cov) == {"mean", "std"} and cov["mean"] > 0.85
    assert set(res["groups"]) == {"easy", "medium", "hard"}
    assert set(res["accuracy"]) == {"mean", "std"}
    # the spread over seeds is the sample std (ddof=1) of the per-split values
    singles = [score_sets_file(mcq_file, SetsOptions(split_seed=s, scores=("lac",),
                                                     group_col="category"))
               for s in range(1, 6)]
    values = [r["scores"]["lac"]["coverage"] for r in singles]
    assert res["scores"]["lac"]["coverage"]["mean"] == pytest.approx(np.mean(values))
    assert res["scores"]["lac"]["coverage"]["std"] == pytest.approx(np.std(values, ddof=1))


def test_config_validates_itself_once():
    for kwargs, message in (({"scores": ("lac", "nope")}, r"unknown score\(s\) \['nope'\]"),
                            ({"protocol": "paper"}, "unknown protocol 'paper'"),
                            ({"input": "odds"}, "--input must be"),
                            ({"precision": "float16"}, "--precision must be"),
                            ({"alpha": 1.0}, "--alpha must be in"),
                            ({"scores": ()}, "--scores is empty")):
        with pytest.raises(ValueError, match=message):
            SetsOptions(**kwargs)


def test_alpha_sets_the_coverage_target():
    rng = np.random.default_rng(0)
    probs = rng.dirichlet(np.ones(4), size=400)
    labels = rng.integers(0, 4, size=400)
    res = score_sets(probs, labels, alpha=0.2, scores=("lac",))
    assert res["alpha"] == 0.2 and res["coverage_target"] == pytest.approx(0.8)
    with pytest.raises(ValueError, match="at least 4 rows"):
        score_sets(probs[:3], labels[:3])


def test_rows_with_a_tied_top_option_are_counted_and_said(tmp_path):
    # five rows whose logits are all equal, and two whose top two are equal: seven rows where
    # the option order picks the prediction; accuracy then takes the first (argmax)
    df = simulate("mcq", 300, seed=2, n_options=4)
    letters = ["A", "B", "C", "D"]
    df.loc[:4, [f"logit_{x}" for x in letters]] = 1.5
    df.loc[5:6, "logit_A"] = 9.0
    df.loc[5:6, "logit_C"] = 9.0
    path = tmp_path / "ties.jsonl"
    df.to_json(path, orient="records", lines=True)
    res = score_sets_file(path, SetsOptions(scores=("lac",)))
    logits = df[[f"logit_{x}" for x in letters]].to_numpy(np.float32)
    tied = int(((logits == logits.max(axis=1, keepdims=True)).sum(axis=1) > 1).sum())
    assert tied == 7 and res["notes"]["tied_top_option"] == 7
    assert any("7 of 300 rows have a tied top option" in w for w in res["warnings"])
    # no tie, no note
    clean = tmp_path / "clean.jsonl"
    simulate("mcq", 300, seed=2, n_options=4).to_json(clean, orient="records", lines=True)
    assert "tied_top_option" not in score_sets_file(clean, SetsOptions(scores=("lac",))).get(
        "notes", {})


def test_compare_says_a_models_tied_top_options_as_sets_score_does(tmp_path):
    from confeval.records import RecordSet
    from confeval.verbs.compare import CompareOptions, compare_records

    tied = simulate("mcq", 300, seed=2, n_options=4)
    tied.loc[:4, [f"logit_{x}" for x in "ABCD"]] = 1.5
    clean = simulate("mcq", 300, seed=3, n_options=4)
    sets = {}
    for name, df in (("tied", tied), ("clean", clean)):
        df.to_json(tmp_path / f"{name}.jsonl", orient="records", lines=True)
        sets[name] = RecordSet.read(tmp_path / f"{name}.jsonl")
    out = compare_records(sets, CompareOptions(suite="sets", id_col="item_id", bootstrap=20),
                          SetsOptions(scores=("lac",)))
    assert [w for w in out["warnings"] if "tied top option" in w] == [
        "shared items with a tied top option, whose prediction is the first tied option in "
        "column order (as argmax takes it), of 300: tied 5"]
