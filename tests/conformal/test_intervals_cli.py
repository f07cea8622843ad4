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
                                            "width_adj", "levels", "diagnostics"}
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


def test_paper_protocol_separately_and_fused_judges(tmp_path, capsys):
    df = simulate("scores", 600, "compressing", seed=9)
    df["sample_id"] = np.arange(600)
    df["task"] = np.where(np.arange(600) % 2 == 0, "charts", "photos")
    path = tmp_path / "judge.csv"
    df.to_csv(path, index=False)
    other = simulate("scores", 600, "calibrated", seed=10)
    other["sample_id"] = np.arange(600)
    side = tmp_path / "judge2.csv"
    other.to_csv(side, index=False)
    code = main(["intervals", "score", str(path), "--logprob-cols", "score_lp*,j2_score_lp*",
                 "--join", f"{side}:sample_id:j2_", "--pred-col", "parsed_score",
                 "--group-col", "task", "--separately", "--paper-protocol",
                 "--methods", "boosted_lcp,lac", "--seeds", "1-2", "--json",
                 "--out", str(tmp_path / "run")])
    assert code == 0
    res = json.loads(capsys.readouterr().out)["results"][str(path)]
    assert res["n_judges"] == 2
    assert set(res["separately"]) == {"charts", "photos"}
    part = res["separately"]["charts"]["methods"]["boosted_lcp"]
    assert 0 < part["coverage_raw"]["mean"] <= 1
    point = res["point"]
    assert 0 <= point["overconfident_999"] <= point["overconfident_99"] <= 1
    diag = res["methods"]["boosted_lcp"]["diagnostics"]
    assert set(diag) == {"informativeness_adj", "midpoint", "error_bins"}
    shares = [b["share"]["mean"] for b in diag["informativeness_adj"].values()
              if b.get("share")]
    assert sum(shares) == pytest.approx(1.0)
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["config"]["paper_protocol"] is True and run["config"]["separately"] is True
    # uneven judges are refused in one line
    assert main(["intervals", "score", str(path), "--logprob-cols", "score_lp*,sample_id",
                 "--methods", "lac"]) == 2
    assert "same number of rating columns" in capsys.readouterr().err


def test_seed_sweep_and_calibration_share(tmp_path, capsys):
    path = tmp_path / "judge.csv"
    simulate("scores", 500, "compressing", seed=12).to_csv(path, index=False)
    code = main(["intervals", "score", str(path), "--logprob-cols", "score_lp*",
                 "--methods", "naive,lac", "--base", "linear", "--seeds", "1-4",
                 "--seed-sweep", "2,4", "--cal-fraction", "0.3", "--json"])
    assert code == 0
    res = json.loads(capsys.readouterr().out)["results"][str(path)]
    assert res["cal_fraction"] == 0.3
    assert set(res["seed_sweep"]) == {"2", "4"}
    assert res["seed_sweep"]["4"]["naive"]["width_raw"] == res["methods"]["naive"]["width_raw"]
    assert res["seed_sweep"]["2"]["lac"]["coverage"]["std"] >= 0
    # 30% of 500 rows calibrate: the test halves hold 350 items, so coverage steps of 1/350
    cov = res["seed_sweep"]["2"]["naive"]["coverage_raw"]["mean"] * 350
    assert cov == pytest.approx(round(cov), abs=1e-6) or (cov * 2) == pytest.approx(
        round(cov * 2), abs=1e-6)
    assert main(["intervals", "score", str(path), "--logprob-cols", "score_lp*",
                 "--methods", "lac", "--seeds", "1-2", "--seed-sweep", "5"]) == 2
    assert "seed_sweep values must be between 1 and the 2 seeds" in capsys.readouterr().err
