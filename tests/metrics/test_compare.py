"""The statistics of comparing models, each against an independent reference: DeLong's fast
algorithm against the O(mn) definition of DeLong et al. (1988) and scikit-learn's AUROC;
McNemar against SciPy's exact binomial test; Holm against its definition; the letters against
their defining property; compare_confidence against evaluate_confidence."""

import itertools
import math

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
        assert "target" not in table   # no coverage here: every metric has a direction
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
    assert np.isnan(paired_bootstrap_p(0.1, np.array([np.nan, np.nan])))


def _untested(result):
    p, why = result
    return (bool(np.isnan(p)), why)


def test_a_bootstrap_with_no_information_gives_no_p_value_and_says_why():
    """Never p = 0 from no evidence: a difference the same in every resample (to rounding)
    has no variance; fewer than 20 distinct resamples (n <= 3 items) or defined replicates
    are too few; an undefined difference is undefined. A difference of 0 everywhere is 1."""
    from confeval.metrics.compare import MIN_DISTINCT_RESAMPLES, paired_bootstrap_test

    assert MIN_DISTINCT_RESAMPLES == 20
    reps = np.random.default_rng(1).normal(0.03, 0.01, size=200)
    assert paired_bootstrap_test(0.03, reps)[1] is None
    assert _untested(paired_bootstrap_test(0.2, np.full(50, 0.2))) == (True, "no_variance")
    rounding = np.where(np.arange(50) % 2, 0.1 + 0.2, 0.3)   # 0.30000000000000004 and 0.3
    assert np.std(rounding) > 0
    assert _untested(paired_bootstrap_test(0.3, rounding)) == (True, "no_variance")
    assert paired_bootstrap_test(0.0, np.zeros(50)) == (1.0, None)
    assert _untested(paired_bootstrap_test(0.03, reps, distinct=10)) == (True,
                                                                         "too_few_resamples")
    assert paired_bootstrap_test(0.03, reps, distinct=20)[1] is None
    few = np.concatenate([reps[:19], np.full(181, np.nan)])
    assert _untested(paired_bootstrap_test(0.03, few)) == (True, "too_few_defined")
    assert _untested(paired_bootstrap_test(float("nan"), reps)) == (True, "undefined")
    assert _untested(paired_bootstrap_test(0.1, np.full(30, np.nan))) == (True, "undefined")


def test_possible_resamples_count_the_multisets_of_n_items():
    for n in range(1, 7):
        multisets = set(itertools.combinations_with_replacement(range(n), n))
        assert C.possible_resamples(n) == len(multisets)
    assert C.possible_resamples(4) == 35 and C.possible_resamples(40) > 10**16


def _right_wrong_twin(n):
    """Three models on n items: one right on every item, one wrong on every item, both at
    confidence 0.9, and a copy of the first."""
    right = (np.full(n, 0.9), np.ones(n))
    return {"right": right, "wrong": (np.full(n, 0.9), np.zeros(n)), "twin": right}


@pytest.mark.parametrize("n, possible", [(2, 3), (3, 10)])
def test_two_or_three_items_separate_no_models(n, possible):
    """The issue's case: on two items the paired bootstrap gave p = 0 and two groups. Now the
    bootstrap pairs have no p-value (2 items: 3 distinct resamples; 3 items: 10), a counted
    warning says which and why, nothing is separated; exact McNemar stays exact."""
    out = compare_confidence(_right_wrong_twin(n), n_resamples=300, seed=0)
    for metric in ("auarc", "ece", "brier"):
        table = out["metrics"][metric]
        for pair in table["pairs"]:
            assert pair["test"] == "paired_bootstrap"
            assert np.isnan(pair["p"]) and np.isnan(pair["p_holm"]), (metric, pair)
            assert pair["untested"] == "too_few_resamples"
        assert {row["group"] for row in table["models"].values()} == {"a"}
        (warning,) = table["warnings"]
        assert warning.startswith("3 of 3 pairs have no p-value: the bootstrap has fewer than "
                                  f"20 distinct resamples ({n} items allow {possible}): ")
        assert warning.endswith("; they separate no models")
    accuracy = {frozenset((p["a"], p["b"])): p for p in out["metrics"]["accuracy"]["pairs"]}
    # every item discordant one way: the exact binomial p = 2 / 2^n, never 0
    assert accuracy[frozenset(("right", "wrong"))]["p"] == 2 / 2**n
    assert accuracy[frozenset(("right", "twin"))]["p"] == 1.0   # no discordant item
    assert all("untested" not in p for p in accuracy.values())
    assert not any(p["p"] == 0 for t in out["metrics"].values() for p in t["pairs"])


def test_four_items_without_variance_give_no_p_value_the_same_model_p_one():
    """Four items have 35 distinct resamples (tested), but right against wrong differs by the
    same amount in every resample: no variance, no p-value, not separated (it was p = 0). The
    model against its copy differs by 0 everywhere: p = 1, as McNemar gives it."""
    out = compare_confidence(_right_wrong_twin(4), n_resamples=300, seed=0)
    for metric in ("auarc", "ece", "brier"):
        pairs = {frozenset((p["a"], p["b"])): p for p in out["metrics"][metric]["pairs"]}
        for other in ("right", "twin"):
            pair = pairs[frozenset((other, "wrong"))]
            assert np.isnan(pair["p"]) and pair["untested"] == "no_variance", metric
        assert pairs[frozenset(("right", "twin"))]["p"] == 1.0
        assert {row["group"] for row in out["metrics"][metric]["models"].values()} == {"a"}
        (warning,) = out["metrics"][metric]["warnings"]
        assert warning.startswith("2 of 3 pairs have no p-value: the difference is the same "
                                  "in every resample")
    assert {p["p"] for p in out["metrics"]["accuracy"]["pairs"]} == {1.0, 0.125}


def test_delong_without_variance_gives_no_p_value():
    """AUROC 1 against 0 on two items of each class: DeLong's variance of the difference is
    0 (it gave p = 0). The same ranking twice: p = 1."""
    y = np.array([1.0, 0.0, 1.0, 0.0])
    best, worst = np.array([0.9, 0.1, 0.8, 0.2]), np.array([0.1, 0.9, 0.2, 0.8])
    diff, p = C.delong_test(best, worst, y)
    assert diff == 1.0 and np.isnan(p)
    assert C.delong_test(best, best, y) == (0.0, 1.0)
    from confeval.metrics import auroc

    metric = C.PairedMetric(auroc, {"best": [best, y], "worst": [worst, y]}, True,
                            test="delong")
    (pair,) = C.compare_models({"auroc": metric}, n_resamples=100)["auroc"]["pairs"]
    assert pair["test"] == "delong" and pair["untested"] == "no_variance"
    assert np.isnan(pair["p"]) and np.isnan(pair["p_holm"])


def test_exact_mcnemar_on_no_discordant_item_is_one_as_statsmodels_gives_it():
    """With no discordant item the conditional null is the point 0, which the data equal:
    p = 1 exactly (statsmodels' value; scipy's binomtest refuses n = 0)."""
    from scipy.stats import binomtest
    from statsmodels.stats.contingency_tables import mcnemar

    a = np.array([1, 0, 1, 1])
    assert C.mcnemar_exact(a, a) == 1.0 == mcnemar([[3, 0], [0, 1]], exact=True).pvalue
    with pytest.raises(ValueError):
        binomtest(0, 0)


def test_holm_adjusts_only_the_pairs_that_have_a_p_value():
    """Three models, b and c differing by the same 0.1 in every resample: that pair has no
    p-value, and Holm multiplies the other two by 2 and 1, not 3 and 2."""
    from statsmodels.stats.multitest import multipletests

    rng = np.random.default_rng(3)
    a = rng.normal(0.50, 0.05, 400)
    b = rng.normal(0.40, 0.05, 400)
    reps = np.column_stack([a, b, b - 0.1])
    table = C.compare_metric(reps, [0.5, 0.4, 0.3], ["a", "b", "c"], higher_is_better=True)
    pairs = {(p["a"], p["b"]): p for p in table["pairs"]}
    assert pairs[("b", "c")]["untested"] == "no_variance"
    assert np.isnan(pairs[("b", "c")]["p_holm"])
    tested = [pairs[("a", "b")], pairs[("a", "c")]]
    expected = multipletests([p["p"] for p in tested], method="holm")[1]
    np.testing.assert_allclose([p["p_holm"] for p in tested], expected, rtol=1e-12)
    assert table["warnings"] == ["1 of 3 pairs have no p-value: the difference is the same "
                                 "in every resample (no variance; the normal test would give "
                                 "p = 0 from no evidence): b – c; they separate no models"]


def test_pair_intervals_and_p_values_equal_the_one_pair_functions():
    """The pairs computed a row of models at a time equal percentile_interval and
    paired_bootstrap_test of each pair alone, bit for bit (undefined replicates too)."""
    from confeval.metrics.bootstrap import percentile_interval

    rng = np.random.default_rng(4)
    reps = rng.normal(0.5, 0.1, (300, 6))
    reps[rng.random(300) < 0.05, 0] = np.nan   # the pairs of m0: one by one
    reps[:, 5] = reps[:, 4] + 0.05             # a constant difference
    values = [float(np.nanmean(reps[:, j])) for j in range(6)]
    names = [f"m{j}" for j in range(6)]
    table = C.compare_metric(reps, values, names, higher_is_better=True, n_units=50)
    assert {p.get("untested") for p in table["pairs"]} == {None, "no_variance"}
    for pair in table["pairs"]:
        i, j = names.index(pair["a"]), names.index(pair["b"])
        diff = reps[:, i] - reps[:, j]
        assert (pair["low"], pair["high"]) == percentile_interval(diff)[:2]
        p, why = C.paired_bootstrap_test(values[i] - values[j], diff, distinct=300)
        assert pair.get("untested") == why
        assert pair["p"] == p or (np.isnan(p) and np.isnan(pair["p"]))


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


def test_a_coverage_ranks_by_its_distance_to_the_promised_level():
    # 0.97 over-covers by 0.07, 0.86 under-covers by 0.04, 0.91 is 0.01 off: closest first,
    # in the values and in every resample (the rank intervals of |rep - 0.9|, lower better)
    rng = np.random.default_rng(4)
    reps = np.clip(np.array([0.91, 0.97, 0.86]) + rng.normal(0, 0.01, (400, 3)), 0, 1)
    table = C.compare_metric(reps, [0.91, 0.97, 0.86], ["a", "b", "c"],
                             higher_is_better=None, target=0.9)
    assert table["ranked"] == ["a", "c", "b"] and table["target"] == 0.9
    assert {n: r["rank"] for n, r in table["models"].items()} == {"a": 1, "b": 3, "c": 2}
    by_distance = C.rank_intervals(np.abs(reps - 0.9), False, 0.95)
    assert [(r["rank_low"], r["rank_high"]) for r in table["models"].values()] == [
        tuple(b) for b in by_distance]
    # the differences are still of the coverages themselves, tested as before
    pair = next(p for p in table["pairs"] if (p["a"], p["b"]) == ("a", "b"))
    assert pair["diff"] == pytest.approx(0.91 - 0.97)
    assert C.direction_text(table) == "closest to 0.9 is best"
    assert C.direction_arrow(table) == "→0.9"
    assert C.direction_text({"higher_is_better": False}) == "lower is better"
    with pytest.raises(ValueError, match="a direction .* or a target"):
        C.PairedMetric(np.mean, {"a": [np.ones(3)]}, True, target=0.9)


# ---------------------------------------------------------------- rank intervals

HAND_REPLICATES = np.array([[0.9, 0.5, 0.1],
                            [0.5, 0.9, 0.1],
                            [0.5, 0.5, 0.1],      # models 0 and 1 tie
                            [0.7, 0.6, np.nan],   # model 2 undefined: last
                            [0.3, 0.6, 0.8]])
"""Five resamples of three models. Best ranks (ties in the model's favour): model 0
[1, 2, 1, 1, 3], model 1 [2, 1, 1, 2, 2], model 2 [3, 3, 3, 3, 1]; worst ranks (ties against
it): model 0 [1, 2, 2, 1, 3], model 1 [2, 1, 2, 2, 2], model 2 [3, 3, 3, 3, 1]."""


@pytest.mark.parametrize(("level", "expected"), [
    # tail 0.25, R = 5: low = 2nd smallest best rank (index floor(0.25 * 4) = 1), high =
    # 4th smallest worst rank (index ceil(0.75 * 4) = 3)
    (0.5, [(1, 2), (1, 2), (3, 3)]),
    # tail 0.025: index floor(0.1) = 0 (the smallest), ceil(3.9) = 4 (the largest)
    (0.95, [(1, 3), (1, 2), (1, 3)]),
])
def test_rank_intervals_by_hand(level, expected):
    assert C.rank_intervals(HAND_REPLICATES, True, level) == expected
    # the same models with the metric's direction turned round: the same ranks
    assert C.rank_intervals(-HAND_REPLICATES, False, level) == expected
    assert all(type(end) is int for span in C.rank_intervals(HAND_REPLICATES, True, level)
               for end in span)


def _rank_intervals_by_definition(reps, higher_is_better, level):
    """The rule of docs/concepts.md in plain Python: per resample each model's best rank (1 +
    the models strictly better) and worst rank (the models better or equal), NaN worst of
    all and tied with NaN; low the element of index floor(tail (R - 1)) of the sorted best
    ranks, high that of index ceil((1 - tail) (R - 1)) of the sorted worst ranks — numpy's
    documented "lower" and "higher" quantiles. Also each model's best and worst ranks."""
    n_resamples, k = reps.shape

    def better(x, y):
        if math.isnan(x) or math.isnan(y):
            return not math.isnan(x) and math.isnan(y)
        return x > y if higher_is_better else x < y

    def same(x, y):
        return (math.isnan(x) and math.isnan(y)) or x == y

    tail = (1 - level) / 2
    best = [[1 + sum(better(row[i], row[j]) for i in range(k)) for row in reps.tolist()]
            for j in range(k)]
    worst = [[b + sum(same(row[i], row[j]) for i in range(k) if i != j)
              for b, row in zip(best[j], reps.tolist())] for j in range(k)]
    spans = [(sorted(best[j])[math.floor(tail * (n_resamples - 1))],
              sorted(worst[j])[math.ceil((1 - tail) * (n_resamples - 1))]) for j in range(k)]
    return spans, np.array(best), np.array(worst)


@pytest.mark.parametrize("n_resamples", [50, 199, 1000])
@pytest.mark.parametrize("seed", [0, 1])
def test_rank_intervals_are_the_order_statistics_of_the_stated_rule(n_resamples, seed):
    """Against the rule computed by definition (ties and undefined resamples included), and
    its promise: at most tail R resamples rank a model better than its low end, at most as
    many worse than its high end (whichever way ties break). R is chosen so that no
    quantile index tail (R - 1) is a whole number (where rounding could move it)."""
    rng = np.random.default_rng(seed)
    reps = np.round(rng.normal(np.linspace(0.5, 0.6, 6), 0.05, size=(n_resamples, 6)), 2)
    reps[rng.random(reps.shape) < 0.02] = np.nan
    for higher, level in [(True, 0.95), (False, 0.95), (True, 0.8)]:
        spans, best, worst = _rank_intervals_by_definition(reps, higher, level)
        assert C.rank_intervals(reps, higher, level) == spans
        tail = (1 - level) / 2
        for j, (low, high) in enumerate(spans):
            assert (best[j] < low).mean() <= tail and (worst[j] > high).mean() <= tail


def test_a_comparison_has_whole_rank_intervals_and_equal_models_share_both_places():
    rng = np.random.default_rng(3)
    base = rng.random((200, 1))
    reps = np.hstack([base, base, base - 0.5])   # models a and b equal in every resample
    table = C.compare_metric(reps, [0.5, 0.5, 0.0], ["a", "b", "c"], higher_is_better=True)
    spans = {n: (r["rank_low"], r["rank_high"]) for n, r in table["models"].items()}
    assert spans == {"a": (1, 2), "b": (1, 2), "c": (3, 3)}
    assert all(type(end) is int for span in spans.values() for end in span)
