"""Diagnosis scoring: the paper's ETC row and EPD drop from their counts, hand cases for every
metric, scikit-learn/scipy parity, and baselines."""

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score, f1_score

from confeval.metrics import proportion_ci
from confeval.suites.diagnose import epd_drop, score_diagnosis

DOMAINS = {"ML": 333, "PE": 459, "CM": 159, "BH": 357, "EE": 393, "DA": 296}
# Gemini-3-Pro-Preview's ETC row: ML 66.37, PE 66.88, CM 69.81, BH 64.43, EE 65.39, DA 69.26
GEMINI = {"ML": 221, "PE": 307, "CM": 111, "BH": 230, "EE": 257, "DA": 205}
PAPER_ROW = {"ML": 66.37, "PE": 66.88, "CM": 69.81, "BH": 64.43, "EE": 65.39, "DA": 69.26}
SHARES = {"kde": 880, "re": 500, "vpe": 400, "qce": 217}  # KDE 44.07% of 1,997 (paper)


def _paper_records(correct_by_domain):
    """1,997 items with the paper's domain sizes and class shares; the model right on the
    given number of items per domain (a wrong answer is another type)."""
    gold = np.repeat(list(SHARES), list(SHARES.values()))
    rng = np.random.default_rng(0)
    gold = gold[rng.permutation(gold.size)].astype(object)
    domains = np.repeat(list(DOMAINS), list(DOMAINS.values()))
    pred = gold.copy()
    other = {"kde": "re", "re": "kde", "vpe": "qce", "qce": "vpe"}
    for d, k in correct_by_domain.items():
        idx = np.flatnonzero(domains == d)[k:]
        pred[idx] = [other[g] for g in gold[idx]]
    return gold, pred, domains


def test_the_papers_etc_row_from_its_counts():
    gold, pred, domains = _paper_records(GEMINI)
    res = score_diagnosis(gold, pred, domains=domains, n_simulations=0)
    assert res["n"] == 1997 and res["correct"] == 1331
    assert round(100 * res["accuracy_strict"], 2) == 66.65
    for d, value in PAPER_ROW.items():
        cell = res["by_domain"][d]
        assert cell["n"] == DOMAINS[d] and round(100 * cell["accuracy"], 2) == value
        ci = stats.binomtest(cell["correct"], cell["n"]).proportion_ci(method="wilson")
        assert cell["ci"] == {"low": pytest.approx(ci.low), "high": pytest.approx(ci.high)}
    # the Total is micro accuracy, not the mean of the domains (67.02)
    assert round(100 * res["macro_domain_accuracy"], 2) == 67.02
    # majority class on the paper's class shares: always KDE = 44.07%
    assert res["baselines"]["majority"]["type"] == "kde"
    assert round(100 * res["baselines"]["majority"]["accuracy"], 2) == 44.07


def test_the_papers_epd_drop_from_its_counts():
    gold, etc_pred, _ = _paper_records(GEMINI)
    epd_pred = etc_pred.copy()
    right = np.flatnonzero(etc_pred == gold)
    epd_pred[right[:60]] = "no_error"                  # missed detections
    epd_pred[right[60:105]] = [{"kde": "re"}.get(g, "kde") for g in gold[right[60:105]]]
    ids = [f"i{k}" for k in range(gold.size)]
    d = epd_drop(ids, gold, etc_pred, ids, gold, epd_pred, bootstrap=200, seed=1)
    assert round(100 * d["epd_accuracy"], 2) == 61.39 and d["n_paired"] == 1997
    assert round(100 * d["drop"], 2) == -5.26
    assert d["split"] == {"missed_detection": 60, "type_changed": 45, "unparseable": 0,
                          "gained": 0}
    assert d["ci"]["high"] < 0 and d["p_value"] < 0.01
    assert d["detection_rate"] == pytest.approx(1 - 60 / 1997)


def test_metrics_against_sklearn_and_hand_counts():
    rng = np.random.default_rng(3)
    types = ["vpe", "re", "qce", "kde"]
    gold = rng.choice(types, 300)
    pred = np.where(rng.random(300) < 0.6, gold, rng.choice(types, 300)).astype(object)
    pred[:20] = None  # unparseable: wrong under strict accuracy, left out of parsed accuracy
    res = score_diagnosis(gold, pred, n_simulations=0)
    labels = np.where([p is None for p in pred], "unparseable", pred).astype(str)
    assert res["accuracy_strict"] == pytest.approx(np.mean(labels == gold))
    assert res["accuracy_parsed"] == pytest.approx(np.mean(labels[20:] == gold[20:]))
    assert res["parse_rate"] == pytest.approx(280 / 300)
    assert res["kappa"] == pytest.approx(cohen_kappa_score(gold, labels))
    per_type = f1_score(gold, labels, labels=types, average=None)
    assert [res["by_type"][t]["f1"] for t in types] == pytest.approx(per_type)
    assert res["macro_f1"] == pytest.approx(per_type.mean())
    assert res["by_type"]["re"]["recall"] == pytest.approx(
        np.mean(labels[gold == "re"] == "re"))
    assert sum(res["confusion"]["kde"].values()) == int((gold == "kde").sum())
    assert res["confusion"]["kde"]["unparseable"] == int((labels[gold == "kde"] ==
                                                          "unparseable").sum())


@pytest.mark.parametrize(("protocol", "expected"), [("etc", 0.25), ("epd5", 0.2),
                                                    ("epd", 0.125)])
def test_random_baseline_simulation_is_within_its_interval_of_1_over_k(protocol, expected):
    gold = np.array(["re", "kde", "vpe", "qce"] * 250, dtype=object)
    res = score_diagnosis(gold, gold, protocol=protocol, n_simulations=2000, seed=7)
    rnd = res["baselines"]["random"]
    assert rnd["expected"] == pytest.approx(expected)
    assert rnd["ci"]["low"] < expected < rnd["ci"]["high"]
    assert rnd["mean"] == pytest.approx(expected, abs=0.005)
    again = score_diagnosis(gold, gold, protocol=protocol, n_simulations=2000, seed=7)
    assert again["baselines"]["random"] == rnd


def test_two_stage_random_level_on_error_free_chains_is_one_half():
    gold = np.array(["no_error"] * 10 + ["re"] * 30, dtype=object)
    res = score_diagnosis(gold, gold, protocol="epd", n_simulations=0)
    assert res["baselines"]["random"]["expected"] == pytest.approx((10 * 0.5 + 30 / 8) / 40)


def test_presence_rates_on_error_free_chains():
    gold = ["no_error"] * 4 + ["re"] * 4
    pred = ["no_error", "re", "no_error", "no_error", "re", "kde", "no_error", None]
    ids = list("abcdefgh")
    d = epd_drop(ids, gold, ["re"] * 8, ids, gold, pred, bootstrap=0)
    assert d["false_positive_rate"] == 0.25
    assert d["detection_rate"] == pytest.approx(2 / 3)  # parsed erroneous chains only
    assert d["type_accuracy_given_detection"] == 0.5
    assert d["balanced_accuracy"] == pytest.approx((2 / 3 + 0.75) / 2)
    assert d["split"]["unparseable"] == 1


def test_bad_inputs_are_clear_errors():
    with pytest.raises(ValueError, match="error-free chains need an EPD protocol"):
        score_diagnosis(["no_error"], ["re"], protocol="etc")
    with pytest.raises(ValueError, match="protocol"):
        score_diagnosis(["re"], ["re"], protocol="x")
    with pytest.raises(ValueError, match="share no item"):
        epd_drop(["a"], ["re"], ["re"], ["b"], ["re"], ["re"])
    assert proportion_ci(0, 0) is None
