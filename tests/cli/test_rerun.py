"""``confeval rerun``: a scoring folder repeated from its run.json gives an identical
metrics.json, or one line naming the input that changed; a live folder is rescored from its
records with no model call."""

from __future__ import annotations

import json

import pytest

from confeval.backends import ScriptedBackend
from confeval.cli import main
from confeval.runs import file_sha256
from confeval.simulate import simulate
from confeval.tasks import arith_mc
from confeval.verbs.rerun import differences, rerun
from confeval.verbs.run import live_part as get_suite
from confeval.verbs.run import run_suite


def _run(argv, capsys):
    capsys.readouterr()
    code = main([str(a) for a in argv])
    return code, *capsys.readouterr()


def test_an_intervals_scoring_folder_reruns_identically(tmp_path, capsys):
    path = tmp_path / "judge.csv"
    simulate("scores", 300, "compressing", seed=3).to_csv(path, index=False)
    code, _, err = _run(["intervals", "score", path, "--logprob-cols", "score_lp*",
                         "--pred-col", "parsed_score", "--methods", "naive,lac", "--seeds",
                         "1-2", "--alpha", "0.2", "--out", tmp_path / "R"], capsys)
    assert code == 0, err
    code, out, err = _run(["rerun", tmp_path / "R", "--out", tmp_path / "R2"], capsys)
    assert code == 0 and "metrics identical" in out, out + err
    first = json.loads((tmp_path / "R" / "metrics.json").read_text())
    second = json.loads((tmp_path / "R2" / "metrics.json").read_text())
    assert differences(first, second) == []
    assert second["sections"][0]["results"][str(path)]["alpha"] == 0.2
    # an edited input is named in one line
    path.write_text(path.read_text().replace("\n1,", "\n2,", 1))
    code, _, err = _run(["rerun", tmp_path / "R"], capsys)
    assert code == 2 and err.count("\n") == 1
    assert f"{path}: changed since the run" in err


def test_a_sets_scoring_folder_reruns_identically(tmp_path, capsys):
    path = tmp_path / "mcq.csv"
    simulate("mcq", 300, seed=4).to_csv(path, index=False)
    assert _run(["sets", "score", path, "--seeds", "1-3", "--scores", "lac,aps", "--out",
                 tmp_path / "R"], capsys)[0] == 0
    code, out, _ = _run(["rerun", tmp_path / "R"], capsys)
    assert code == 0 and "metrics identical" in out


def test_a_live_folder_is_rescored_from_its_records_without_a_model(tmp_path):
    items = arith_mc(30, seed=5)

    def scorer(messages, letter):  # varied, deterministic option distributions
        bump = sum(map(ord, messages[-1]["content"])) % 7 / 3
        return -0.5 * ("ABCDEF".index(letter) + 1) + (bump if letter == "B" else 0.0)

    backend = ScriptedBackend(scorer=scorer)
    suite = get_suite("sets")
    result = run_suite(suite, backend, items, tmp_path / "R", config={
        "command": "run", "suite": "sets", "model": "scripted"},
        options=suite.Options(bootstrap=20, alpha=0.2), model_name="scripted")
    calls = backend.calls
    again = rerun(tmp_path / "R", tmp_path / "R2")
    assert backend.calls == calls
    assert differences(result.metrics, again) == []
    assert again["sections"][1]["results"]["scripted"]["alpha"] == 0.2


def _reruns_identically(tmp_path, capsys, argv):
    out_dir = tmp_path / "R"
    code, _, err = _run([*argv, "--out", out_dir], capsys)
    assert code == 0, err
    code, out, err = _run(["rerun", out_dir, "--out", tmp_path / "R2"], capsys)
    assert code == 0 and "metrics identical" in out, out + err
    first = json.loads((out_dir / "metrics.json").read_text())
    second = json.loads((tmp_path / "R2" / "metrics.json").read_text())
    assert differences(first, second) == [] and first["sections"][0]["results"]
    return json.loads((out_dir / "run.json").read_text())["config"]


def test_score_and_agreement_folders_hold_every_option_and_rerun(tmp_path, capsys):
    conf = tmp_path / "conf.csv"
    simulate("confidence", 200, "overconfident", seed=1).to_csv(conf, index=False)
    config = _reruns_identically(tmp_path, capsys, [
        "score", conf, "-c", "confidence", "-y", "correct", "--any-confidence",
        "--bootstrap", "50", "--seed", "3"])
    (entry,) = config["inputs"]
    assert entry["options"] == {"confidence_col": "confidence", "correct_col": "correct",
                                "confidence_scale": 1.0,
                                "any_confidence": True, "n_bins": 15, "rce_bins": 20,
                                "bootstrap": 50, "seed": 3, "from_format": "auto",
                                "data_file": None, "normalise": "none",
                                "filter_name": None, "scorer": None, "epochs": "each"}
    judge = tmp_path / "judge.csv"
    simulate("scores", 200, "compressing", seed=2).to_csv(judge, index=False)
    config = _reruns_identically(tmp_path / "a", capsys, [
        "agreement", judge, "--pred-col", "parsed_score", "--gt-col", "gt_score",
        "--logprob-cols", "score_lp*", "--bootstrap", "20"])
    (entry,) = config["inputs"]
    assert entry["options"]["logprob_cols"] == "score_lp*"
    # the glob as given, and the columns it matched
    assert entry["resolved"] == {"logprob_cols": [f"score_lp{k}" for k in range(1, 6)]}


def test_measures_study_folders_rerun(tmp_path, capsys):
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    score = rng.random(240)
    samples = pd.DataFrame({"question_id": np.repeat(np.arange(40), 6), "score": score,
                            "sl": score + rng.normal(0, 0.3, 240), "deg_j": rng.random(240)})
    path = tmp_path / "samples.csv"
    samples.to_csv(path, index=False)
    config = _reruns_identically(tmp_path / "t", capsys, [
        "measures", "thresholds", path, "--thresholds", "0.3,0.6", "--measure-cols",
        "sl,deg_j"])
    assert config["inputs"][0]["options"]["thresholds"] == [0.3, 0.6]
    config = _reruns_identically(tmp_path / "n", capsys, [
        "measures", "noise", path, "--sigmas", "0,1", "--seeds", "1-3", "--measure-cols",
        "sl,deg_j"])
    assert config["inputs"][0]["options"]["seeds"] == [1, 2, 3]
    rows = pd.DataFrame({"question_id": np.repeat(np.arange(40), 4),
                         "correct": np.tile([1, 0, 0, 0], 40), "sl": rng.random(160),
                         "deg_j": rng.random(160)})
    options_path = tmp_path / "options.csv"
    rows.to_csv(options_path, index=False)
    config = _reruns_identically(tmp_path / "c", capsys, [
        "measures", "compare", options_path, path, "--threshold", "0.4", "--measure-cols",
        "sl,deg_j"])
    (entry,) = config["inputs"]
    assert entry["path"] == [str(options_path), str(path)] and len(entry["sha256"]) == 2


def test_a_diagnose_folder_with_a_pair_and_a_human_row_reruns(tmp_path, capsys):
    etc, epd, human = tmp_path / "etc.jsonl", tmp_path / "epd.jsonl", tmp_path / "human.csv"
    gold = ["re", "kde", "vpe", "qce"] * 10
    etc_pred = [g if i % 3 else "kde" for i, g in enumerate(gold)]
    epd_pred = [p if i % 5 else "no_error" for i, p in enumerate(etc_pred)]
    for path, pred in ((etc, etc_pred), (epd, epd_pred)):
        path.write_text("".join(json.dumps({"item_id": i, "gold_type": g, "pred_type": p,
                                            "domain": "ML" if i % 2 else "PE"}) + "\n"
                                for i, (g, p) in enumerate(zip(gold, pred))))
    human.write_text("domain,accuracy\nML,0.91\ntotal,0.89\n")
    config = _reruns_identically(tmp_path, capsys, [
        "diagnose", "score", etc, "--pair", f"{etc},{epd}", "--human", human,
        "--bootstrap", "30"])
    assert config["extra"] == [f"{etc},{epd}"]
    assert config["inputs"][0]["option_files"] == {str(human): file_sha256(human)}
    metrics = json.loads((tmp_path / "R" / "metrics.json").read_text())
    result = metrics["sections"][0]["results"][str(etc)]
    assert "epd_drop" in result and result["baselines"]["human"]["ML"] == 0.91
    # the human row is an input too: editing it is named
    human.write_text("domain,accuracy\nML,0.5\n")
    code, _, err = _run(["rerun", tmp_path / "R"], capsys)
    assert code == 2 and f"{human}: changed since the run" in err


def _tamper(config: dict, case: str) -> None:
    given = config["inputs"][0]
    if case == "path is a number":
        given["path"] = 1
    elif case == "no paths":
        given["path"], given["sha256"] = [], []
    elif case == "no sha256":
        del given["sha256"]
    elif case == "option files a list":
        given["option_files"] = ["a"]
    elif case == "cwd a number":
        config["cwd"] = 7
    else:   # another command's name, without that command's fields
        config["command"] = "judge card"


@pytest.mark.parametrize("case", ["path is a number", "no paths", "no sha256",
                                  "option files a list", "cwd a number", "another command"])
def test_a_tampered_run_json_is_named_in_one_line(tmp_path, capsys, monkeypatch, case):
    """Fields of another kind than confeval writes: one line naming run.json (the fifth
    hostile round: "unexpected TypeError", naming neither the file nor the field). The input
    is named relative to the run's directory, as a user types it (its cwd is then read)."""
    monkeypatch.chdir(tmp_path)
    path = "judge.csv"
    simulate("confidence", 200, seed=1).to_csv(path, index=False)
    assert _run(["score", path, "-c", "confidence", "-y", "correct", "--bootstrap", "0",
                 "--out", tmp_path / "R"], capsys)[0] == 0
    run_json = tmp_path / "R" / "run.json"
    document = json.loads(run_json.read_text())
    _tamper(document["config"], case)
    run_json.write_text(json.dumps(document))
    code, out, err = _run(["rerun", tmp_path / "R"], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert "run.json" in err and "unexpected" not in err


def test_a_run_json_naming_a_key_twice_is_named_in_one_line(tmp_path, capsys, monkeypatch):
    """Two sha256 of one input: json keeps the last, another tool reading the first checks
    another file. Refused naming run.json and the key, the input never scored."""
    monkeypatch.chdir(tmp_path)
    simulate("confidence", 200, seed=1).to_csv("judge.csv", index=False)
    assert _run(["score", "judge.csv", "-c", "confidence", "-y", "correct", "--bootstrap",
                 "0", "--out", tmp_path / "R"], capsys)[0] == 0
    run_json = tmp_path / "R" / "run.json"
    text = run_json.read_text()
    assert text.count('"sha256": "') == 1
    run_json.write_text(text.replace('"sha256": "', '"sha256": "0", "sha256": "', 1))
    code, out, err = _run(["rerun", tmp_path / "R"], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert f"{run_json}: key 'sha256' appears twice in one object" in err
