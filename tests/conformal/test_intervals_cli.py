import json

import numpy as np
import pandas as pd
import pytest

from confeval.cli import main
from confeval.simulate import simulate


def test_intervals_score_json(tmp_path, capsys):
    df = simulate("scores", 600, "compressing", seed=2)
    df.loc[0, "score_lp3"] = np.nan       # a rating token missing from the top-k -> floor
    df.loc[1, "gt_score"] = 9              # not a rating -> excluded
    path = tmp_path / "judge.csv"
    df.to_csv(path, index=False)
    code = main(["intervals", "score", str(path), "--logprob-cols", "score_lp*",
                 "--pred-col", "parsed_score", "--seeds", "1-3", "--base", "hgb",
                 "--methods", "naive,cqr,lac", "--json"])
    assert code == 0
    res = json.loads(capsys.readouterr().out)["results"][str(path)]
    assert res["excluded"] == {"unknown_gt_score": 1} and res["floored_values"] == 1
    assert set(res["methods"]) == {"naive", "cqr", "lac"}
    assert set(res["methods"]["naive"]) == {"coverage_raw", "width_raw", "coverage_adj",
                                            "width_adj", "levels"}
    assert set(res["methods"]["lac"]) == {"coverage", "set_size", "levels"}
    assert res["methods"]["naive"]["coverage_raw"]["mean"] > 0.8
    assert res["point"]["n_parsed"] == 599
    assert set(res["point"]) >= {"pearson", "spearman", "kendall", "accuracy", "within1",
                                 "mae", "bias"}


def test_unknown_method_is_a_clear_error(tmp_path, capsys):
    path = tmp_path / "j.csv"
    simulate("scores", 50, seed=1).to_csv(path, index=False)
    assert main(["intervals", "score", str(path), "--logprob-cols", "score_lp*",
                 "--methods", "naive,r2d2"]) == 2
    assert "unknown method(s) ['r2d2']" in capsys.readouterr().err


def test_join_group_map_and_mondrian(tmp_path, capsys):
    df = simulate("scores", 800, "calibrated", seed=5)
    df["sample_id"] = np.arange(800)
    path = tmp_path / "judge.csv"
    df.drop(columns=["parsed_score"]).to_csv(path, index=False)
    side = tmp_path / "tasks.csv"
    tasks = np.where(np.arange(800) % 2 == 0, "coco", "ChartQA")
    pd.DataFrame({"sample_id": np.arange(800), "orig_dataset": tasks}).to_csv(side, index=False)
    code = main(["intervals", "score", str(path), "--logprob-cols", "score_lp*",
                 "--join", f"{side}:sample_id", "--group-col", "orig_dataset",
                 "--group-map", "paper-difficulty", "--mondrian", "--methods", "naive,lac",
                 "--base", "linear", "--seeds", "1-2", "--json"])
    assert code == 0
    res = json.loads(capsys.readouterr().out)["results"][str(path)]
    assert res["mondrian"] is True
    assert set(res["methods"]["naive"]["groups"]) == {"easy", "medium"}
    assert set(res["methods"]["lac"]["groups"]["easy"]) == {"coverage", "set_size"}
    assert main(["intervals", "score", str(path), "--logprob-cols", "score_lp*",
                 "--mondrian"]) == 2
    assert "--mondrian needs --group-col" in capsys.readouterr().err


def test_levels_rsg_and_report_section(tmp_path, capsys):
    df = simulate("scores", 900, "compressing", seed=8)
    df["task"] = np.where(np.arange(900) % 3 == 0, "charts", "photos")
    path = tmp_path / "judge.csv"
    df.to_csv(path, index=False)
    code = main(["intervals", "score", str(path), "--logprob-cols", "score_lp*",
                 "--pred-col", "parsed_score", "--group-col", "task", "--methods",
                 "naive,lac", "--base", "linear", "--seeds", "1-2", "--json",
                 "--out", str(tmp_path / "run")])
    assert code == 0
    res = json.loads(capsys.readouterr().out)["results"][str(path)]
    levels = res["methods"]["naive"]["levels"]
    assert set(levels) <= {"1", "2", "3", "4", "5"} and "coverage_adj" in levels["3"]
    rsg = res["rsg"]["naive"]["charts"]
    assert rsg["rsg"] == pytest.approx(rsg["pearson"] - (1 - rsg["width_raw"] / 4))
    assert res["point_by_group"]["photos"]["n_parsed"] == 600
    html = (tmp_path / "run" / "report.html").read_text()
    assert "Ranking-scoring gap by group" in html and "Coverage (adjusted) by ground-truth" in html
