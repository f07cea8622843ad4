"""``confeval judge card``: its JSON equal to the commands it reuses run on their own (``judge
mean --json``, ``guarantee --suite agreement --json``, ``judge reruns --json``), several
judges side by side on an 80-column terminal, one-line errors, and a run folder that holds its
schemas and is repeated by ``confeval rerun``."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from confeval.cli import main
from confeval.simulate import simulate_pairwise, simulate_reruns
from tests.cli.schema_check import assert_holds_schemas

COLS = ["--judge-col", "judge", "--human-col", "gt_score", "--logprob-cols", "score_lp*",
        "--bootstrap", "100", "--interval-seeds", "1-2"]


def _file(tmp_path, seed=0, n=200, name=None):
    frame = simulate_reruns(n, "sampling", seed=seed)
    frame["judge"] = frame["rerun_1"]
    frame["gt_score"] = frame["gt_score"].astype(float)
    frame.loc[n - 40:, "gt_score"] = np.nan   # 40 items no human scored
    path = tmp_path / (name or f"judge{seed}.csv")
    frame.to_csv(path, index=False)
    return path


def _run(argv, capsys) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_the_json_card_is_what_each_reused_command_prints(tmp_path, capsys):
    path = _file(tmp_path)
    pairs = tmp_path / "pairs.csv"
    simulate_pairwise(100, seed=1).to_csv(pairs, index=False)
    code, out, err = _run(["judge", "card", path, *COLS, "--target", "0.3", "--reruns", path,
                           "--rerun-score-cols", "rerun_*", "--pairs", pairs, "--json"],
                          capsys)
    assert code == 0, err
    (name, card), = json.loads(out)["cards"].items()
    assert name == "judge0"
    assert set(card) >= {"source", "judge_col", "human_col", "scale", "items", "aspects",
                         "verdicts"}
    assert list(card["aspects"]) == ["ranking", "scoring", "accept", "mean", "reruns",
                                     "position", "length"]
    assert list(card["verdicts"]) == list(card["aspects"])
    assert card["items"] == {"n_read": 200, "n_judged": 200, "n_labelled": 160,
                             "excluded": {}}

    code, out, err = _run(["judge", "mean", path, "--judge-col", "judge", "--human-col",
                           "gt_score", "--json"], capsys)
    assert code == 0, err
    mean = json.loads(out)["mean"]
    assert {k: card["aspects"]["mean"][k] for k in ("estimate", "low", "high", "lambda")} \
        == {k: mean["methods"]["ppi++"][k] for k in ("estimate", "low", "high", "lambda")}

    code, out, err = _run(["guarantee", path, "--suite", "agreement", "-p", "judge", "-g",
                           "gt_score", "--logprob-cols", "score_lp*", "--tolerance", "1",
                           "--target", "0.3", "--json"], capsys)
    assert code == 0, err
    certified = json.loads(out)["guarantee"]
    accept = card["aspects"]["accept"]
    assert (accept["threshold"], accept["bound"], accept["n_calibration"]) == (
        certified["threshold"], certified["bound"], certified["n_calibration"]) \
        and accept["n_calibration"] == 160

    code, out, err = _run(["judge", "reruns", path, "--score-cols", "rerun_*", "--bootstrap",
                           "100", "--json"], capsys)
    assert code == 0, err
    reruns = json.loads(out)["reruns"]
    for key in ("items_flipping", "flip_rate", "pairwise_disagreement", "alpha"):
        assert card["aspects"]["reruns"][key] == reruns[key]
    code, out, err = _run(["judge", "position", pairs, "--bootstrap", "100", "--json"], capsys)
    assert code == 0, err
    position = json.loads(out)["position"]
    assert card["aspects"]["position"]["first_slot"] == position["first_slot"]
    assert card["verdicts"]["length"].startswith("not measured: ")


def test_several_judges_side_by_side_in_80_columns(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    paths = [_file(tmp_path, seed=s) for s in (0, 1, 2)]
    names = [f"--name=j{s}={p}" for s, p in enumerate(paths)]
    code, out, err = _run(["judge", "card", *paths, *names, *COLS], capsys)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "Judge trust cards"
    header = next(line for line in lines if line.lstrip().startswith("aspect"))
    assert header.split() == ["aspect", "j0", "j1", "j2"]
    assert max(len(line) for line in lines) <= 80
    for word in ("ranking", "per-item scores", "accept/abstain", "the mean",
                 "rerun stability", "position bias", "length bias", "j0: 200 of 200 rows",
                 "  ranking: orders items as the humans do"):
        assert word in out, out
    # the same reason for every judge is said once
    assert out.count("rerun stability: not measured: give the judge's reruns") == 1


def test_errors_are_one_line(tmp_path, capsys):
    path = _file(tmp_path)
    for argv, message in [
        (["--judge-col", "nope", "--human-col", "gt_score"], "nope"),
        (["--judge-col", "judge", "--human-col", "gt_score", "--interval-method", "lac"],
         "--interval-method 'lac': one of"),
        (["--judge-col", "judge", "--human-col", "gt_score", "--labels", "1"],
         "--labels must be at least 2"),
        (["--judge-col", "judge", "--human-col", "gt_score", "--target", "1"],
         "--target must be in (0, 1)"),
        (["--judge-col", "judge", "--human-col", "gt_score", "--pairs", path],
         "no column 'verdict_ab'"),
    ]:
        code, _, err = _run(["judge", "card", path, *argv, "--bootstrap", "0",
                             "--interval-seeds", "1"], capsys)
        assert code == 2 and message in err and err.count("\n") == 1, err


def test_the_run_folder_holds_its_schemas_and_is_repeated(tmp_path, capsys, monkeypatch):
    pytest.importorskip("jsonschema", reason="jsonschema is not installed (pip install "
                        "'.[dev]')")
    monkeypatch.chdir(tmp_path)
    _file(tmp_path, name="a.csv")
    _file(tmp_path, seed=1, name="b.csv")
    code, out, err = _run(["judge", "card", "a.csv", "b.csv", *COLS, "--reruns", "a.csv",
                           "--reruns", "b.csv", "--rerun-score-cols", "rerun_*", "--labels",
                           "50", "--out", "run", "--json"], capsys)
    assert code == 0, err
    assert assert_holds_schemas(tmp_path / "run") == {"judge_card"}
    config = json.loads((tmp_path / "run" / "run.json").read_text())["config"]
    assert config["command"] == "judge card"
    assert [e["name"] for e in config["inputs"]] == ["a", "b"]
    assert set(config["option_files"]) == {"a.csv", "b.csv"}
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics["sections"][0]["results"] == json.loads(out)["cards"]
    page = (tmp_path / "run" / "report.html").read_text()
    assert "Judge trust card" in page and "rerun stability" in page
    code, out, err = _run(["rerun", "run"], capsys)
    assert code == 0 and "metrics identical" in out, err
    pd.read_csv("b.csv").iloc[5:].to_csv("b.csv", index=False)
    code, out, err = _run(["rerun", "run"], capsys)
    assert code == 2 and "b.csv: changed since the run" in err, err
