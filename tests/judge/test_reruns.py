"""Rerun variability (:mod:`confeval.judge.reruns`) against independent references:
Krippendorff's alpha against the worked example of Krippendorff (2011) and the ``krippendorff``
package (test-only), its vectorised bootstrap against a plain loop over the same resamples;
flip rates, pairwise disagreement and the majority rule hand-computed; exact intervals against
scipy's binomtest; a deterministic judge has no flip; and the pairwise disagreement of a
simulated sampling judge covers its known value 1 - sum p^2."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from confeval.judge import (
    exact_interval,
    judge_answers,
    krippendorff_alpha,
    rerun_confidence,
    rerun_variability,
    score_confidence,
)
from confeval.metrics import percentile_interval, resample_counts
from confeval.simulate import simulate_reruns

nan = math.nan

# Krippendorff (2011), "Computing Krippendorff's alpha-reliability", section C: four coders,
# twelve units, values 1-5, missing values.
PAPER = np.array([[1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
                  [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
                  [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
                  [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan]])


@pytest.mark.parametrize("level, published", [("nominal", 0.743), ("ordinal", 0.815),
                                              ("interval", 0.849)])
def test_alpha_reproduces_krippendorffs_worked_example(level, published):
    assert round(krippendorff_alpha(PAPER, level=level)["estimate"], 3) == published


def test_alpha_of_two_coders_by_hand():
    # values 1,2,3,3 and 1,2,3,4: interval; o has 2 on each of (1,1),(2,2), (3,3) 2 + 1 and
    # the pair (3,4) twice as 1: D_o = 2 * 1 / 8; n_c = (2, 2, 3, 1), D_e by hand = 162/56
    d_o = 2 * 1 / 8
    n_c = {1: 2, 2: 2, 3: 3, 4: 1}
    d_e = sum(n_c[c] * n_c[k] * (c - k) ** 2 for c in n_c for k in n_c) / (8 * 7)
    got = krippendorff_alpha([[1, 2, 3, 3], [1, 2, 3, 4]], level="interval")["estimate"]
    assert got == pytest.approx(1 - d_o / d_e, abs=1e-12)


krippendorff = pytest.importorskip("krippendorff", reason="the krippendorff package (the "
                                   "reference) is a test-only dependency: pip install '.[dev]'")


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
@pytest.mark.parametrize("seed", range(5))
def test_alpha_equals_the_krippendorff_package(level, seed):
    rng = np.random.default_rng(seed)
    coders, units = int(rng.integers(2, 8)), int(rng.integers(5, 300))
    signal = rng.integers(1, 6, size=units)
    data = np.clip(signal + rng.integers(-1, 2, size=(coders, units)) * (rng.uniform(
        size=(coders, units)) < 0.4), 1, 5).astype(float)
    data[rng.uniform(size=data.shape) < 0.15] = nan
    ours = krippendorff_alpha(data, level=level)["estimate"]
    theirs = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
    assert ours == pytest.approx(theirs, abs=1e-10)


def test_the_alpha_bootstrap_is_a_loop_over_the_same_resamples():
    rng = np.random.default_rng(3)
    data = np.clip(rng.integers(1, 6, size=40) + rng.integers(-1, 2, size=(4, 40)), 1, 5)
    data = data.astype(float)
    got = krippendorff_alpha(data, level="ordinal", n_resamples=300, seed=7)
    # the same draws, one resample at a time, each alpha by the package
    reps = []
    for block in resample_counts(40, 300, np.random.default_rng(7), scheme="multinomial",
                                 block=200):
        for counts in block:
            idx = np.repeat(np.arange(40), counts.astype(int))
            reps.append(krippendorff.alpha(reliability_data=data[:, idx],
                                           level_of_measurement="ordinal"))
    low, high, _ = percentile_interval(np.asarray(reps), 0.95)
    assert (got["low"], got["high"]) == pytest.approx((low, high), abs=1e-10)


def test_alpha_without_variation_is_undefined_and_says_so():
    res = krippendorff_alpha(np.full((3, 10), 4.0), n_resamples=100)
    assert res["estimate"] is None and res["low"] is None and "undefined" in res["note"]
    assert krippendorff_alpha([[1, nan], [nan, 2]])["note"].startswith("no unit has two")


def test_two_or_three_units_give_alpha_but_no_interval():
    # bootstrap_ci's rule: 2 or 3 units have 3 or 10 distinct resamples, below 20; four
    # units (35) get an interval. The three-unit case used to print [-0.67, 0.20]
    data = np.array([[3, 4, 2, 5], [3, 5, 1, 5], [4, 4, 2, 4]], dtype=float)
    for units in (2, 3):
        res = krippendorff_alpha(data[:, :units], n_resamples=500, seed=1)
        assert res["estimate"] == pytest.approx(
            krippendorff.alpha(reliability_data=data[:, :units], level_of_measurement="ordinal"),
            abs=1e-10)
        assert res["low"] is None and res["high"] is None
        assert f"{units} units allow only" in res["note"]
    four = krippendorff_alpha(data, n_resamples=500, seed=1)
    assert four["low"] < four["estimate"] < four["high"] and "note" not in four


def test_the_mean_flip_rate_of_three_items_has_no_interval_and_says_why():
    res = rerun_variability([[3, 3, 3], [4, 5, 5], [2, 1, 3]], n_resamples=500)
    assert res["flip_rate"]["low"] is None and "too few" in res["flip_rate"]["note"]


# ------------------------------------------------------------------ flips
SCORES = np.array([[3, 3, 3, 3],
                   [4, 4, 5, 4],
                   [2, 5, 5, 1],
                   [1, 2, 1, 2]], dtype=float)


def test_majority_answer_and_its_tie_rule():
    answer, agree = judge_answers(SCORES)
    # item 3: 1 and 2 tie at two reruns each; the earliest rerun's score wins
    assert answer.tolist() == [3, 4, 5, 1] and agree.tolist() == [4, 3, 2, 2]
    answer, agree = judge_answers(SCORES, tolerance=1)
    assert answer.tolist() == [3, 4, 2, 1] and agree.tolist() == [4, 4, 2, 4]  # 2 first


def test_flip_rates_and_pairwise_disagreement_by_hand():
    res = rerun_variability(SCORES, n_resamples=0)
    flips = [0, 1 / 4, 2 / 4, 2 / 4]
    pairs = [0, 3 / 6, 5 / 6, 4 / 6]   # the pairs of four reruns that differ
    assert [i["flip_rate"] for i in res["items"]] == pytest.approx(flips)
    assert [i["pairwise_disagreement"] for i in res["items"]] == pytest.approx(pairs)
    assert res["flip_rate"]["estimate"] == pytest.approx(np.mean(flips))
    assert res["pairwise_disagreement"]["estimate"] == pytest.approx(np.mean(pairs))
    assert res["items_flipping"]["count"] == 3 and res["items_flipping"]["n"] == 4
    ref = stats.binomtest(3, 4).proportion_ci(0.95, method="exact")
    assert (res["items_flipping"]["low"], res["items_flipping"]["high"]) == pytest.approx(
        (ref.low, ref.high), abs=1e-12)
    item = res["items"][1]
    ref = stats.binomtest(1, 4).proportion_ci(0.95, method="exact")
    assert (item["low"], item["high"]) == pytest.approx((ref.low, ref.high), abs=1e-12)
    assert exact_interval(0, 0) is None


def test_missing_reruns_count_per_item():
    scores = SCORES.copy()
    scores[1, 3] = nan
    res = rerun_variability(scores, n_resamples=0)
    assert res["reruns"] == [3, 4]
    assert res["items"][1]["flip_rate"] == pytest.approx(1 / 3)
    assert res["items"][1]["pairwise_disagreement"] == pytest.approx(2 / 3)


def test_a_deterministic_judge_never_flips_and_no_interval_is_made_up():
    frame = simulate_reruns(200, "deterministic", seed=2, k=5)
    scores = frame[[f"rerun_{r}" for r in range(1, 6)]].to_numpy(float)
    res = rerun_variability(scores, n_resamples=200)
    assert res["items_flipping"]["count"] == 0
    assert res["flip_rate"]["estimate"] == 0 and res["flip_rate"]["low"] is None
    assert "nothing to resample" in res["flip_rate"]["note"]
    # the exact interval still bounds the share of items that would flip: 1 - 0.025^(1/200)
    assert res["items_flipping"]["high"] == pytest.approx(1 - 0.025 ** (1 / 200), rel=1e-9)
    assert res["alpha"]["estimate"] == pytest.approx(1.0)


def test_the_pairwise_disagreement_of_a_sampling_judge_covers_its_known_value():
    frame = simulate_reruns(3000, "sampling", seed=5, k=5)
    scores = frame[[f"rerun_{r}" for r in range(1, 6)]].to_numpy(float)
    probs = np.exp(frame[[f"score_lp{j}" for j in range(1, 6)]].to_numpy())
    truth = float(np.mean(1 - (probs ** 2).sum(axis=1)))   # P(two draws differ)
    res = rerun_variability(scores, n_resamples=500, seed=1, per_item=False)
    pair = res["pairwise_disagreement"]
    assert pair["low"] <= truth <= pair["high"], (truth, pair)


def test_bad_reruns_are_refused_with_what_is_wrong():
    with pytest.raises(ValueError, match="at least two"):
        rerun_variability([[1, 2, 3]])
    with pytest.raises(ValueError, match="fewer than two scores"):
        rerun_variability([[1, nan], [2, 3]])
    with pytest.raises(ValueError, match="1 rerun"):
        rerun_variability([[1], [2]])


# ------------------------------------------------------------------ as a confidence
def test_rerun_agreement_and_score_token_confidence_by_hand():
    human = np.array([3, 5, 5, nan])
    probs = np.array([[0, .1, .8, .1, 0], [0, 0, 0, .7, .3], [.2, .2, .2, .2, .2],
                      [1, 0, 0, 0, 0]])
    got = rerun_confidence(SCORES, human, probs=probs, scale=[1, 2, 3, 4, 5])
    assert got["labelled"].tolist() == [True, True, True, False]
    assert got["answer"].tolist() == [3, 4, 5] and got["correct"].tolist() == [1, 0, 1]
    assert got["confidences"]["rerun_agreement"].tolist() == [1.0, 0.75, 0.5]
    assert got["confidences"]["score_token"] == pytest.approx([0.8, 0.7, 0.2])
    near = score_confidence(probs[:1], [3], [1, 2, 3, 4, 5], 1)
    assert near.tolist() == pytest.approx([1.0])
