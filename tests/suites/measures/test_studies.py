"""Threshold sensitivity, label noise (Eq. 7) and ranking comparison against hand-computed
cases and scipy."""

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import roc_auc_score

from confeval.suites.measures.studies import (
    compare_rankings,
    label_noise,
    ranking,
    threshold_sensitivity,
)


def _data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    score = rng.uniform(size=n)
    values = np.c_[score + rng.normal(0, 0.05, n), score + rng.normal(0, 0.3, n),
                   rng.normal(size=n), (score > 0.8) + rng.normal(0, 0.1, n)]
    return values, ["close", "loose", "noise", "high_only"], score


def test_threshold_rankings_use_strict_inequality_and_sklearn_auroc():
    values, names, score = _data()
    score[:10] = 0.7  # exactly on the threshold: incorrect under ">" (Eq. 6)
    res = threshold_sensitivity(values, names, score, [0.5, 0.7, 0.9])
    at = res["by_threshold"]["0.7"]
    labels = score > 0.7
    assert at["base_rate"] == pytest.approx(labels.mean())
    for j, name in enumerate(names):
        assert at["auroc"][name] == pytest.approx(roc_auc_score(labels, values[:, j]))
    assert at["order"][0] == "close"
    a, b = res["by_threshold"]["0.5"]["auroc"], res["by_threshold"]["0.9"]["auroc"]
    expected = stats.kendalltau([a[n] for n in names], [b[n] for n in names]).statistic
    assert res["kendall"]["0.5|0.9"] == pytest.approx(expected)
    # the measure that only sees high scores ranks higher at tau = 0.9 than at 0.5
    order5, order9 = res["by_threshold"]["0.5"]["order"], res["by_threshold"]["0.9"]["order"]
    assert order9.index("high_only") < order5.index("high_only")


def test_one_class_threshold_gives_no_ranking():
    values, names, score = _data()
    res = threshold_sensitivity(values, names, score, [1.0])
    assert res["by_threshold"]["1"]["order"] == [] and res["kendall"] == {}


def test_label_noise_is_eq7_on_the_clipped_logit_with_per_seed_generators():
    values, names, score = _data()
    score[:5] = [0.0, 1.0, 0.0, 1.0, 0.5]  # binary scores: clipped, so noise can move them
    res = label_noise(values, names, score, threshold=0.5, sigmas=[0.0, 1.0, 3.0],
                      seeds=[1, 2, 3], eps=1e-3)
    assert res["by_sigma"]["0"]["kendall_mean"] == 1.0
    assert res["by_sigma"]["0"]["labels_flipped"] == 0.0
    # seed 2 at sigma 1, transcribed
    clipped = np.clip(score, 1e-3, 1 - 1e-3)
    noisy = 1 / (1 + np.exp(-(np.log(clipped / (1 - clipped))
                              + np.random.default_rng(2).normal(0, 1.0, score.size)))) > 0.5
    clean = ranking(values, names, score > 0.5)["auroc"]
    noisy_auroc = ranking(values, names, noisy)["auroc"]
    assert res["by_sigma"]["1"]["kendall"][1] == pytest.approx(
        compare_rankings(clean, noisy_auroc))
    taus = res["by_sigma"]["1"]["kendall"]
    assert res["by_sigma"]["1"]["kendall_std"] == pytest.approx(np.std(taus))
    # more noise flips more labels
    assert res["by_sigma"]["3"]["labels_flipped"] > res["by_sigma"]["1"]["labels_flipped"] > 0
    again = label_noise(values, names, score, threshold=0.5, sigmas=[1.0], seeds=[1, 2, 3])
    assert again["by_sigma"]["1"] == res["by_sigma"]["1"]


@pytest.mark.parametrize("kwargs", [{"eps": 0.0}, {"sigmas": [-1.0]}, {"seeds": []}])
def test_bad_noise_settings_are_errors(kwargs):
    values, names, score = _data(50)
    settings = {"threshold": 0.5, "sigmas": [1.0], "seeds": [1], **kwargs}
    with pytest.raises(ValueError):
        label_noise(values, names, score, **settings)


def test_compare_rankings_is_kendall_tau_b_on_common_measures():
    a = {"x": 0.9, "y": 0.8, "z": 0.7, "only_a": 0.5}
    b = {"x": 0.6, "y": 0.7, "z": 0.5}
    expected = stats.kendalltau([0.9, 0.8, 0.7], [0.6, 0.7, 0.5]).statistic
    assert compare_rankings(a, b) == pytest.approx(expected)
    assert compare_rankings({"x": 0.5}, {"x": 0.5}) is None


def test_threshold_and_noise_lists_must_hold_finite_numbers():
    from confeval.suites.measures.options import NoiseOptions, ThresholdsOptions
    from confeval.suites.options import build

    assert build(ThresholdsOptions, {"thresholds": "0.5, 0.8,"}).thresholds == (0.5, 0.8)
    for text in ("", " , ", "0.5,nan", "inf", "0.5,x"):
        with pytest.raises(ValueError, match="--thresholds must be a comma list of numbers"):
            build(ThresholdsOptions, {"thresholds": text})
    with pytest.raises(ValueError, match="--sigmas must be a comma list of numbers, got ''"):
        build(NoiseOptions, {"sigmas": ""})
