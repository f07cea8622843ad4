"""The base models' quantile leaf update: the fast percentiles equal numpy's and scikit-learn's
bit for bit, and the quantile boosters built on them fit the same trees as scikit-learn's own."""

import numpy as np
import pytest
from sklearn._loss.loss import PinballLoss
from sklearn.ensemble import GradientBoostingRegressor, HistGradientBoostingRegressor
from sklearn.utils.stats import _weighted_percentile

from confeval.conformal._interval_base import (
    _booster,
    _PinballLoss,
    _QuantileGBR,
    _QuantileHGB,
    percentile_inverted_cdf,
    percentile_linear,
)

# 100 * quantile as the boosters pass it (5.000000000000001 for 0.05), the bounds, and others
PERCENTS = [100 * 0.05, 100 * 0.95, 100 * 0.1, 100 * 0.9, 50.0, 33.3, 0.0, 100.0, 1e-9]


def _arrays(seed: int):
    """Seeded arrays of 1-60 values: continuous, and integer-valued (many ties)."""
    rng = np.random.default_rng(seed)
    for trial in range(600):
        n = int(rng.integers(1, 61))
        if trial % 2:
            yield rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4)
        else:
            yield rng.integers(-3, 4, n).astype(np.float64)


def test_percentile_linear_is_numpys_percentile_bit_for_bit():
    for a in _arrays(0):
        before = a.copy()
        for percent in PERCENTS:
            ours, numpys = percentile_linear(a, percent), np.percentile(a, percent, axis=0)
            assert ours == numpys, (a, percent)
            assert type(ours) is type(numpys) is np.float64
        np.testing.assert_array_equal(a, before)   # the input is not reordered


def test_percentile_inverted_cdf_is_sklearns_unit_weight_percentile_bit_for_bit():
    for a in _arrays(1):
        for percent in PERCENTS:
            expected = _weighted_percentile(a, np.ones_like(a), percent)
            assert percentile_inverted_cdf(a, percent) == expected, (a, percent)


def test_hand_computed_cases():
    a = np.array([4.0, 1.0, 3.0, 2.0])
    # linear: virtual index 3 * 0.5 = 1.5, halfway between 2 and 3
    assert percentile_linear(a, 50.0) == 2.5
    # inverted cdf: 0.5 * 4 = 2 lands on the cumulative weight 2 exactly: the 2nd value
    assert percentile_inverted_cdf(a, 50.0) == 2.0
    assert percentile_inverted_cdf(a, 50.1) == 3.0
    assert percentile_inverted_cdf(a, 0.0) == 1.0 and percentile_inverted_cdf(a, 100.0) == 4.0


@pytest.mark.parametrize("weights", [None, "ones", "uneven"])
@pytest.mark.parametrize("quantile", [0.05, 0.5, 0.95])
def test_pinball_intercept_equals_sklearns_and_routes_the_rest_to_it(weights, quantile):
    rng = np.random.default_rng(2)
    y = rng.integers(0, 5, 101).astype(np.float64)
    w = {None: None, "ones": np.ones(101), "uneven": rng.uniform(0.5, 2, 101)}[weights]
    plain = PinballLoss(sample_weight=None, quantile=quantile)
    fast = PinballLoss(sample_weight=None, quantile=quantile)
    fast.__class__ = _PinballLoss
    assert fast.fit_intercept_only(y, w) == plain.fit_intercept_only(y, w)
    with_nan = y.copy()
    with_nan[3] = np.nan   # numpy's and scikit-learn's NaN rules: theirs, not ours
    np.testing.assert_array_equal(fast.fit_intercept_only(with_nan, w),
                                  plain.fit_intercept_only(with_nan, w))
    two_d = y.reshape(-1, 1)
    np.testing.assert_array_equal(fast.fit_intercept_only(two_d, w),
                                  plain.fit_intercept_only(two_d, w))


def _data(seed: int, n: int = 1500):
    """Judge-like data: rounded features (ties in every split) and 1-5 ratings."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 5)).round(1)
    y = np.clip(np.rint(3 + X[:, 0] + rng.standard_normal(n)), 1, 5)
    return X, y


@pytest.mark.parametrize("quantile", [0.05, 0.95])
def test_quantile_hgb_fits_sklearns_trees(quantile):
    X, y = _data(3)
    plain = HistGradientBoostingRegressor(loss="quantile", quantile=quantile, random_state=4)
    fast = _QuantileHGB(loss="quantile", quantile=quantile, random_state=4)
    plain.fit(X, y)
    fast.fit(X, y)
    assert isinstance(fast._loss, _PinballLoss)
    for ours, theirs in zip(fast._predictors, plain._predictors):
        np.testing.assert_array_equal(ours[0].nodes, theirs[0].nodes)
    X_new, _ = _data(5, 400)
    np.testing.assert_array_equal(fast.predict(X_new), plain.predict(X_new))


@pytest.mark.parametrize("quantile", [0.05, 0.95])
def test_quantile_gbr_fits_sklearns_trees(quantile):
    X, y = _data(6)
    plain = GradientBoostingRegressor(loss="quantile", alpha=quantile, random_state=7).fit(X, y)
    fast = _QuantileGBR(loss="quantile", alpha=quantile, random_state=7).fit(X, y)
    assert isinstance(fast._loss, _PinballLoss)
    for ours, theirs in zip(fast.estimators_.ravel(), plain.estimators_.ravel()):
        np.testing.assert_array_equal(ours.tree_.value, theirs.tree_.value)
        np.testing.assert_array_equal(ours.tree_.threshold, theirs.tree_.threshold)
    X_new, _ = _data(8, 400)
    np.testing.assert_array_equal(fast.predict(X_new), plain.predict(X_new))


def test_booster_uses_the_fast_quantile_models_only_for_quantiles():
    assert type(_booster("hgb", 0, quantile=0.1)) is _QuantileHGB
    assert type(_booster("gbr", 0, quantile=0.1)) is _QuantileGBR
    assert type(_booster("hgb", 0)) is HistGradientBoostingRegressor
    assert type(_booster("gbr", 0)) is GradientBoostingRegressor
    # scikit-learn's parameter machinery sees the parent's parameters
    assert _booster("gbr", 3, quantile=0.2).get_params()["alpha"] == 0.2


def test_each_thread_has_its_own_shared_base_models():
    """Thread A's cache ends while thread B is inside its own: B keeps caching, and neither
    sees the other's fits."""
    import threading

    from confeval.conformal._interval_base import fitted_base, shared_base_models

    X, y = _data(9, 200)
    a_done, b_inside = threading.Event(), threading.Event()
    fits: dict = {}
    errors: list = []

    def thread_a():
        with shared_base_models():
            fits["a"] = fitted_base("linear", 0, X, y)
            b_inside.wait(10)
        a_done.set()

    def thread_b():
        try:
            with shared_base_models():
                first = fitted_base("linear", 0, X, y)
                b_inside.set()
                a_done.wait(10)
                fits["b"] = (first, fitted_base("linear", 0, X, y))
        except Exception as exc:   # reported below, in the test's thread
            errors.append(exc)

    workers = [threading.Thread(target=thread_a), threading.Thread(target=thread_b)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(30)
    assert not errors
    first, again = fits["b"]
    assert again is first            # B's cache outlived A's
    assert first is not fits["a"]    # and was B's own
