"""`confeval intervals ...`: exit codes, one-line errors, JSON shape, run folder (the metrics
themselves are tested in tests/suites/intervals/)."""

import json

import numpy as np

from confeval.cli import main
from confeval.simulate import simulate


def test_score_json_shape_report_and_run_json(tmp_path, capsys):
    df = simulate("scores", 400, "compressing", seed=8)
    df["task"] = np.where(np.arange(400) % 3 == 0, "charts", "photos")
    path = tmp_path / "judge.csv"
    df.to_csv(path, index=False)
    code = main(["intervals", "score", str(path), "--logprob-cols", "score_lp*",
                 "--pred-col", "parsed_score", "--group-col", "task", "--methods",
                 "naive,lac", "--base", "linear", "--seeds", "1-2", "--json",
                 "--out", str(tmp_path / "run")])
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    res = doc["results"][str(path)]
    assert {"n_read", "n_used", "excluded", "floored_values", "n_judges", "methods", "point",
            "rsg", "seeds", "alpha"} <= set(res)
    html = (tmp_path / "run" / "report.html").read_text()
    assert "Ranking-scoring gap by group" in html and "Coverage (adjusted) by ground-truth" in html
    config = json.loads((tmp_path / "run" / "run.json").read_text())["config"]
    (given,) = config["inputs"]
    assert given["path"] == str(path) and len(given["sha256"]) == 64
    assert given["options"]["methods"] == ["naive", "lac"] and given["options"]["base"] == "linear"
    assert given["options"]["logprob_cols"] == "score_lp*" and given["options"]["seeds"] == [1, 2]


def test_errors_are_one_line_exit_2(tmp_path, capsys):
    path = tmp_path / "j.csv"
    simulate("scores", 50, seed=1).to_csv(path, index=False)
    for argv, message in (
            (["--methods", "naive,r2d2"], "unknown method(s) ['r2d2']"),
            (["--mondrian"], "--mondrian needs --group-col"),
            (["--seeds", "10-1"], "--seeds '10-1'"),
            (["--seeds", "a"], "--seeds 'a'"),
            (["--seeds", "1-100000"], "more than 1000 seeds"),
            (["--logprob-cols", "score_lp*,gt_score"], "same number of rating columns"),
            (["--group-col", "nope", "--methods", "lac"], "nope")):
        code = main(["intervals", "score", str(path), "--logprob-cols", "score_lp*", *argv])
        err = capsys.readouterr().err
        assert code == 2 and message in err and err.count("\n") == 1, (argv, err)
