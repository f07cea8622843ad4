"""Position and length bias tests (:mod:`confeval.judge.bias`) against independent references:
counts by hand; p-values and exact intervals against scipy's binomtest; the signed-rank
p-value against the permutation distribution enumerated by hand; the length slopes against
statsmodels' least squares, their bootstrap against a plain loop over the same resamples. And
by simulation: a judge with a known first-slot preference of 0.65 is covered by the interval
in at least 90% of 200 seeds; an unbiased judge's tests reject at most at alpha + 3 SE.

Measured (these seeds, 150 items each): the 95% interval of the first-slot share covered 0.65
in 197 of 200 seeds (98.5%: the interval treats an item's two verdicts as independent, and the
simulated judge's verdicts, given the item, are independent with varying probabilities, for
which the binomial interval is conservative); at alpha = 0.05 the unbiased judge's binomial
test rejected in 5 of 400 seeds (1.25%) and the sign test in 13 (3.25%); the bound asserted is
alpha + 3 SE = 8.3%."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from confeval.judge import length_bias, position_bias, slot_confidence_test
from confeval.metrics import percentile_interval, resample_counts
from confeval.simulate import simulate_lengths, simulate_pairwise

AB = np.array(["a", "a", "b", "a", "tie", "b", "a"])
BA = np.array(["a", "b", "a", "b", "a", "b", "tie"])


def test_position_counts_by_hand():
    res = position_bias(AB, BA)
    assert res["n_items"] == 7 and res["ties"] == {"ab": 1, "ba": 1}
    # changed: items 2, 3, 4, 5, 7 (a tie against a pick counts as a change)
    assert res["flips"]["count"] == 5
    # first-slot picks: AB picks a in items 1, 2, 4, 7 (4); BA picks b in items 2, 4, 6 (3)
    assert (res["first_slot"]["k"], res["first_slot"]["n"]) == (7, 12)
    ref = stats.binomtest(7, 12, 0.5)
    ci = ref.proportion_ci(0.95, method="exact")
    assert res["first_slot"]["p_value"] == pytest.approx(ref.pvalue, abs=1e-15)
    assert (res["first_slot"]["low"], res["first_slot"]["high"]) == pytest.approx(
        (ci.low, ci.high), abs=1e-15)
    # changed picks without a tie: items 2 and 4 first both times, item 3 second both times
    assert (res["sign_test"]["k"], res["sign_test"]["n"]) == (2, 3)
    assert res["sign_test"]["p_value"] == pytest.approx(stats.binomtest(2, 3).pvalue)


def test_a_test_without_information_says_so_and_prints_no_p():
    res = position_bias(["a", "b", "a"], ["a", "b", "a"])   # never changes its pick
    assert res["sign_test"]["p_value"] is None and "no information" in res["sign_test"]["note"]
    ties = position_bias(["tie", "tie"], ["tie", "tie"])
    assert ties["first_slot"]["p_value"] is None and ties["first_slot"]["share"] is None
    slot = slot_confidence_test([0.7, 0.6], [0.7, 0.6])
    assert slot["wilcoxon"]["p_value"] is None and slot["sign"]["p_value"] is None
    assert "no test has information" in slot["note"]
    with pytest.raises(ValueError, match="at least two"):
        position_bias(["a"], ["b"])
    with pytest.raises(ValueError, match="not a, b or tie"):
        position_bias(["a", "first"], ["b", "a"])


def _signed_rank_p(d: np.ndarray) -> float:
    """The exact two-sided signed-rank p-value by enumerating every sign assignment."""
    ranks = stats.rankdata(np.abs(d))
    observed = ranks[d > 0].sum()
    total = ranks.sum()
    sums = np.array([sum(r for r, s in zip(ranks, signs) if s)
                     for signs in itertools.product([0, 1], repeat=d.size)])
    extreme = min(observed, total - observed)
    return min(1.0, 2 * np.mean(sums <= extreme))


def test_confidence_by_slot_exact_signed_rank_against_enumeration():
    rng = np.random.default_rng(4)
    first = rng.uniform(0.5, 1, 12)
    second = first - rng.normal(0.05, 0.1, 12)
    res = slot_confidence_test(first, second, n_resamples=0)
    assert res["wilcoxon"]["method"] == "exact"
    assert res["wilcoxon"]["p_value"] == pytest.approx(_signed_rank_p(first - second),
                                                       abs=1e-12)
    d = first - second
    assert res["sign"]["p_value"] == pytest.approx(
        stats.binomtest(int((d > 0).sum()), d.size).pvalue)
    assert res["mean_difference"]["estimate"] == pytest.approx(d.mean())


def test_confidence_by_slot_pairs_the_same_pick():
    # item 1: a picked in both orders, surer when first (0.9 vs 0.6); item 2: b both times,
    # first in BA (0.8) vs second in AB (0.7); item 3 changed: left out
    res = position_bias(["a", "b", "a"], ["a", "b", "b"], conf_ab=[0.9, 0.7, 0.5],
                        conf_ba=[0.6, 0.8, 0.5], n_resamples=0)
    slot = res["confidence_by_slot"]
    assert slot["n"] == 2
    assert (slot["mean_first"], slot["mean_second"]) == pytest.approx((0.85, 0.65))


def test_longer_answers_and_agreement_by_hand():
    res = position_bias(["a", "b", "a"], ["a", "a", "b"], length_a=[10, 3, 5],
                        length_b=[4, 9, 5], human=["a", "b", ""])
    # lengths differ on items 1 (a longer) and 2 (b longer): picks a, a (item 1) and b, a
    # (item 2): 3 of 4 pick the longer
    assert (res["longer"]["judge"]["k"], res["longer"]["judge"]["n"]) == (3, 4)
    assert (res["longer"]["human"]["k"], res["longer"]["human"]["n"]) == (2, 2)
    assert (res["agreement"]["k"], res["agreement"]["n"]) == (3, 4)


def _first_slot(frame):
    return position_bias(frame["verdict_ab"], frame["verdict_ba"], n_resamples=0)


def test_a_known_first_slot_preference_is_covered_in_at_least_90_percent_of_seeds():
    covered = 0
    for seed in range(200):
        res = _first_slot(simulate_pairwise(150, "first-slot", seed=seed))["first_slot"]
        covered += res["low"] <= 0.65 <= res["high"]
    assert covered >= 180, covered      # measured: 197


def test_an_unbiased_judge_is_rejected_at_most_at_alpha_plus_three_se():
    alpha, seeds = 0.05, 400
    limit = alpha + 3 * np.sqrt(alpha * (1 - alpha) / seeds)
    binomial = sign = 0
    for seed in range(seeds):
        res = _first_slot(simulate_pairwise(150, "unbiased", seed=1000 + seed))
        binomial += res["first_slot"]["p_value"] < alpha
        sign += res["sign_test"]["p_value"] is not None and res["sign_test"]["p_value"] < alpha
    assert binomial / seeds <= limit and sign / seeds <= limit, (binomial, sign)


# ------------------------------------------------------------------ length
statsmodels = pytest.importorskip("statsmodels.formula.api", reason="statsmodels (the "
                                  "reference) is not installed")


def _frame(seed=0, n=300):
    import pandas as pd

    rng = np.random.default_rng(seed)
    human = rng.integers(1, 6, n).astype(float)
    length = rng.integers(10, 400, n).astype(float)
    judge = human + 0.003 * length + rng.normal(0, 0.8, n)
    conf = rng.uniform(size=n) + 0.0005 * length
    return pd.DataFrame({"f": judge, "h": human, "L": length, "c": conf, "e": judge - human})


def test_length_slopes_equal_least_squares():
    df = _frame()
    res = length_bias(df.f, df.h, df.L, confidence=df.c, per=100, n_resamples=0)
    ols = statsmodels.ols
    expected = {"judge_slope_at_fixed_human": ols("f ~ L + C(h)", df).fit().params["L"],
                "confidence_slope_at_fixed_human": ols("c ~ L + C(h)", df).fit().params["L"],
                "judge_slope": ols("f ~ L", df).fit().params["L"],
                "human_slope": ols("h ~ L", df).fit().params["L"],
                "excess_slope": ols("e ~ L", df).fit().params["L"]}
    for key, value in expected.items():
        assert res[key]["estimate"] == pytest.approx(100 * value, abs=1e-10), key
    assert res["control"] == "levels"
    df["hc"] = df.h + np.linspace(0, 0.5, len(df))            # 300 distinct human values
    res = length_bias(df.f, df.hc, df.L, n_resamples=0)
    assert res["control"] == "linear"
    assert res["judge_slope_at_fixed_human"]["estimate"] == pytest.approx(
        100 * ols("f ~ L + hc", df).fit().params["L"], abs=1e-10)


def test_length_bootstrap_is_a_loop_over_the_same_resamples():
    df = _frame(seed=1, n=120)
    res = length_bias(df.f, df.h, df.L, n_resamples=200, seed=3)
    reps = []
    for block in resample_counts(120, 200, np.random.default_rng(3), scheme="multinomial"):
        for counts in block:
            idx = np.repeat(np.arange(120), counts.astype(int))
            sample = df.iloc[idx]
            reps.append(statsmodels.ols("f ~ L + C(h)", sample).fit().params["L"] * 100)
    low, high, _ = percentile_interval(np.asarray(reps), 0.95)
    got = res["judge_slope_at_fixed_human"]
    assert (got["low"], got["high"]) == pytest.approx((low, high), abs=1e-9)


def test_a_verbose_judge_is_found_and_an_unbiased_one_is_not():
    verbose = simulate_lengths(1500, "verbose", seed=4)
    res = length_bias(verbose.judge_score, verbose.gt_score, verbose.words,
                      confidence=verbose.confidence, n_resamples=300)
    assert res["judge_slope_at_fixed_human"]["low"] > 0
    assert res["confidence_slope_at_fixed_human"]["low"] > 0
    fair = simulate_lengths(1500, "unbiased", seed=4)
    res = length_bias(fair.judge_score, fair.gt_score, fair.words, n_resamples=300)
    slope = res["judge_slope_at_fixed_human"]
    assert slope["low"] <= 0 <= slope["high"]


def test_length_without_information_is_refused():
    with pytest.raises(ValueError, match="same length"):
        length_bias([1, 2, 3], [1, 2, 3], [5, 5, 5])
    with pytest.raises(ValueError, match="at least three"):
        length_bias([1, 2], [1, 2], [5, 6])
