"""The batch test of exchangeability (confeval.validity.twosample): statistics and exact or
asymptotic p-values against scipy, the tied-data exact p-value against full enumeration, the
permutation p-value (+1 correction) by hand, and its level by simulation on seeded data."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
from scipy import stats

from confeval.validity import (
    conformal_p_values,
    ks_exact_p_value,
    ks_statistic,
    monte_carlo_p_value,
    rank_sum_statistic,
    two_sample_test,
)
from confeval.validity.twosample import P_FLOOR

SIZES = [(1, 1), (3, 2), (10, 7), (30, 20), (50, 50), (200, 50), (1000, 120), (2000, 200)]


def _se(rate: float, k: int) -> float:
    return math.sqrt(rate * (1 - rate) / k)


def _enumerated_ks_p(x: np.ndarray, y: np.ndarray) -> float:
    """P(D* >= D_obs) over every way of choosing which len(y) pooled values are the batch."""
    z = np.concatenate([x, y])
    big_n, m = z.size, y.size
    observed = ks_statistic(x, y)
    hits = total = 0
    for idx in itertools.combinations(range(big_n), m):
        mask = np.zeros(big_n, dtype=bool)
        mask[list(idx)] = True
        total += 1
        hits += ks_statistic(z[~mask], z[mask]) >= observed - 1e-12
    return hits / total


@pytest.mark.parametrize("n,m", SIZES)
def test_ks_statistic_equals_scipys(n, m):
    rng = np.random.default_rng(n * 1000 + m)
    for x, y in [(rng.normal(size=n), rng.normal(0.3, size=m)),
                 (np.round(rng.uniform(size=n) * 20) / 20, np.round(rng.uniform(size=m) * 20)
                  / 20)]:
        assert ks_statistic(x, y) == pytest.approx(stats.ks_2samp(x, y).statistic, abs=1e-15)


@pytest.mark.parametrize("n,m", SIZES)
def test_exact_ks_without_ties_equals_scipys_exact(n, m):
    rng = np.random.default_rng(7 + n + m)
    x, y = rng.normal(size=n), rng.normal(0.25, size=m)
    expected = stats.ks_2samp(x, y, method="exact").pvalue
    # our lattice recursion (written independently of scipy's formula) ...
    assert ks_exact_p_value(x, y) == pytest.approx(expected, rel=1e-9, abs=1e-15)
    # ... and the test's exact p-value (which calls scipy without ties)
    r = two_sample_test(x, y, method="exact")
    assert r.method == "exact" and not r.ties
    assert r.p_value == pytest.approx(expected, rel=1e-12)


def test_exact_ks_with_ties_equals_full_enumeration():
    """With ties the exact permutation p-value is computed given the ties: checked against
    every arrangement (up to C(14, 6) = 3003 of them) of small verbalised-grid samples."""
    rng = np.random.default_rng(3)
    for n, m in [(4, 2), (6, 4), (8, 6), (7, 7)]:
        for _ in range(3):
            x = rng.integers(0, 4, size=n) / 4
            y = rng.integers(1, 5, size=m) / 4
            expected = _enumerated_ks_p(x, y)
            assert ks_exact_p_value(x, y) == pytest.approx(expected, rel=1e-12, abs=1e-15)
            r = two_sample_test(x, y, method="exact")
            if r.ties and r.value > 0:
                assert r.p_value == pytest.approx(expected, rel=1e-12)


def test_ties_by_hand():
    """Tied values move both empirical CDFs at once: calibration [0.5, 0.5, 1.0], batch [0.5,
    1.0]: at 0.5 the CDFs are 2/3 and 1/2, at 1.0 both 1, so D = 1/6 (splitting the tie block
    would not). Given the ties the batch is two of the pooled {0.5 x3, 1.0 x2}: {0.5, 0.5} in
    3 ways (D* = 1 - 1/3 = 2/3), {0.5, 1.0} in 6 (D* = 1/6), {1.0, 1.0} in 1 (D* = 1): every
    arrangement has D* >= 1/6, so p = 1."""
    cal, batch = [0.5, 0.5, 1.0], [0.5, 1.0]
    assert ks_statistic(cal, batch) == pytest.approx(1 / 6)
    assert ks_exact_p_value(cal, batch) == pytest.approx(1.0)
    # calibration [0, 0, 0], batch [1]: D = 1, reached only when the 1 is the batch: p = 1/4
    assert ks_exact_p_value([0.0, 0.0, 0.0], [1.0]) == pytest.approx(0.25, abs=1e-15)
    # the no-ties formula overstates the p-value of tied data (conservative, less powerful)
    rng = np.random.default_rng(11)
    x, y = np.round(rng.beta(5, 2, 300) * 20) / 20, np.round(rng.beta(4, 2, 80) * 20) / 20
    assert ks_exact_p_value(x, y) < stats.ks_2samp(x, y, method="exact").pvalue


@pytest.mark.parametrize("n,m", [(200, 50), (1000, 120), (5000, 3000), (20000, 15000)])
def test_asymptotic_ks_equals_scipys_asymp(n, m):
    rng = np.random.default_rng(n + m)
    x, y = rng.normal(size=n), rng.normal(0.05, size=m)
    r = two_sample_test(x, y, method="asymptotic")
    assert r.p_value == pytest.approx(stats.ks_2samp(x, y, method="asymp").pvalue, rel=1e-12)


def test_auto_method_is_exact_where_cheap_and_asymptotic_beyond():
    rng = np.random.default_rng(0)
    assert two_sample_test(rng.normal(size=10_000), rng.normal(size=100)).method == "exact"
    assert two_sample_test(rng.normal(size=10_001), rng.normal(size=100)).method == "asymptotic"
    tied = np.round(rng.uniform(size=30_000), 2)
    assert two_sample_test(tied[:15_000], tied[15_000:17_000]).method == "exact"
    assert two_sample_test(tied[:18_000], tied[18_000:22_000]).method == "asymptotic"
    assert two_sample_test(rng.normal(size=50), rng.normal(size=50),
                           statistic="rank_sum").method == "exact"
    assert two_sample_test(rng.normal(size=51), rng.normal(size=50),
                           statistic="rank_sum").method == "asymptotic"


@pytest.mark.parametrize("n,m", SIZES)
def test_rank_sum_statistic_is_the_mean_conformal_p_value_and_mann_whitney(n, m):
    rng = np.random.default_rng(n + 3 * m)
    x, y = np.round(rng.normal(size=n), 1), np.round(rng.normal(0.3, size=m), 1)
    u1 = stats.mannwhitneyu(x, y).statistic           # pairs calibration > batch, ties 1/2
    t = rank_sum_statistic(x, y)
    assert t == pytest.approx((u1 + m / 2) / (m * (n + 1)), rel=1e-13)
    assert t == pytest.approx(conformal_p_values(x, y, ties="mid").mean(), rel=1e-13)


@pytest.mark.parametrize("n,m", [(1, 1), (3, 2), (8, 5), (20, 30), (50, 50), (2500, 1)])
def test_exact_rank_sum_without_ties_equals_scipys_exact(n, m):
    rng = np.random.default_rng(n * 7 + m)
    x, y = rng.normal(size=n), rng.normal(0.5, size=m)
    r = two_sample_test(x, y, statistic="rank_sum", method="exact")
    assert r.p_value == pytest.approx(stats.mannwhitneyu(x, y, method="exact").pvalue,
                                      rel=1e-10)


@pytest.mark.parametrize("n,m", [(30, 20), (200, 50), (4000, 800)])
def test_asymptotic_rank_sum_with_ties_equals_scipys(n, m):
    rng = np.random.default_rng(n + m)
    x, y = np.round(rng.beta(5, 2, n) * 20) / 20, np.round(rng.beta(4, 2, m) * 20) / 20
    r = two_sample_test(x, y, statistic="rank_sum")
    assert r.method == "asymptotic" and r.ties
    expected = stats.mannwhitneyu(x, y, method="asymptotic").pvalue
    assert r.p_value == pytest.approx(expected, rel=1e-12)
    with pytest.raises(ValueError, match="without ties"):
        two_sample_test(x, y, statistic="rank_sum", method="exact")


def test_conformal_p_values_by_hand():
    cal = [1.0, 2.0, 2.0, 3.0]
    # 2.0: one value above, two equal (+ itself): (1 + theta * 3) / 5
    assert conformal_p_values(cal, [2.0], ties="conservative").tolist() == [0.8]
    assert conformal_p_values(cal, [2.0], ties="mid").tolist() == [0.5]
    u = np.random.default_rng(4).uniform()
    assert conformal_p_values(cal, [2.0], ties="randomised", seed=4).tolist() == \
        [(1 + u * 3) / 5]


def test_monte_carlo_p_value_by_hand():
    # (1 + #{T_b >= T_obs}) / (1 + B): 3 >= 3 and 5 >= 3
    assert monte_carlo_p_value(3.0, [1.0, 3.0, 5.0, 2.0]) == pytest.approx(3 / 5)
    assert monte_carlo_p_value(9.0, [1.0, 3.0, 5.0, 2.0]) == pytest.approx(1 / 5)   # never 0
    assert monte_carlo_p_value(0.0, [1.0, 3.0]) == pytest.approx(1.0)


def test_permutation_p_value_by_hand():
    """Complete separation of 20 + 20 values: no random arrangement of the 99 reaches D = 1
    (chance 2 / C(40, 20) ~ 1e-11 each), so p = (1 + 0) / (99 + 1) = 0.01 exactly; the exact
    p-value is 2 / C(40, 20)."""
    cal, batch = [0.0] * 10 + [0.1] * 10, [1.0] * 20
    for statistic in ("ks", "rank_sum"):
        r = two_sample_test(cal, batch, statistic=statistic, method="permutation",
                            n_permutations=99, seed=0)
        assert r.p_value == 0.01 and not r.holds and r.informative
        assert r.n_permutations == 99 and r.seed == 0
    assert two_sample_test(cal, batch).p_value == pytest.approx(2 / math.comb(40, 20),
                                                                rel=1e-9)
    # 19 permutations cannot go below 1/20 = 0.05: the test says it has no information
    r = two_sample_test(cal, batch, method="permutation", n_permutations=18, seed=0)
    assert r.p_value == pytest.approx(1 / 19) and not r.informative and "permutations" in \
        r.note
    # the p-value is always (1 + count) / (B + 1)
    rng = np.random.default_rng(2)
    r = two_sample_test(rng.normal(size=40), rng.normal(size=30), method="permutation",
                        n_permutations=250, seed=3)
    assert abs(r.p_value * 251 - round(r.p_value * 251)) < 1e-9


def test_monte_carlo_p_value_equals_mapies_permutation_p_value():
    """Where the definitions coincide: MAPIE 1.6's ``PValuePermutationTest`` reports
    (1 + #{T_b >= T_obs}) / (B + 1) over its own permutations (``RandomState(seed)``) of its
    change-point statistic. The same statistics through ``monte_carlo_p_value`` give its
    p-value exactly (the two-sample statistics themselves have no MAPIE counterpart)."""
    perm = pytest.importorskip("mapie.exchangeability_testing.permutations",
                               reason="MAPIE is not installed (pip install '.[dev]')")
    rng = np.random.default_rng(3)
    for scores in (rng.normal(size=60), np.concatenate([rng.normal(size=30),
                                                        rng.normal(0.8, size=30)])):
        test = perm.PValuePermutationTest(random_state=5, num_permutations=199, warn=False)
        test._compute_non_conformity_scores = lambda X, y, s=scores: s
        theirs = float(test.run(np.zeros((60, 1)), np.zeros(60)).p_values[-1])
        statistic = perm.MaxSplitMeanDifferenceTestStatistic()
        state = np.random.RandomState(5)   # MAPIE's generator, to share its draws
        null = [statistic(scores[state.permutation(60)]) for _ in range(199)]
        assert monte_carlo_p_value(statistic(scores), null) == theirs


def test_no_information_is_said_never_p_zero():
    r = two_sample_test([0.7] * 50, [0.7] * 20)
    assert r.p_value == 1.0 and r.holds and not r.informative and "same" in r.note
    r = two_sample_test([0.1, 0.2], [0.9])               # 2 / C(3, 1) > 0.05: cannot reject
    assert not r.informative and r.holds
    # a p-value that underflows is reported as the smallest normal float, never 0
    r = two_sample_test(np.linspace(0, 1, 20_000), np.linspace(2, 3, 20_000))
    assert r.method == "asymptotic" and r.p_value == P_FLOOR > 0
    json.dumps(r.to_dict(), allow_nan=False)


@pytest.mark.parametrize("statistic", ["ks", "rank_sum"])
def test_permutation_p_value_converges_to_the_exact_one(statistic):
    """B = 4,000 permutations land within 4 Monte Carlo SE of the exact p-value (KS given the
    ties; the rank sum without ties)."""
    if statistic == "ks":
        rng = np.random.default_rng(1)
        x, y = np.round(rng.beta(5, 2, 150) * 20) / 20, np.round(rng.beta(4, 2, 40) * 20) / 20
    else:
        rng = np.random.default_rng(3)
        x, y = rng.normal(size=40), rng.normal(0.3, size=25)
    exact = two_sample_test(x, y, statistic=statistic, method="exact").p_value
    mc = two_sample_test(x, y, statistic=statistic, method="permutation",
                         n_permutations=4000, seed=1).p_value
    assert 0.02 < exact < 0.5
    assert abs(mc - exact) <= 4 * _se(exact, 4000) + 1 / 4001


def test_permutations_are_seeded_and_touch_no_global_rng():
    rng = np.random.default_rng(8)
    x, y = rng.normal(size=60), rng.normal(0.3, size=30)
    state = np.random.get_state()[1].copy()  # noqa: NPY002 - checking the legacy global RNG
    a = two_sample_test(x, y, method="permutation", n_permutations=200, seed=4).p_value
    b = two_sample_test(x, y, method="permutation", n_permutations=200, seed=4).p_value
    c = two_sample_test(x, y, method="permutation", n_permutations=200, seed=5).p_value
    assert a == b and a != c
    assert (np.random.get_state()[1] == state).all()  # noqa: NPY002
    # the test is symmetric in its two samples (same arrangements drawn)
    assert two_sample_test(y, x, method="permutation", n_permutations=200, seed=4).p_value == a


@pytest.mark.parametrize("data", ["continuous", "verbalised"])
def test_level_under_exchangeability_on_simulated_data(data):
    """1,000 seeded draws of 300 calibration and 50 batch values from one distribution: every
    method rejects at alpha = 0.05 at most alpha + 3 SE of the time (SE of a rate of 0.05 over
    1,000 draws: 0.0069), permutations over 300 draws (B = 199)."""
    alpha, draws = 0.05, 1000
    rng = np.random.default_rng(2024 if data == "continuous" else 2025)
    rejected = {"ks exact": 0, "ks asymptotic": 0, "rank_sum": 0, "ks permutation": 0}
    for i in range(draws):
        z = rng.beta(5, 2, size=350)
        if data == "verbalised":
            z = np.round(z * 20) / 20
        cal, batch = z[:300], z[300:]
        rejected["ks exact"] += two_sample_test(cal, batch, method="exact").p_value <= alpha
        rejected["ks asymptotic"] += two_sample_test(cal, batch,
                                                     method="asymptotic").p_value <= alpha
        rejected["rank_sum"] += two_sample_test(cal, batch,
                                                statistic="rank_sum").p_value <= alpha
        if i < 300:
            rejected["ks permutation"] += two_sample_test(
                cal, batch, method="permutation", n_permutations=199, seed=i).p_value <= alpha
    print(f"\n{data}: rejection rates " + ", ".join(
        f"{name} {count / (300 if name == 'ks permutation' else draws):.3f}"
        for name, count in rejected.items()))
    for name, count in rejected.items():
        k = 300 if name == "ks permutation" else draws
        assert count / k <= alpha + 3 * _se(alpha, k), (name, count / k)
    # exact given the ties: not conservative to the point of uselessness on a 0.05 grid
    assert rejected["ks exact"] / draws >= 0.02


def test_errors_name_the_argument():
    with pytest.raises(ValueError, match="statistic"):
        two_sample_test([1.0], [2.0], statistic="t")
    with pytest.raises(ValueError, match="method"):
        two_sample_test([1.0], [2.0], method="bootstrap")
    with pytest.raises(ValueError, match="empty"):
        two_sample_test([], [2.0])
    with pytest.raises(ValueError, match="non-finite"):
        two_sample_test([1.0, float("nan")], [2.0])
    with pytest.raises(ValueError, match="alpha"):
        two_sample_test([1.0], [2.0], alpha=1.5)
