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


def test_paired_bootstrap_p_is_the_normal_test_with_the_bootstrap_standard_error():
    from scipy.stats import norm

    from confeval.metrics.compare import paired_bootstrap_p

    reps = np.random.default_rng(0).normal(0.03, 0.01, size=1000)
    se = np.std(reps, ddof=1)
    assert paired_bootstrap_p(0.03, reps) == pytest.approx(2 * norm.sf(0.03 / se), rel=1e-12)
    assert paired_bootstrap_p(0.0, np.zeros(50)) == 1.0     # the same model twice
    assert paired_bootstrap_p(0.2, np.full(50, 0.2)) == 0.0  # a difference in every resample
    assert np.isnan(paired_bootstrap_p(0.1, np.array([np.nan, np.nan])))


def test_exact_tests_fall_back_to_the_bootstrap_where_their_condition_fails():
    from confeval.metrics.compare import PairedMetric, compare_models

    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 200).astype(float)
    soft = rng.random(200)
    metric = PairedMetric(np.mean, {"a": [y], "b": [1 - y], "c": [soft]}, True,
                          test="mcnemar_exact")
    pairs = {(p["a"], p["b"]): p["test"] for p in compare_models(
        {"m": metric}, n_resamples=50)["m"]["pairs"]}
    tests = {frozenset(k): v for k, v in pairs.items()}
    assert tests[frozenset("ab")] == "mcnemar_exact"
    assert tests[frozenset("ac")] == tests[frozenset("bc")] == "paired_bootstrap"
    with pytest.raises(ValueError, match="unknown test"):
        PairedMetric(np.mean, {"a": [y]}, True, test="t_test")


@pytest.mark.parametrize("sizes", [(4,) * 30, (2, 5, 3, 4, 1) * 6])
def test_cluster_resamples_are_bootstrap_cis_and_shared_by_every_model(sizes):
    """Whole clusters drawn, the same for every model, the stream of bootstrap_ci's cluster
    bootstrap: each model's replicates equal bootstrap_ci's (batched equal-size blocks or one
    resample at a time)."""
    from confeval.metrics import auroc
    from confeval.metrics.bootstrap import _replicates

    rng = np.random.default_rng(3)
    clusters = np.repeat(np.arange(len(sizes)), sizes)
    n = clusters.size
    y = (rng.random(n) < 0.4).astype(float)
    models = [[rng.random(n) + k * y * 0.2, y] for k in range(3)]

    reps = C.paired_replicates(auroc, models, n_resamples=40, seed=7, clusters=clusters)
    for k, arrays in enumerate(models):
        own = _replicates(auroc, None, arrays, 40, np.random.default_rng(7), clusters, {})
        np.testing.assert_allclose(reps[:, k], own, atol=1e-12)


def test_tied_values_share_the_best_rank_and_nan_ranks_last():
    reps = np.random.default_rng(0).random((50, 4))
    table = C.compare_metric(reps, [0.5, 0.7, 0.5, float("nan")], ["a", "b", "c", "d"],
                             higher_is_better=True)
    assert {n: r["rank"] for n, r in table["models"].items()} == {"a": 2, "b": 1, "c": 2,
                                                                   "d": 4}
    assert table["ranked"] == ["b", "a", "c", "d"]
    lower = C.compare_metric(reps, [0.5, 0.7, 0.5, 0.1], list("abcd"), higher_is_better=False)
    assert {n: r["rank"] for n, r in lower["models"].items()} == {"a": 2, "b": 4, "c": 2,
                                                                   "d": 1}
