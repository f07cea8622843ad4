"""Scoring user-brought confidence measures on (question, option) rows."""

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from confeval import metrics as M
from confeval.records import RecordSet
from confeval.suites.measures import MeasuresOptions, read_measure_records, score_measures


def _options(n_questions=120, k=5, seed=0):
    rng = np.random.default_rng(seed)
    q = np.repeat(np.arange(n_questions), k)
    gold = (np.arange(q.size) % k == rng.integers(0, k, q.size).clip(0, 0)).astype(float)
    good = gold * 1.0 + rng.normal(0, 0.7, q.size)
    likert = np.round(np.clip(good, -1, 2) * 2) / 2          # ties on purpose
    noise = rng.normal(0, 1, q.size)
    return q, gold, np.c_[good, likert, noise], ["good", "likert", "noise"]


def test_metrics_are_the_pooled_metrics_and_the_ranking_is_by_auroc():
    q, y, values, names = _options()
    res = score_measures(values, names, y, q, MeasuresOptions(bootstrap=200, seed=3))
    assert res["n_rows"] == 600 and res["n_questions"] == 120
    assert res["base_rate"] == pytest.approx(0.2)
    for j, name in enumerate(names):
        m = res["measures"][name]
        assert m["auroc"] == pytest.approx(roc_auc_score(y, values[:, j]), abs=1e-12)
        assert m["auarc"] == pytest.approx(M.auarc(values[:, j], y), abs=1e-12)
        assert m["rce"] == pytest.approx(M.rank_calibration_error(values[:, j], y), abs=1e-12)
        assert m["ci"]["auroc"]["low"] <= m["auroc"] <= m["ci"]["auroc"]["high"]
    assert [r["measure"] for r in res["ranking"]] == ["good", "likert", "noise"]
    assert res["ranking"][1]["vs_next"]["p_value"] < 0.01   # likert vs noise: clearly apart
    assert "vs_next" not in res["ranking"][-1]


def test_ece_is_measured_after_binning_fitted_on_other_questions():
    q, y, values, names = _options(seed=1)
    config = MeasuresOptions(bootstrap=0, seed=7, hb_bins=5)
    res = score_measures(values, names, y, q, config)
    # transcription: the same seeded split of questions, binning fitted on one half
    rng = np.random.default_rng(7)
    cal = np.isin(q, rng.choice(np.unique(q), size=60, replace=False))
    hb = M.HistogramBinning(n_bins=5).fit(values[cal, 0], y[cal])
    expected = M.expected_calibration_error(hb.transform(values[~cal, 0]), y[~cal], n_bins=15)
    assert res["measures"]["good"]["ece"] == pytest.approx(expected, abs=1e-12)
    # in-sample binning would be (nearly) 0: the held-out ECE is not
    assert res["measures"]["good"]["ece"] > 0
    assert res["measures"]["good"]["ece_levels"] == np.unique(hb.transform(values[~cal, 0])).size
    # a measure that barely varies lands in one bin: an ECE near 0 marked as one value
    flat = np.c_[values[:, :1], 0.5 + 1e-12 * np.arange(len(y))]
    res = score_measures(flat, ["good", "flat"], y, q, config)
    assert res["measures"]["flat"]["ece_levels"] == 1
    assert res["measures"]["flat"]["ece"] < 0.1


def test_inputs_negate_uncertainties_and_count_exclusions():
    frame = pd.DataFrame({"question_id": ["a", "a", "b", "b", None, "c"],
                          "sl": [-1.0, -3.0, -0.5, "x", -1.0, -2.0],
                          "ppl": [1.5, 4.0, 1.2, 3.0, 2.0, np.inf],
                          "correct": [1, 0, 1, 0, 0, 1]})
    rs = RecordSet.from_frame(frame)
    data = read_measure_records(rs, measure_cols="sl", uncertainty_cols="ppl")
    assert data.names == ["sl", "ppl"] and data.negated == ["ppl"]
    # an infinite perplexity is the least confident row, kept (1 below the finite minimum)
    assert data.values[:, 1].tolist() == [-1.5, -4.0, -1.2, -5.0]
    assert data.infinite == {"ppl": 1}
    assert rs.excluded == {"non_numeric_measure": 1, "missing_question": 1}
    # no columns named: every known measure column the rows have, by its display name
    auto = read_measure_records(RecordSet.from_frame(frame), measure_cols=None)
    assert auto.names == ["SL"] and auto.negated == []
    with pytest.raises(ValueError, match="no measure column"):
        read_measure_records(RecordSet.from_frame(frame.drop(columns=["sl"])),
                             measure_cols=None)
    with pytest.raises(ValueError, match="both classes"):
        score_measures(np.zeros((3, 1)), ["x"], np.ones(3), np.arange(3))
    with pytest.raises(ValueError, match="calibration-share"):
        MeasuresOptions(calibration_share=1.0)


def test_input_order_ties_follow_the_rows_for_auarc_only():
    q = np.repeat(np.arange(40), 2)
    y = np.tile([1.0, 0.0], 40)
    tied = np.zeros(80)                      # a measure that cannot tell anything apart
    avg = score_measures(tied[:, None], ["flat"], y, q, MeasuresOptions(bootstrap=0))
    order = score_measures(tied[:, None], ["flat"], y, q,
                           MeasuresOptions(bootstrap=0, ties="input-order"))
    assert avg["measures"]["flat"]["auarc"] == pytest.approx(0.5)
    assert order["measures"]["flat"]["auarc"] == pytest.approx(
        M.auarc(tied, y, ties="input-order"))
    assert order["measures"]["flat"]["auarc"] > 0.5   # the gold row comes first in each pair
    assert avg["measures"]["flat"]["auroc"] == order["measures"]["flat"]["auroc"] == 0.5
    with pytest.raises(ValueError, match="--ties"):
        MeasuresOptions(ties="random")


def test_curves_roc_equals_sklearn_and_rank_diagram_on_a_hand_case():
    from sklearn.metrics import roc_curve

    from confeval.metrics import rank_calibration_diagram

    conf = np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6])
    correct = np.array([0.0, 1.0, 0.0, 0.0, 1.0, 1.0])
    d = rank_calibration_diagram(conf, correct, n_bins=3)
    # bins {0.1, 0.2}, {0.3, 0.4}, {0.5, 0.6}: mean correctness 0.5, 0, 1 -> ranks 2, 1, 3
    assert d["mean_correctness"] == [0.5, 0.0, 1.0]
    assert d["confidence_rank"] == pytest.approx([1 / 6, 3 / 6, 5 / 6])
    assert d["correctness_rank"] == pytest.approx([1.5 / 3, 0.5 / 3, 2.5 / 3])
    q = np.repeat(np.arange(3), 2)
    res = score_measures(conf[:, None], ["m"], correct, q, MeasuresOptions(bootstrap=0))
    fpr, tpr, _ = roc_curve(correct, conf)
    assert res["curves"]["m"]["roc"] == {"fpr": fpr.tolist(), "tpr": tpr.tolist()}
    # the JSON contract
    assert set(res["measures"]["m"]) == {"auroc", "auarc", "rce", "ece", "ece_levels"}
