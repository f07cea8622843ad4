import math
import warnings

import numpy as np
import pytest

from confeval.conformal import (
    SCORES,
    SmallCalibrationWarning,
    calibrate_and_predict,
    conformal_quantile,
    label_scores,
    prediction_sets,
    set_metrics,
    softmax,
    uncertainty_aware_accuracy,
)
from confeval.simulate import simulate


def test_quantile_is_the_kth_smallest_and_higher_is_numpy():
    rng = np.random.default_rng(0)
    s = rng.uniform(size=99)
    k = math.ceil(100 * 0.9)  # 90, not 91 (float: 100 * 0.9 = 90.00000000000001)
    assert conformal_quantile(s, 0.1) == np.sort(s)[k - 1]
    assert conformal_quantile(s, 0.1, "higher") == np.quantile(s, k / 99, method="higher")


def test_too_small_calibration_set_gives_full_sets_with_a_warning():
    probs = np.array([[0.7, 0.2, 0.1]] * 3)
    with pytest.warns(SmallCalibrationWarning, match="too few for alpha=0.1"):
        member, qhat = calibrate_and_predict(probs, np.array([0, 1, 2]), probs, "lac", 0.1)
    assert qhat == math.inf and member.all()


def test_score_definitions_and_tie_rules():
    p = np.array([[0.4, 0.3, 0.3, 0.0]])
    # inclusive: tied labels share the mass at the end of their block
    np.testing.assert_allclose(label_scores(p, "aps"), [[0.4, 1.0, 1.0, 1.0]])
    numpy_order = label_scores(p, "aps", ties="numpy")
    assert sorted(numpy_order[0, 1:3].round(6).tolist()) == [0.7, 1.0]
    np.testing.assert_allclose(label_scores(p, "raps", lam=0.1, k_reg=1),
                               [[0.4, 1.2, 1.2, 1.3]])
    rng = np.random.default_rng(0)
    u = np.random.default_rng(0).uniform()
    np.testing.assert_allclose(label_scores(p, "aps_randomized", rng=rng),
                               [[u * 0.4, 0.4 + u * 0.6, 0.4 + u * 0.6, 1.0]], rtol=1e-12)
    np.testing.assert_allclose(label_scores(p, "margin"), [[-0.1, 0.1, 0.1, 0.4]])


def test_set_metrics_hand_computed():
    member = np.array([[1, 0, 0], [1, 1, 0], [0, 0, 1], [1, 1, 1]], dtype=bool)
    labels = np.array([0, 2, 2, 1])
    probs = np.array([[.8, .1, .1], [.5, .4, .1], [.1, .2, .7], [.4, .3, .3]])
    m = set_metrics(member, labels, probs)
    assert m["coverage"] == 0.75 and m["set_size"] == 1.75
    assert m["size_distribution"] == {1: 2, 2: 1, 3: 1}
    assert m["coverage_by_size"] == {1: 1.0, 2: 0.0, 3: 1.0}
    assert m["singleton_hit_rate"] == 1.0
    assert m["uacc"] == pytest.approx(uncertainty_aware_accuracy(0.5, 1.75, 3))


@pytest.mark.parametrize("score", ["lac", "aps"])
def test_sets_equal_mapie(score):
    mapie = pytest.importorskip("mapie.classification", reason="mapie is a test-only extra")
    from sklearn.base import BaseEstimator, ClassifierMixin

    rng = np.random.default_rng(5)
    probs = rng.dirichlet(np.ones(5) * 0.7, size=1200)
    labels = np.array([rng.choice(5, p=row) for row in probs])

    class Fixed(ClassifierMixin, BaseEstimator):
        """Returns the stored probabilities of the rows whose index is X[:, 0]."""

        def fit(self, X, y):
            self.classes_ = np.arange(5)
            return self

        def predict_proba(self, X):
            return probs[X[:, 0].astype(int)]

        def predict(self, X):
            return self.predict_proba(X).argmax(1)

    X = np.arange(1200)[:, None]
    cal, test = np.arange(600), np.arange(600, 1200)
    clf = mapie.SplitConformalClassifier(Fixed().fit(X, labels), confidence_level=0.9,
                                         conformity_score=score, prefit=True, random_state=7)
    clf.conformalize(X[cal], labels[cal])
    if score == "lac":
        _, theirs = clf.predict_set(X[test])
        ours, _ = calibrate_and_predict(probs[cal], labels[cal], probs[test], "lac", 0.1,
                                        allow_empty=True)
    else:
        # MAPIE calibrates APS on randomised scores (cumulative mass minus U * p_y, with U
        # from RandomState(random_state)) and, with include_last_label=False, predicts the
        # deterministic sets {y : cumulative mass <= q}. Feed our APS pieces the same U.
        _, theirs = clf.predict_set(X[test], conformity_score_params={
            "include_last_label": False})
        u = np.random.RandomState(7).uniform(size=600)
        cum = label_scores(probs[cal], "aps")[np.arange(600), labels[cal]]
        qhat = conformal_quantile(cum - u * probs[cal][np.arange(600), labels[cal]], 0.1)
        # ... and never returns an empty set (the top label fills it), like our default.
        ours = prediction_sets(label_scores(probs[test], "aps"), qhat, probs[test],
                               allow_empty=False)
    assert 0 < theirs[:, :, 0].sum() < theirs[:, :, 0].size
    np.testing.assert_array_equal(ours, theirs[:, :, 0])


def test_coverage_guarantee_over_500_splits_every_score_and_group():
    df = simulate("mcq", 1200, "overconfident", seed=11, n_options=5)
    probs = softmax(df[[f"logit_{c}" for c in "ABCDE"]].to_numpy(), np.float64)
    labels = df.answer.map({c: i for i, c in enumerate("ABCDE")}).to_numpy()
    groups = df.category.to_numpy()
    alpha = 0.1
    rng = np.random.default_rng(2024)
    covered = {s: [] for s in SCORES}
    group_cov = {g: [] for g in np.unique(groups)}
    for split in range(500):
        perm = rng.permutation(labels.size)
        cal, test = perm[:600], perm[600:]
        for score in SCORES:
            member, _ = calibrate_and_predict(probs[cal], labels[cal], probs[test], score,
                                              alpha, seed=split)
            covered[score].append(member[np.arange(test.size), labels[test]].mean())
        member, _ = calibrate_and_predict(probs[cal], labels[cal], probs[test], "lac", alpha,
                                          groups_cal=groups[cal], groups_test=groups[test])
        hit = member[np.arange(test.size), labels[test]]
        for g in group_cov:
            group_cov[g].append(hit[groups[test] == g].mean())
    for score, values in covered.items():
        assert np.mean(values) >= 1 - alpha - 0.005, score
    for g, values in group_cov.items():
        assert np.mean(values) >= 1 - alpha - 0.005, g
    # randomised APS is exact, not conservative: close to 1 - alpha from above
    assert np.mean(covered["aps_randomized"]) < 1 - alpha + 0.01


def test_randomized_scores_are_seeded():
    probs = softmax(np.random.default_rng(1).normal(size=(200, 4)), np.float64)
    labels = np.zeros(200, dtype=int)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a, _ = calibrate_and_predict(probs[:100], labels[:100], probs[100:], "raps_randomized",
                                     0.2, seed=3)
        b, _ = calibrate_and_predict(probs[:100], labels[:100], probs[100:], "raps_randomized",
                                     0.2, seed=3)
    np.testing.assert_array_equal(a, b)


def test_the_whole_label_set_has_aps_score_one_exactly_whatever_the_rounding():
    """A row's probabilities summing to 1 up to the last bit: with the inclusive tie rule the
    full set scores exactly 1.0, so a quantile at the full mass (a small Mondrian group) never
    lets the last bit of a sum decide whether a set holds its last label."""
    from confeval.conformal import label_scores, prediction_sets

    p = np.array([[0.1, 0.2, 0.7], [0.3, 0.3, 0.4], [1 / 3, 1 / 3, 1 / 3],
                  [0.6, 0.3, 0.1]])
    assert np.cumsum(np.sort(p, axis=1)[:, ::-1], axis=1)[:, -1].tolist() != [1.0] * 4
    scores = label_scores(p, "aps")
    assert scores.max(axis=1).tolist() == [1.0] * 4
    assert prediction_sets(scores, 1.0, p).all()
