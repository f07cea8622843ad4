import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import auc, roc_auc_score

from confeval.evaluate import evaluate_confidence
from confeval.metrics import (
    Ranking,
    UndefinedMetricWarning,
    accuracy_rejection_curve,
    auarc,
    aurc,
    auroc,
    prediction_rejection_ratio,
    rank_calibration_error,
    rank_calibration_error_orders,
    risk_coverage_curve,
)


@pytest.mark.parametrize("seed", range(5))
def test_auroc_equals_sklearn_with_and_without_ties(seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, size=3000)
    continuous = rng.normal(size=3000) + y
    likert = np.round(rng.uniform(size=3000) * 4 + y) / 4  # heavy ties
    for score in (continuous, likert):
        assert auroc(score, y) == pytest.approx(roc_auc_score(y, score), abs=1e-12)


def test_auroc_single_class_is_nan_with_warning():
    with pytest.warns(UndefinedMetricWarning):
        assert np.isnan(auroc([0.1, 0.2], [1, 1]))


def _brute_force_expected_curve(conf, correct):
    """Average accuracy@k over every ordering consistent with the confidences."""
    n = len(conf)
    curves = []
    for perm in itertools.permutations(range(n)):
        c = conf[list(perm)]
        a = correct[list(perm)]
        order = sorted(range(n), key=lambda i: -c[i])  # stable: permutation decides ties
        curves.append(np.cumsum(a[order]) / np.arange(1, n + 1))
    return np.mean(curves, axis=0)


def test_accuracy_rejection_curve_is_the_expectation_over_tie_orders():
    conf = np.array([0.9, 0.5, 0.5, 0.5, 0.2, 0.2])
    correct = np.array([1, 1, 0, 0, 1, 0], dtype=float)
    cov, acc = accuracy_rejection_curve(conf, correct)
    np.testing.assert_allclose(cov, np.arange(1, 7) / 6)
    np.testing.assert_allclose(acc, _brute_force_expected_curve(conf, correct), atol=1e-12)


def test_auarc_hand_computed_and_order_independent():
    conf = np.array([0.9, 0.5, 0.5, 0.1])
    correct = np.array([1, 1, 0, 0])
    # acc@1 = 1, acc@2 = (1 + .5)/2, acc@3 = 2/3, acc@4 = 1/2
    expected = np.mean([1.0, 0.75, 2 / 3, 0.5])
    assert auarc(conf, correct) == pytest.approx(expected, abs=1e-15)
    assert auarc(conf[::-1], correct[::-1]) == pytest.approx(expected, abs=1e-15)


def test_auarc_trapezoid_matches_uq_nlg_formula_without_ties():
    # UQ-NLG: sort by uncertainty, expanding mean, sklearn.metrics.auc on linspace(0, 1, n).
    rng = np.random.default_rng(2)
    u = rng.normal(size=200)
    a = rng.integers(0, 2, size=200).astype(float)
    order = np.argsort(u)
    amean = np.cumsum(a[order]) / np.arange(1, 201)
    reference = auc(np.linspace(0, 1, 200), amean)
    assert auarc(-u, a, integration="trapezoid") == pytest.approx(reference, abs=1e-12)


def test_risk_coverage_and_aurc():
    conf = np.array([0.9, 0.8, 0.3])
    loss = np.array([0.0, 1.0, 1.0])
    cov, risk = risk_coverage_curve(conf, loss)
    np.testing.assert_allclose(cov, [1 / 3, 2 / 3, 1])
    np.testing.assert_allclose(risk, [0.0, 0.5, 2 / 3])
    assert aurc(conf, loss) == pytest.approx((0 + 0.5 + 2 / 3) / 3)


def test_prr_bounds():
    y = np.array([1, 0, 1, 1, 0, 0, 1, 0], dtype=float)
    assert prediction_rejection_ratio(y, y) == pytest.approx(1.0)
    assert prediction_rejection_ratio(np.ones(8), y) == pytest.approx(0.0, abs=1e-15)
    assert prediction_rejection_ratio(-y, y) == pytest.approx(-1.0)
    with pytest.warns(UndefinedMetricWarning):
        assert np.isnan(prediction_rejection_ratio([0.1, 0.2], [1, 1]))


def _naive_rce(confidence, correctness, n_bins):
    """Direct O(n^2) transcription of the plug-in estimator of Huang et al. (2024)."""
    u = -np.asarray(confidence, float)
    a = np.asarray(correctness, float)
    n = len(u)
    order = np.argsort(u, kind="stable")
    a_s = a[order]
    edges = [round(e) for e in np.linspace(0, n, n_bins + 1)]
    reg = np.zeros(n)
    size = np.zeros(n)
    for lo, hi in itertools.pairwise(edges):
        if hi > lo:
            reg[lo:hi] = a_s[lo:hi].mean()
            size[lo:hi] = hi - lo
    total = 0.0
    for i in range(n):
        others_ge = sum(1 for j in range(n) if j != i and reg[j] >= reg[i])
        reg_cdf = others_ge / (n - 1) - (size[i] - 1) / (2 * (n - 1))
        total += abs(reg_cdf - i / (n - 1))
    return total / n


@pytest.mark.parametrize("n,bins", [(50, 5), (97, 20), (300, 7), (15, 20)])
def test_rce_equals_naive_estimator_without_ties(n, bins):
    rng = np.random.default_rng(n)
    conf = rng.normal(size=n)
    correctness = np.clip(0.5 + 0.3 * conf + rng.normal(scale=0.3, size=n), 0, 1)
    assert rank_calibration_error(conf, correctness, n_bins=bins) == pytest.approx(
        _naive_rce(conf, correctness, bins), abs=1e-12)


@pytest.mark.parametrize("ties", ["block", "orders"])
def test_rce_with_more_bins_than_samples_is_one_bin_a_sample(ties):
    """B > n: bins of one sample or none, the estimator of B = n (the naive transcription
    skips the empty bins); computed as B = n, so 10^9 bins on 40 rows allocate nothing of
    that size (--rce-bins 10^8 on 300 rows once took 8.8 GB)."""
    rng = np.random.default_rng(4)
    conf = np.round(rng.random(40), 1 if ties == "orders" else 6)
    correct = (rng.random(40) < conf) * 1.0
    naive = _naive_rce(conf, correct, 40)
    for bins in (40, 41, 400, 4003):
        assert _naive_rce(conf, correct, bins) == pytest.approx(naive, abs=1e-12)
    kw = {"ties": ties, "n_orders": 50} if ties == "orders" else {}
    at_n = rank_calibration_error(conf, correct, n_bins=40, **kw)
    if ties == "block":
        assert at_n == pytest.approx(naive, abs=1e-12)
    for bins in (41, 4003, 10**9):
        assert rank_calibration_error(conf, correct, n_bins=bins, **kw) == at_n


def test_rce_hand_computed():
    conf = [0.1, 0.2, 0.3, 0.4]
    assert rank_calibration_error(conf, [0.0, 0.3, 0.6, 1.0], n_bins=4) == 0.0
    # Anti-ranked: gaps |0-1|, |1/3-2/3|, |2/3-1/3|, |1-0| -> mean 2/3
    assert rank_calibration_error(conf, [1.0, 0.6, 0.3, 0.0], n_bins=4) == pytest.approx(2 / 3)
    # Same result given as uncertainty.
    assert rank_calibration_error([-c for c in conf], [1.0, 0.6, 0.3, 0.0], n_bins=4,
                                  is_uncertainty=True) == pytest.approx(2 / 3)


def test_rce_with_ties_is_order_independent():
    rng = np.random.default_rng(7)
    conf = rng.integers(1, 6, size=400) / 5  # Likert confidences
    correct = (rng.uniform(size=400) < conf).astype(float)
    base = rank_calibration_error(conf, correct)
    for seed in range(5):
        perm = np.random.default_rng(seed).permutation(400)
        assert rank_calibration_error(conf[perm], correct[perm]) == pytest.approx(base, abs=1e-12)


def _authors_rce(correctness, uncertainties, num_bins=20):
    """Transcription of ``plugin_RCE_est`` (shuoli90/Rank-Calibration, p = 1, no kernel): rows
    are binned in the order ``argsort`` leaves them, so tied rows keep their input order."""
    correctness = np.asarray(correctness, float)
    n = len(correctness)
    a = correctness[np.argsort(uncertainties, kind="stable")]
    u_cdf = np.arange(n) / (n - 1)
    ends = [round(e) for e in np.linspace(0, n, num_bins + 1)]
    reg = np.zeros(n)
    for lo, hi in itertools.pairwise(ends):
        if hi > lo:
            reg[lo:hi] = np.mean(a[lo:hi])
    inv = np.array([(np.sum(reg[i] <= reg) - 1) / (n - 1) for i in range(n)])
    detied = np.zeros(n)
    for lo, hi in itertools.pairwise(ends):
        if hi > lo:
            detied[lo:hi] = np.mean(inv[lo:hi]) - (hi - lo - 1) / (2 * (n - 1))
    return np.sum(np.abs(detied - u_cdf)) / n


@pytest.mark.parametrize("n,bins", [(50, 5), (97, 20), (300, 7), (15, 20), (2, 20)])
def test_both_tie_rules_equal_the_authors_estimator_without_ties(n, bins):
    rng = np.random.default_rng(n)
    conf = rng.normal(size=n)
    correct = (rng.uniform(size=n) < 0.5 + 0.2 * np.tanh(conf)).astype(float)
    ref = _authors_rce(correct, -conf, bins)
    assert rank_calibration_error(conf, correct, n_bins=bins) == pytest.approx(ref, abs=1e-12)
    assert rank_calibration_error(conf, correct, n_bins=bins, ties="orders",
                                  n_orders=5) == pytest.approx(ref, abs=1e-12)


@pytest.mark.parametrize("ties", ["block", "orders"])
def test_rce_is_undefined_where_nothing_is_ranked(ties):
    """One confidence for every row (the issue's repro: the authors' estimator gives 0.484 on
    tie-block means, 0.343 over row orders) or one correctness (~0.5 from the confidences' CDF
    alone): NaN with a warning, as AUROC with one class, in every entry point."""
    rng = np.random.default_rng(0)
    conf, correct = rng.random(50), (rng.random(50) < 0.6).astype(float)
    for c, a in ((np.full(50, 0.6), correct), (conf, np.ones(50)), (conf, np.full(50, 0.5))):
        with pytest.warns(UndefinedMetricWarning, match="RCE is undefined"):
            assert np.isnan(rank_calibration_error(c, a, ties=ties, n_orders=50))
        with pytest.warns(UndefinedMetricWarning, match="RCE is undefined"):
            assert np.isnan(Ranking(c, a).rank_calibration_error())
    # evaluate_confidence reports it as undefined (NaN, shown as "-"), without a warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isnan(evaluate_confidence(conf, np.ones(50), n_resamples=0)["rce"])
    # two rows that differ in both are ranked: a number
    assert rank_calibration_error([0.2, 0.8], [0.0, 1.0]) == pytest.approx(0.0)


def _over_row_orders(conf, correct, n_orders=2000):
    values = []
    for k in range(n_orders):
        perm = np.random.default_rng(10_000 + k).permutation(len(conf))
        values.append(_authors_rce(correct[perm], -conf[perm]))
    return np.mean(values), np.std(values) / np.sqrt(n_orders)


@pytest.mark.parametrize("case", ["mostly tied", "likert"])
def test_rce_tie_rules_on_tied_data(case):
    """Near the issue's repro (50 identical confidences, now undefined: see below), 47 of 50
    tied. ``block`` is the estimator on tie-block mean correctness (0.391); ``orders`` is the
    authors' estimator averaged over row orders (0.336 +- 0.001 over 4,000 orders); they
    differ, and each rule gives its own number."""
    rng = np.random.default_rng(0)
    if case == "mostly tied":
        conf = np.full(50, 0.6)
        conf[:3] = 0.7
        correct = (rng.random(50) < 0.6).astype(float)
    else:
        conf = rng.integers(1, 6, 50).astype(float)
        correct = (rng.random(50) < conf / 6).astype(float)
    # block: exactly the authors' estimator on tie-block means
    means = pd.Series(correct).groupby(conf).transform("mean").to_numpy()
    block = rank_calibration_error(conf, correct)
    assert block == pytest.approx(_authors_rce(means, -conf), abs=1e-12)
    # orders: within four standard errors of the authors' average over row orders
    res = rank_calibration_error_orders(conf, correct, n_orders=4000, seed=1)
    ref, ref_se = _over_row_orders(conf, correct)
    assert abs(res.mean - ref) < 4 * np.hypot(res.std_error, ref_se)
    assert res.n_orders == 4000 and 0 < res.std_error < 0.002
    assert abs(block - res.mean) > 0.02  # the two rules are different numbers here
    if case == "mostly tied":
        assert block == pytest.approx(0.391, abs=5e-4)
        assert res.mean == pytest.approx(0.336, abs=4e-3)
    # seeded: the same seed gives the same value, and no global RNG is touched
    state = np.random.get_state()[1].copy()  # noqa: NPY002 - checking it is untouched
    again = rank_calibration_error(conf, correct, ties="orders", n_orders=4000, seed=1)
    assert again == res.mean and (np.random.get_state()[1] == state).all()  # noqa: NPY002
    with pytest.raises(ValueError, match="ties must be one of"):
        rank_calibration_error(conf, correct, ties="random")


def test_rce_prefers_the_informative_measure():
    rng = np.random.default_rng(11)
    p = rng.uniform(size=5000)
    correct = (rng.uniform(size=5000) < p).astype(float)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        good = rank_calibration_error(p, correct)
        bad = rank_calibration_error(-p, correct)
    assert good < 0.05 < 0.5 < bad


def _lm_polygraph_area(confidence, target):
    """LM-Polygraph's prediction-rejection area formula (ue_metrics/pred_rej_area.py) with the
    most confident first; ties fall in argsort's order."""
    order = np.argsort(-np.asarray(confidence), kind="stable")
    return float(np.sum(np.cumsum(np.asarray(target)[order]) / np.arange(1, len(order) + 1))
                 / len(order))


@pytest.mark.parametrize("kind", ["continuous", "likert", "all tied", "pairs"])
def test_auarc_fast_path_equals_the_curve_and_the_peers(kind):
    """AUARC from one sort and tie blocks equals the mean (and trapezoid) of the full
    accuracy-rejection curve; without ties it equals LM-Polygraph's formula exactly, with ties
    the peer's average over row orders."""
    rng = np.random.default_rng(3)
    n = 400
    conf = {"continuous": rng.uniform(size=n), "likert": rng.integers(1, 6, n) / 5,
            "all tied": np.full(n, 0.4), "pairs": np.repeat(rng.uniform(size=n // 2), 2)}[kind]
    target = rng.uniform(size=n) if kind == "pairs" else (rng.uniform(size=n) < conf)
    target = target.astype(float)
    _, acc = accuracy_rejection_curve(conf, target)
    assert auarc(conf, target) == pytest.approx(acc.mean(), abs=1e-12)
    trapezoid = (acc.sum() - 0.5 * (acc[0] + acc[-1])) / (n - 1)
    assert auarc(conf, target, integration="trapezoid") == pytest.approx(trapezoid, abs=1e-12)
    _, risk = risk_coverage_curve(conf, 1 - target)
    assert aurc(conf, 1 - target) == pytest.approx(risk.mean(), abs=1e-12)
    if kind == "continuous":
        assert auarc(conf, target) == pytest.approx(_lm_polygraph_area(conf, target), abs=1e-12)
    else:
        perms = [np.random.default_rng(k).permutation(n) for k in range(300)]
        peer = np.mean([_lm_polygraph_area(conf[p], target[p]) for p in perms])
        spread = np.std([_lm_polygraph_area(conf[p], target[p]) for p in perms])
        assert abs(auarc(conf, target) - peer) <= 4 * spread / np.sqrt(300) + 1e-12


def test_auarc_input_order_ties_follow_the_rows():
    conf = np.array([0.5, 0.5, 0.9])
    correct = np.array([0.0, 1.0, 1.0])
    # input order: 0.9 first, then the tied rows in the order given
    assert auarc(conf, correct, ties="input-order") == pytest.approx((1 + 0.5 + 2 / 3) / 3)
    assert auarc(conf[[1, 0, 2]], correct[[1, 0, 2]], ties="input-order") == pytest.approx(
        (1 + 1 + 2 / 3) / 3)
    assert auarc(conf, correct) == pytest.approx((1 + 0.75 + 2 / 3) / 3)  # the average
    with pytest.raises(ValueError, match="ties must be"):
        auarc(conf, correct, ties="random")


def _argsort_path(monkeypatch):
    from confeval.metrics import selective

    monkeypatch.setattr(selective, "_sort_keys", lambda confidence, target: None)


@pytest.mark.parametrize("transform", [
    lambda c: c, lambda c: np.round(c, 2), lambda c: np.round(c * 4) / 4, lambda c: -50 * c,
    lambda c: c * 1e300, lambda c: np.r_[c[:-1], -0.0], lambda c: c * 5e-324,
    lambda c: c - 0.5, lambda c: np.log(c)])
def test_the_direct_sort_equals_the_argsort_path_bit_for_bit(transform, monkeypatch):
    """AUARC/AURC/PRR sort (confidence bits << 1 | correct) directly when that is exact (0/1
    targets; confidences of one sign, scaled by a power of two into [0, 2)); the answer is the
    argsort path's to the last bit, ties included, and mixed signs or subnormals fall back."""
    rng = np.random.default_rng(5)
    conf = transform(rng.uniform(0.01, 1, size=5000))
    correct = (rng.uniform(size=5000) < 0.6).astype(float)
    def all_four():
        return (auarc(conf, correct), aurc(conf, 1 - correct),
                prediction_rejection_ratio(conf, correct),
                auarc(conf, correct, integration="trapezoid"))

    fast = all_four()
    _argsort_path(monkeypatch)
    assert fast == all_four()


def test_soft_targets_take_the_argsort_path():
    from confeval.metrics.selective import _sort_keys

    assert _sort_keys(np.array([0.2, 0.4]), np.array([0.5, 1.0])) is None
    assert _sort_keys(np.array([-0.2, 0.4]), np.array([0.0, 1.0])) is None
    assert _sort_keys(np.array([0.2, 0.4]), np.array([0.0, 1.0])) is not None


def test_harmonic_numbers_equal_exact_fractions_and_scipy_digamma():
    """The tie blocks' harmonic sums without scipy.special: exact sums for small k, digamma
    to 1e-15 relative far beyond 10^6 rows."""
    from fractions import Fraction

    from scipy.special import digamma

    from confeval.metrics.selective import harmonic_numbers

    exact = [float(sum(Fraction(1, j) for j in range(1, n + 1))) for n in range(60)]
    np.testing.assert_allclose(harmonic_numbers(np.arange(60.0)), exact, rtol=1e-15, atol=0)
    k = np.unique(np.geomspace(16, 1e9, 5000).round())
    np.testing.assert_allclose(harmonic_numbers(k), digamma(k + 1) + np.euler_gamma,
                               rtol=1e-15, atol=0)


def test_bin_totals_at_or_above_equal_the_pairwise_definition():
    """RCE's "bins whose mean is at least this bin's", now from one sort per row: the same
    totals as comparing every pair of bins, with ties among the means and empty bins."""
    from confeval.metrics.selective import _sizes_at_or_above

    rng = np.random.default_rng(7)
    for _ in range(200):
        rows, bins = rng.integers(1, 5), rng.integers(1, 40)
        means = np.round(rng.random((rows, bins)), rng.integers(0, 3))   # 0-2 decimals: ties
        sizes = rng.integers(0, 4, size=bins).astype(float)
        means[:, sizes == 0] = np.nan
        used = sizes > 0
        pairwise = ((means[:, None, :] >= means[:, :, None]) * np.where(used, sizes, 0.0)
                    ).sum(axis=2)
        got = _sizes_at_or_above(means, np.where(used, sizes, 0.0))
        assert np.array_equal(got[:, used], pairwise[:, used])


def test_rce_over_orders_with_thousands_of_bins_in_bounded_memory():
    """``ties="orders"`` with 3,000 bins: comparing every pair of bins took 3,000 x 3,000
    floats (72 MB) per order; the sort keeps the peak small, and the value is the authors'
    estimator (no ties, so every order gives it)."""
    import tracemalloc

    rng = np.random.default_rng(3)
    n, bins = 6000, 3000
    conf = rng.normal(size=n)
    correct = (rng.uniform(size=n) < 0.5 + 0.2 * np.tanh(conf)).astype(float)
    tracemalloc.start()
    try:
        got = rank_calibration_error(conf, correct, n_bins=bins, ties="orders", n_orders=3)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20e6
    assert got == pytest.approx(_authors_rce(correct, -conf, bins), abs=1e-12)
