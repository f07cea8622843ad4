"""CHR and the boosted methods: their building blocks against independent references."""

import numpy as np
import pytest
from scipy.stats.mstats import hdquantiles
from sklearn.tree import DecisionTreeRegressor

from confeval.conformal.boosted import _StumpContext, fit_stump, harrell_davis_weights
from confeval.conformal.histogram import CHR, histogram_from_quantiles, nested_growth_scores
from confeval.conformal.regression import make_method
from confeval.simulate import simulate


@pytest.mark.parametrize("seed", range(5))
def test_stump_matches_sklearn_regression_stump(seed):
    """With no leaf penalty, the best split for unit Hessians maximises G_L^2/n_L + G_R^2/n_R,
    which is what a squared-error depth-1 tree on the negative gradient does; leaf values are
    minus the mean gradient."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(300, 4)), 1)  # ties on purpose
    grad = rng.normal(size=300) + X[:, 2]
    j, threshold, left, right = fit_stump(_StumpContext(X, lam=0.0), grad)
    tree = DecisionTreeRegressor(max_depth=1).fit(X, -grad)
    assert j == tree.tree_.feature[0]
    assert threshold == pytest.approx(tree.tree_.threshold[0])
    assert [left, right] == pytest.approx(tree.tree_.value[1:, 0, 0])


def test_stump_on_constant_features_is_one_leaf():
    X = np.ones((10, 2))
    g = np.arange(10.0)
    _, threshold, left, right = fit_stump(_StumpContext(X, lam=1.0), g)
    assert threshold == np.inf and left == right == pytest.approx(-45 / 11)


@pytest.mark.parametrize("level", [0.5, 0.9, 0.95])
def test_harrell_davis_weights_match_scipy(level):
    x = np.random.default_rng(1).exponential(size=257)
    w = harrell_davis_weights(x.size, level)
    assert w.sum() == pytest.approx(1.0)
    assert w @ np.sort(x) == pytest.approx(float(hdquantiles(x, prob=[level])[0]), rel=1e-10)


def test_histogram_from_quantiles_hand_computed():
    """Quartiles 1.5, 3, 4.5 of a variable on [0, 6] interpolate to the uniform CDF: each
    unit bin holds 1/6 (plus the 1e-6 floor, renormalised)."""
    breaks = np.arange(0.0, 7.0)
    mass = histogram_from_quantiles(np.array([[1.5, 3.0, 4.5]]), np.array([.25, .5, .75]),
                                    breaks)
    assert mass.shape == (1, 6)
    np.testing.assert_allclose(mass[0], np.full(6, 1 / 6), atol=1e-6)
    # A point mass (all quantiles tied at 3) lands in the bin just below 3: (2, 3].
    tied = histogram_from_quantiles(np.full((1, 3), 3.0), np.array([.25, .5, .75]), breaks)
    assert tied[0].argmax() == 2 and tied[0, 2] > 0.5


def test_nested_growth_scores_hand_computed():
    mass = np.array([[0.1, 0.2, 0.4, 0.25, 0.05]])
    after, before = nested_growth_scores(mass)
    # mode 2 (0.4), then right 3 (0.25 > 0.2), then left 1 (0.2 > 0.05), then 0 (0.1 > 0.05)
    np.testing.assert_allclose(after[0], [0.95, 0.85, 0.4, 0.65, 1.0])
    np.testing.assert_allclose(before[0], after[0] - mass[0])


def test_chr_uncalibrated_bands_hold_one_minus_alpha_of_the_mass():
    df = simulate("scores", 1500, "compressing", seed=4)
    X = df[[f"score_lp{k}" for k in range(1, 6)]].to_numpy()
    y = df.gt_score.to_numpy(float)
    m = CHR(alpha=0.2, epochs=3, hidden=16, calibrate=False, seed=1).fit(X[:1000], y[:1000])
    lo, hi = m.predict(X[1000:])
    mass = m.histogram(X[1000:])
    centres = (m.breaks[:-1] + m.breaks[1:]) / 2
    inside = (centres[None, :] > lo[:, None]) & (centres[None, :] < hi[:, None])
    held = (mass * inside).sum(axis=1)
    clipped = (lo == 1) | (hi == 5)  # clipping to the scale can drop mass outside [1, 5]
    assert (held[~clipped] >= 0.8 - 1e-9).all()


@pytest.mark.parametrize("name", ["boosted_lcp", "boosted_cqr"])
def test_boosting_shortens_the_training_proxy_and_stays_seeded(name):
    df = simulate("scores", 1200, "compressing", seed=6)
    X = df[[f"score_lp{k}" for k in range(1, 6)]].to_numpy()
    y = df.gt_score.to_numpy(float)
    a = make_method(name, seed=3, max_rounds=30, base="hgb" if name == "boosted_cqr" else "rf")
    a.fit(X, y)
    b = make_method(name, seed=3, max_rounds=30, base="hgb" if name == "boosted_cqr" else "rf")
    b.fit(X, y)
    np.testing.assert_array_equal(a.predict(X)[0], b.predict(X)[0])
    assert 0 <= a.rounds <= 30 and a.cv_curve.size == 31
    # the chosen rounds give the shortest cross-validated interval, no longer than none
    assert a.cv_curve[a.rounds] == a.cv_curve.min() <= a.cv_curve[0]
    if a.rounds:
        assert len(a.stumps) == 2 * a.rounds  # one stump per coordinate per round
