"""The VLM-judge paper's tables reproduced through the intervals suite's scoring from
../shared/data/vlm-judge-uncertainty: point metrics exactly, conformal methods within one
published std (or +-0.01 coverage / +-0.05 width, whichever is larger). The Gemini and Phi-4
tables publish no std: there our own std over the same 10 seeds stands in for it (the
paper's trained networks draw other random numbers than ours, so a mean over 10 seeds can
differ by about its seed-to-seed spread; R2CCP's width on Gemini is 0.051 off with a std of
about 0.1 across seeds).

The slowest checks (CHR's published 500-epoch network; R2CCP on the Gemini and Phi-4 features;
multi-judge fusion; Mondrian) run with ``CONFEVAL_SLOW=1``; ``benchmarks/
reproduce_judge_tables.py`` prints the same comparisons.
"""

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from confeval.suites.intervals import (
    PAPER_PROTOCOL,
    IntervalsOptions,
    score_intervals,
    score_intervals_file,
)

ROOT = (Path(__file__).resolve().parents[2].parent / "shared" / "data"
        / "vlm-judge-uncertainty" / "results")
pytestmark = pytest.mark.skipif(not ROOT.is_dir(), reason=f"shared data not found at {ROOT}")
slow = pytest.mark.skipif(os.environ.get("CONFEVAL_SLOW") != "1",
                          reason="slow reproduction; set CONFEVAL_SLOW=1")

NAMES = {"NaiveSplitCP": "naive", "CQR": "cqr", "AsymCQR": "asym_cqr", "CHR": "chr",
         "LVD": "lvd", "BoostedCQR": "boosted_cqr", "BoostedLCP": "boosted_lcp",
         "R2CCP": "r2ccp"}
TABLES = {"v2": "all_methods_results.csv", "v2_gemini": "cp_methods_results.csv",
          "v2_phi4": "cp_methods_results.csv"}


def _features(folder):
    df = pd.read_csv(ROOT / folder / "features_s2.csv")
    return df[[f"s2_lp{k}" for k in range(1, 6)]].to_numpy(), df.gt_score.to_numpy(float)


def _assert_close(ours, published, std, floor, label):
    tol = max(std if std is not None and np.isfinite(std) else 0.0, floor)
    assert abs(ours - published) <= tol, f"{label}: ours {ours:.4f}, paper {published:.4f}"


# The paper's protocol with the defaults' lighter forests and fewer boosting rounds (100 trees
# and 200 rounds instead of 1,000 and 500): the same numbers within tolerance, 5x faster.
LIGHT = {**PAPER_PROTOCOL, "boosted_lcp": {"same_rows": True},
         "boosted_cqr": {"same_rows": True}}


def _check_methods(folder, methods, options=LIGHT):
    X, y = _features(folder)
    table = pd.read_csv(ROOT / folder / TABLES[folder]).set_index("method")
    rows = {NAMES[r]: r for r in table.index if r in NAMES}
    res = score_intervals(X, y, methods=methods, method_options=options)
    for name in methods:
        m, p = res["methods"][name], table.loc[rows[name]]
        _assert_close(m["coverage_raw"]["mean"], p.cov_raw,
                      p.get("cov_raw_std", m["coverage_raw"]["std"]), 0.01,
                      f"{folder} {name} coverage")
        _assert_close(m["width_raw"]["mean"], p.width_raw,
                      p.get("width_raw_std", m["width_raw"]["std"]), 0.05,
                      f"{folder} {name} width")


def test_llava_critic_boosted_lcp_with_the_papers_protocol():
    """(naive, CQR, asymmetric CQR, LVD and R2CCP: tests/conformal/test_regression.py.
    Boosted CQR's published row is not reproduced: see the closing notes of issue 5.)"""
    _check_methods("v2", ["boosted_lcp"])


@pytest.mark.parametrize("folder", ["v2_gemini", "v2_phi4"])
def test_gemini_and_phi4_tables(folder):
    _check_methods(folder, ["cqr", "boosted_lcp"])


@slow
@pytest.mark.parametrize("folder", ["v2", "v2_gemini"])
def test_chr_and_boosted_lcp_with_the_papers_full_protocol(folder):
    """(On Phi-4 our CHR covers .891 against .896 published, but its mean width is 3.24
    against 3.16: 0.08 over the +-0.05 tolerance; the benchmark prints it.)"""
    _check_methods(folder, ["chr", "boosted_lcp"], PAPER_PROTOCOL)


@slow
@pytest.mark.parametrize("folder", ["v2_gemini", "v2_phi4"])
def test_r2ccp_on_gemini_and_phi4(folder):
    _check_methods(folder, ["r2ccp"])


def test_table_3_point_metrics_per_task_exactly():
    """Per-task Pearson (r2ccp_per_dataset.csv) and exact / +-1 accuracy, MAE and bias
    (error_analysis_per_dataset.csv) to 4 decimals, with the task joined from
    error_analysis.csv; and Table 1's point row (point_prediction_comparison.csv)."""
    v2 = ROOT / "v2"
    res = score_intervals_file(v2 / "features_s2.csv", IntervalsOptions(
        methods="lac", seeds="1", pred_col="parsed_score",
        join=(f"{v2 / 'error_analysis.csv'}:sample_id",), group_col="orig_dataset"))
    widths = pd.read_csv(v2 / "r2ccp_per_dataset.csv").set_index("dataset")
    errors = pd.read_csv(v2 / "error_analysis_per_dataset.csv").set_index("dataset")
    assert len(widths) == 14
    for task in widths.index:
        ours = res["point_by_group"][task]
        assert ours["n_parsed"] == errors.loc[task, "n"]
        assert round(ours["pearson"], 4) == widths.loc[task, "pearson"]
        for key, column in (("accuracy", "exact_accuracy"), ("within1", "within_1_accuracy"),
                            ("mae", "mae"), ("bias", "judge_bias")):
            assert round(ours[key], 4) == pytest.approx(errors.loc[task, column], abs=1e-12)
    # Table 1 is over every item; with the task column, the one item error_analysis.csv does
    # not list is excluded (missing_group), so its row comes from a run without the join
    assert res["excluded"] == {"missing_group": 1}
    res = score_intervals_file(v2 / "features_s2.csv", IntervalsOptions(
        methods="lac", seeds="1", pred_col="parsed_score"))
    table_1 = pd.read_csv(ROOT / "v2_gemini" / "point_prediction_comparison.csv")
    row = table_1.set_index("judge").loc["LLaVA-Critic-7B"]
    for key, column in (("pearson", "pearson"), ("kendall", "kendall"), ("bias", "bias"),
                        ("max_softmax_mean", "max_softmax_mean"),
                        ("overconfident_99", "overconfident_99"),
                        ("overconfident_999", "overconfident_999")):
        assert round(res["point"][key], 4) == pytest.approx(row[column], abs=1e-12), key


@slow
def test_multijudge_fusion():
    """Two-judge fusion within tolerance. The three-judge row is not: our mean width is 3.28
    against 3.14 +- 0.09 published (coverage .909 vs .905 is); the benchmark prints it."""
    X = {f: _features(f)[0] for f in ("v2", "v2_gemini", "v2_phi4")}
    y = _features("v2")[1]
    fusion = pd.read_csv(ROOT / "v2_multijudge" / "multijudge_comparison.csv").set_index("config")
    for config, folders in (("LLaVA+Gemini (10 feat)", ["v2", "v2_gemini"]),
                            ("LLaVA+Phi4 (10 feat)", ["v2", "v2_phi4"])):
        m = score_intervals(np.hstack([X[f] for f in folders]), y,
                            methods=["r2ccp"])["methods"]["r2ccp"]
        p = fusion.loc[config]
        _assert_close(m["coverage_raw"]["mean"], p.cov_raw_mean, p.cov_raw_std, 0.01, config)
        _assert_close(m["width_raw"]["mean"], p.width_raw_mean, p.width_raw_std, 0.05, config)


def test_mondrian_table():
    """Within tolerance, overall and per difficulty group."""
    # The paper's "Mondrian" row is a model and a threshold per difficulty group (our
    # --separately, pooled by group size); its "Standard" row is the main R2CCP run, whose
    # std is published in all_methods_results.csv. (--mondrian, one model with per-group
    # thresholds, matches overall but not the easy/hard widths.)
    table = pd.read_csv(ROOT / "v2_mondrian" / "mondrian_comparison.csv").set_index("method")
    main_row = pd.read_csv(ROOT / "v2" / "all_methods_results.csv").set_index("method")
    v2 = ROOT / "v2"
    res = score_intervals_file(v2 / "features_s2.csv",
                               IntervalsOptions(
                                   methods="r2ccp", separately=True,
                                   join=(f"{v2 / 'error_analysis.csv'}:sample_id",),
                                   group_col="orig_dataset", group_map="paper-difficulty"))
    standard, mondrian = res["methods"]["r2ccp"], res["separately_pooled"]["r2ccp"]
    _assert_close(standard["coverage_adj"]["mean"], table.loc["Standard", "overall_coverage"],
                  main_row.loc["R2CCP", "cov_adj_std"], 0.01, "standard coverage")
    _assert_close(standard["width_adj"]["mean"], table.loc["Standard", "overall_width"],
                  main_row.loc["R2CCP", "width_adj_std"], 0.05, "standard width")
    _assert_close(mondrian["coverage_adj"], table.loc["Mondrian", "overall_coverage"], None,
                  0.01, "Mondrian coverage")
    _assert_close(mondrian["width_adj"], table.loc["Mondrian", "overall_width"], None, 0.05,
                  "Mondrian width")
    for group in ("easy", "medium", "hard"):
        part = res["separately"][group]["methods"]["r2ccp"]
        _assert_close(part["coverage_adj"]["mean"], table.loc["Mondrian", f"{group}_coverage"],
                      None, 0.01, f"{group} coverage")
        _assert_close(part["width_adj"]["mean"], table.loc["Mondrian", f"{group}_width"],
                      None, 0.05, f"{group} width")
