"""Scoring judge record files with conformal intervals: exclusions, floors, joins, groups,
Mondrian, per-group runs, fused judges, seed sweeps, calibration share (library calls; the
command line is in tests/cli/test_intervals.py)."""

import numpy as np
import pandas as pd
import pytest

from confeval.simulate import simulate
from confeval.suites.intervals import IntervalsOptions, score_intervals_file


def test_a_file_with_exclusions_and_floors(tmp_path):
    df = simulate("scores", 600, "compressing", seed=2)
    df.loc[0, "score_lp3"] = np.nan       # a rating token missing from the top-k -> floor
    df.loc[1, "gt_score"] = 9              # not a rating -> excluded
    path = tmp_path / "judge.csv"
    df.to_csv(path, index=False)
    res = score_intervals_file(path, IntervalsOptions(methods="naive,cqr,lac", seeds="1-3",
                                                      base="hgb", logprob_cols="score_lp*",
                                                      pred_col="parsed_score"))
    assert res["excluded"] == {"unknown_gt_score": 1} and res["floored_values"] == 1
    assert set(res["methods"]) == {"naive", "cqr", "lac"}
    assert set(res["methods"]["naive"]) == {"coverage_raw", "width_raw", "coverage_adj",
                                            "width_adj", "levels", "diagnostics"}
    assert set(res["methods"]["lac"]) == {"coverage", "set_size", "levels"}
    assert res["methods"]["naive"]["coverage_raw"]["mean"] > 0.8
    assert res["point"]["n_parsed"] == 599
    assert set(res["point"]) >= {"pearson", "spearman", "kendall", "accuracy", "within1",
                                 "mae", "bias"}


def test_config_validates_itself():
    with pytest.raises(ValueError, match=r"unknown method\(s\) \['r2d2'\]"):
        IntervalsOptions(methods="naive,r2d2")
    with pytest.raises(ValueError, match="--seeds '10-1'"):
        IntervalsOptions(seeds="10-1")
    with pytest.raises(ValueError, match="--base must be one of"):
        IntervalsOptions(base="xgb")
    assert IntervalsOptions(seeds="1-3,7").seeds == (1, 2, 3, 7)


def test_join_group_map_and_mondrian(tmp_path):
    df = simulate("scores", 800, "calibrated", seed=5)
    df["sample_id"] = np.arange(800)
    path = tmp_path / "judge.csv"
    df.drop(columns=["parsed_score"]).to_csv(path, index=False)
    side = tmp_path / "tasks.csv"
    tasks = np.where(np.arange(800) % 2 == 0, "coco", "ChartQA")
    pd.DataFrame({"sample_id": np.arange(800), "orig_dataset": tasks}).to_csv(side, index=False)
    config = IntervalsOptions(methods="naive,lac", base="linear", seeds="1-2", mondrian=True,
                              logprob_cols="score_lp*", join=(f"{side}:sample_id",),
                              group_col="orig_dataset", group_map="paper-difficulty")
    res = score_intervals_file(path, config)
    assert res["mondrian"] is True
    assert set(res["methods"]["naive"]["groups"]) == {"easy", "medium"}
    assert set(res["methods"]["lac"]["groups"]["easy"]) == {"coverage", "set_size"}
    with pytest.raises(ValueError, match="--mondrian needs --group-col"):
        IntervalsOptions(mondrian=True)


def test_levels_and_rsg(tmp_path):
    df = simulate("scores", 900, "compressing", seed=8)
    df["task"] = np.where(np.arange(900) % 3 == 0, "charts", "photos")
    path = tmp_path / "judge.csv"
    df.to_csv(path, index=False)
    res = score_intervals_file(path, IntervalsOptions(methods="naive,lac", base="linear",
                                                      seeds="1-2", logprob_cols="score_lp*",
                                                      pred_col="parsed_score",
                                                      group_col="task"))
    levels = res["methods"]["naive"]["levels"]
    assert set(levels) <= {"1", "2", "3", "4", "5"} and "coverage_adj" in levels["3"]
    rsg = res["rsg"]["naive"]["charts"]
    assert rsg["rsg"] == pytest.approx(rsg["pearson"] - (1 - rsg["width_raw"] / 4))
    assert res["point_by_group"]["photos"]["n_parsed"] == 600


def test_paper_protocol_separately_and_fused_judges(tmp_path):
    df = simulate("scores", 600, "compressing", seed=9)
    df["sample_id"] = np.arange(600)
    df["task"] = np.where(np.arange(600) % 2 == 0, "charts", "photos")
    path = tmp_path / "judge.csv"
    df.to_csv(path, index=False)
    other = simulate("scores", 600, "calibrated", seed=10)
    other["sample_id"] = np.arange(600)
    side = tmp_path / "judge2.csv"
    other.to_csv(side, index=False)
    config = IntervalsOptions(methods="boosted_lcp,lac", seeds="1-2", separately=True,
                              paper_protocol=True, logprob_cols="score_lp*,j2_score_lp*",
                              join=(f"{side}:sample_id:j2_",), pred_col="parsed_score",
                              group_col="task")
    res = score_intervals_file(path, config)
    assert res["n_judges"] == 2
    assert set(res["separately"]) == {"charts", "photos"}
    part = res["separately"]["charts"]["methods"]["boosted_lcp"]
    assert 0 < part["coverage_raw"]["mean"] <= 1
    pooled = res["separately_pooled"]["boosted_lcp"]["width_raw"]
    parts = res["separately"]
    assert pooled == pytest.approx(sum(parts[g]["methods"]["boosted_lcp"]["width_raw"]["mean"]
                                       * parts[g]["n"] for g in parts) / 600)
    point = res["point"]
    assert 0 <= point["overconfident_999"] <= point["overconfident_99"] <= 1
    diag = res["methods"]["boosted_lcp"]["diagnostics"]
    assert set(diag) == {"informativeness_adj", "midpoint", "error_bins"}
    shares = [b["share"]["mean"] for b in diag["informativeness_adj"].values()
              if b.get("share")]
    assert sum(shares) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="same number of rating columns"):
        score_intervals_file(path, IntervalsOptions(methods="lac",
                                                    logprob_cols="score_lp*,sample_id"))


def test_seed_sweep_and_calibration_share(tmp_path):
    path = tmp_path / "judge.csv"
    simulate("scores", 500, "compressing", seed=12).to_csv(path, index=False)
    res = score_intervals_file(path, IntervalsOptions(methods="naive,lac", base="linear",
                                                      seeds="1-4", seed_sweep="2,4",
                                                      cal_fraction=0.3,
                                                      logprob_cols="score_lp*"))
    assert res["cal_fraction"] == 0.3
    assert set(res["seed_sweep"]) == {"2", "4"}
    assert res["seed_sweep"]["4"]["naive"]["width_raw"] == res["methods"]["naive"]["width_raw"]
    assert res["seed_sweep"]["2"]["lac"]["coverage"]["std"] >= 0
    # 30% of 500 rows calibrate: the test halves hold 350 items, so coverage steps of 1/350
    cov = res["seed_sweep"]["2"]["naive"]["coverage_raw"]["mean"] * 350
    assert cov == pytest.approx(round(cov), abs=1e-6) or (cov * 2) == pytest.approx(
        round(cov * 2), abs=1e-6)
    with pytest.raises(ValueError, match="seed_sweep values must be between 1 and the 2"):
        score_intervals_file(path, IntervalsOptions(methods="lac", seeds="1-2",
                                                    seed_sweep="5", logprob_cols="score_lp*"))


@pytest.mark.parametrize("method", ["chr", "r2ccp"])
def test_neural_seeds_train_side_by_side_to_the_same_bits(method):
    """CHR's and R2CCP's seeds are split between the workers and each part trains as one
    batched program: the intervals equal those of each seed trained alone, bit for bit."""
    import numpy as np

    from confeval.suites.intervals.scoring import _plan, score_intervals

    assert sorted(_plan([method, "naive"], [1, 2, 3], 2)[:2]) == [([method], [1]),
                                                                   ([method], [2, 3])]
    rng = np.random.default_rng(0)
    truth = rng.integers(1, 6, size=400).astype(float)
    features = np.log(np.clip(rng.dirichlet(np.ones(5), size=400) + np.eye(5)[
        (truth - 1).astype(int)] * 0.5, 1e-6, None))
    options = {method: {"epochs": 3}}
    together = score_intervals(features, truth, methods=[method], seeds=[1, 2, 3], n_jobs=1,
                               method_options=options)
    alone = [score_intervals(features, truth, methods=[method], seeds=[s], n_jobs=1,
                             method_options=options) for s in (1, 2, 3)]
    for metric in ("coverage_raw", "width_raw", "width_adj"):
        assert together["methods"][method][metric]["mean"] == np.mean(
            [one["methods"][method][metric]["mean"] for one in alone])


def test_a_thread_pool_gives_the_process_pools_numbers():
    """Jobs run by joblib's threading backend each keep their own cache of shared base models
    (a context variable): the first job to finish used to reset a module-wide cache under the
    others, whose next fit then failed. The numbers equal those of the process pool."""
    import json

    import joblib
    import numpy as np

    from confeval.suites.intervals.scoring import score_intervals

    rng = np.random.default_rng(1)
    truth = rng.integers(1, 6, size=300).astype(float)
    features = np.log(np.clip(rng.dirichlet(np.ones(5), size=300) + np.eye(5)[
        (truth - 1).astype(int)] * 0.5, 1e-6, None))
    kwargs = {"methods": ["naive", "lvd", "cqr", "asym_cqr"], "seeds": range(1, 7), "n_jobs": 2}
    processes = score_intervals(features, truth, **kwargs)
    with joblib.parallel_config(backend="threading"):
        threads = score_intervals(features, truth, **kwargs)
    assert json.dumps(threads, sort_keys=True) == json.dumps(processes, sort_keys=True)
