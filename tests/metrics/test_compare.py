"""The statistics of comparing models, each against an independent reference: DeLong's fast
algorithm against the O(mn) definition of DeLong et al. (1988) and scikit-learn's AUROC;
McNemar against SciPy's exact binomial test; Holm against its definition; the letters against
their defining property; compare_confidence against evaluate_confidence."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest, norm
from sklearn.metrics import roc_auc_score

from confeval.evaluate import compare_confidence, evaluate_confidence
from confeval.metrics import compare as C


def _delong_by_definition(scores, y):
    """DeLong et al. (1988) as written: psi(X, Y) = 1, 1/2, 0 over all (positive, negative)
    pairs; V10, V01 per case; S = S10 / m + S01 / n (ddof = 1)."""
    pos, neg = scores[:, y == 1], scores[:, y == 0]
    m, n = pos.shape[1], neg.shape[1]
    psi = (pos[:, :, None] > neg[:, None, :]) + 0.5 * (pos[:, :, None] == neg[:, None, :])
    auc = psi.mean(axis=(1, 2))
    v10, v01 = psi.mean(axis=2), psi.mean(axis=1)
    return auc, np.cov(v10) / m + np.cov(v01) / n


@pytest.mark.parametrize("levels", [None, 4])
def test_delong_fast_equals_the_definition_and_sklearn(levels):
    rng = np.random.default_rng(levels or 1)
    y = (rng.random(300) < 0.4).astype(float)
    scores = rng.random((4, 300)) + y * np.array([[0.1], [0.3], [0.0], [0.3]])
    if levels:
        scores = np.round(scores * levels) / levels   # heavy ties
    auc, cov = C.delong_covariance(scores, y)
    auc_ref, cov_ref = _delong_by_definition(scores, y)
    np.testing.assert_allclose(auc, auc_ref, atol=1e-12)
    np.testing.assert_allclose(cov, cov_ref, atol=1e-12)
    np.testing.assert_allclose(auc, [roc_auc_score(y, s) for s in scores], atol=1e-12)
    diff, p = C.delong_test(scores[0], scores[1], y)
    assert diff == pytest.approx(auc_ref[0] - auc_ref[1], abs=1e-12)
    var = cov_ref[0, 0] + cov_ref[1, 1] - 2 * cov_ref[0, 1]
    assert p == pytest.approx(2 * norm.sf(abs(auc_ref[0] - auc_ref[1]) / np.sqrt(var)),
                              abs=1e-10)
    assert C.delong_test(scores[0], scores[0], y) == (0.0, 1.0)


def test_mcnemar_exact_equals_the_binomial_test_on_discordant_pairs():
    rng = np.random.default_rng(2)
    a = rng.random(200) < 0.7
    b = rng.random(200) < 0.6
    discordant_ab, discordant_ba = int(np.sum(a & ~b)), int(np.sum(~a & b))
    expected = binomtest(min(discordant_ab, discordant_ba), discordant_ab + discordant_ba,
                         0.5).pvalue
    assert C.mcnemar_exact(a, b) == pytest.approx(expected, rel=1e-12)
    assert C.mcnemar_exact(a, a) == 1.0


def test_holm_equals_its_definition():
    p = np.array([0.01, 0.04, 0.03, 0.2, np.nan])
    order = np.argsort(p[:4])
    adjusted = np.maximum.accumulate([(4 - i) * p[:4][j] for i, j in enumerate(order)])
    expected = np.empty(4)
    expected[order] = np.minimum(adjusted, 1)
    out = C.holm(p)
    np.testing.assert_allclose(out[:4], expected)
    assert np.isnan(out[4])


@settings(max_examples=80, deadline=None)
@given(k=st.integers(1, 7), seed=st.integers(0, 2**32 - 1))
def test_letters_are_shared_exactly_by_the_pairs_no_test_separates(k, seed):
    rng = np.random.default_rng(seed)
    names = [f"m{i}" for i in range(k)]
    separated = {frozenset(p) for p in itertools.combinations(names, 2) if rng.random() < 0.4}
    letters = C.significance_groups(names, separated)
    assert all(letters[n] for n in names)
    for a, b in itertools.combinations(names, 2):
        share = bool(set(letters[a]) & set(letters[b]))
        assert share == (frozenset((a, b)) not in separated)


def _models(n=400, seed=0):
    rng = np.random.default_rng(seed)
    truth = rng.random(n)
    models = {}
    for k, skill in enumerate([0.2, 0.5, 0.8, 1.2, 1.2]):
        conf = np.clip(truth * skill + rng.random(n) * (1.5 - skill / 2), 0, 1)
        conf = np.round(conf, 1)   # ties
        correct = (rng.random(n) < np.clip(truth + 0.1 * k, 0, 1)).astype(float)
        models[f"model{k}"] = (conf, correct)
    models["same as model2"] = models["model2"]
    return models


def test_compare_confidence_values_tests_and_groups():
    models = _models()
    out = compare_confidence(models, n_resamples=300, seed=1)
    assert set(out["metrics"]) == {"accuracy", "auroc", "auarc", "ece", "brier"}
    assert out["n_items"] == 400 and sorted(out["models"]) == sorted(models)
    for name, (conf, correct) in models.items():
        single = evaluate_confidence(conf, correct, n_resamples=0)
        for metric in ("accuracy", "auroc", "auarc", "ece", "brier"):
            assert out["metrics"][metric]["models"][name]["value"] == pytest.approx(
                single[metric], abs=1e-12)
    for metric, table in out["metrics"].items():
        values = [table["models"][n]["value"] for n in table["ranked"]]
        step = np.diff(values) if table["higher_is_better"] else -np.diff(values)
        assert (step <= 1e-12).all(), metric   # ranked best first
        twin = [p for p in table["pairs"] if {p["a"], p["b"]} == {"model2", "same as model2"}]
        assert twin[0]["p"] == 1.0 and twin[0]["diff"] == 0.0
        assert set(table["models"]["model2"]["group"]) & set(
            table["models"]["same as model2"]["group"])
        tests = {p["test"] for p in table["pairs"]}
        assert tests == {"accuracy": {"mcnemar_exact"}}.get(metric, tests)
    # accuracy pairs use McNemar; AUROC pairs with different labels fall back to the bootstrap
    auroc_tests = {(p["a"], p["b"]): p["test"] for p in out["metrics"]["auroc"]["pairs"]}
    assert set(auroc_tests.values()) == {"delong", "paired_bootstrap"}


def test_compare_confidence_refuses_one_model_and_unequal_items():
    models = _models()
    with pytest.raises(ValueError, match="at least two models"):
        compare_confidence({"a": models["model0"]})
    with pytest.raises(ValueError, match="the same items"):
        compare_confidence({"a": models["model0"],
                            "b": (models["model1"][0][:10], models["model1"][1][:10])})


def test_records_are_aligned_by_id_and_missing_items_counted(tmp_path):
    """Files in different row orders, one with items missing and one with an unusable row:
    compared on the shared ids only, each value equal to evaluate_confidence on those items,
    and not_shared counting what each model lacks."""
    import pandas as pd

    from confeval.evaluate import compare_confidence_records
    from confeval.records import RecordSet

    models = _models(n=120)
    sets, frames = {}, {}
    rng = np.random.default_rng(4)
    for name in ("model0", "model1", "model3"):
        conf, correct = models[name]
        frame = pd.DataFrame({"id": [f"q{i}" for i in range(120)], "p": conf, "y": correct})
        frame = frame.sample(frac=1.0, random_state=int(rng.integers(100)))   # own order
        frames[name] = frame
    frames["model1"] = frames["model1"][~frames["model1"]["id"].isin(["q3", "q7"])]
    frames["model3"] = frames["model3"].astype({"p": object})
    frames["model3"].loc[frames["model3"]["id"] == "q5", "p"] = "oops"
    for name, frame in frames.items():
        path = tmp_path / f"{name}.csv"
        frame.to_csv(path, index=False)
        sets[name] = RecordSet.read(path)
    out = compare_confidence_records(sets, "p", "y", "id", n_resamples=100)
    assert out["n_items_shared"] == 117
    assert out["not_shared"] == {"model0": 0, "model1": 2, "model3": 1}
    assert out["excluded"]["model3"] == {"non_numeric_confidence": 1}
    keep = np.array([i not in (3, 5, 7) for i in range(120)])
    for name in frames:
        conf, correct = models[name]
        expected = evaluate_confidence(conf[keep], correct[keep], n_resamples=0)
        assert out["metrics"]["auroc"]["models"][name]["value"] == pytest.approx(
            expected["auroc"], abs=1e-12)
    with pytest.raises(ValueError, match="no id column 'item'"):
        compare_confidence_records(sets, "p", "y", "item")
    twice = pd.concat([frames["model0"], frames["model0"].head(1)])
    twice.to_csv(tmp_path / "twice.csv", index=False)
    with pytest.raises(ValueError, match="twice.csv: id 'q.*' appears 2 times"):
        compare_confidence_records({"a": RecordSet.read(tmp_path / "twice.csv"),
                                    "b": sets["model0"]}, "p", "y", "id")
