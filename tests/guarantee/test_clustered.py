"""Learn then Test over clusters (the steps of one chain): Hoeffding's p-value with the
clusters' answered counts as ranges, by hand; with one item per cluster it is Hoeffding over
the answered items; validity by simulation on chains whose steps share an effect the judge
does not see."""

import math

import numpy as np
import pytest
from scipy.special import expit

from confeval.guarantee import ltt_threshold
from confeval.guarantee.clustered import cluster_counts, clustered_bound, clustered_p_values


def test_counts_p_values_and_bound_by_hand():
    conf = np.array([0.9, 0.8, 0.7, 0.95, 0.6, 0.85])
    loss = np.array([0.0, 1.0, 0.0, 0.0, 1.0, 0.0])
    groups = np.array(["a", "a", "a", "b", "b", "c"])
    cands = np.array([0.9, 0.8, 0.6])
    answered, errors, squares = cluster_counts(conf, loss, groups, cands)
    # t = 0.9: a answers 1 (0.9), b 1 (0.95); t = 0.8: a 2, b 1, c 1; t = 0.6: a 3, b 2, c 1
    assert answered.tolist() == [2, 4, 6] and errors.tolist() == [0, 1, 2]
    assert squares.tolist() == [2, 6, 14]
    p = clustered_p_values(answered, errors, squares, 0.5)
    assert p[2] == pytest.approx(math.exp(-2 * (0.5 * 6 - 2) ** 2 / 14))
    bound = clustered_bound(answered, errors, squares, 0.3)
    assert bound[2] == pytest.approx((2 + math.sqrt(14 * math.log(1 / 0.3) / 2)) / 6)
    assert clustered_bound(answered, errors, squares, 0.1)[2] == 1.0   # above 1: nothing
    # the bound is where the p-value meets delta
    assert clustered_p_values(answered[2:], errors[2:], squares[2:],
                              float(bound[2]))[0] == pytest.approx(0.3)


def test_one_item_per_cluster_is_hoeffding_over_the_answered():
    rng = np.random.default_rng(1)
    conf = rng.random(500)
    y = (rng.random(500) < conf).astype(float)
    res = ltt_threshold(conf, y, target=0.2, delta=0.1, groups=np.arange(500))
    a, r = res.answered, np.nan_to_num(res.risk)
    expected = np.where(r < 0.2, np.exp(-2 * a * (0.2 - r) ** 2), 1.0)
    np.testing.assert_allclose(res.p_values, np.where(a > 0, expected, 1.0), rtol=1e-9)


SIZE, SPREAD = 6, 1.5


def _chains(rng, n_chains):
    """Chains of six steps; the judge sees each step's logit a, the chain's effect b moves
    all its steps' chance of being right together."""
    a = rng.normal(1.0, 1.2, (n_chains, SIZE))
    b = rng.normal(0.0, SPREAD, (n_chains, 1))
    p_right = expit(a + b - 0.3)
    y = (rng.random((n_chains, SIZE)) < p_right).astype(float)
    return (expit(a).ravel(), y.ravel(), np.repeat(np.arange(n_chains), SIZE),
            (1 - p_right).ravel())


def test_violations_stay_under_delta_when_steps_share_their_chain():
    """1,000 calibration draws of 500 chains (3,000 steps): the share whose certified
    threshold's true selective error (from 2.4 million simulated steps) exceeds the target is
    at most delta + 3 standard errors, and a third of the draws at least certify a threshold
    (Hoeffding over chains is conservative: 45% here)."""
    conf, _, _, wrong = _chains(np.random.default_rng(0), 400_000)
    order = np.argsort(-conf, kind="stable")
    ranked, cum_wrong = conf[order], np.cumsum(wrong[order])

    def true_risk(t):
        k = np.searchsorted(-ranked, -t, side="right")
        return cum_wrong[k - 1] / k

    rng = np.random.default_rng(7)
    target, delta, draws = 0.2, 0.1, 1000
    violations = certified = 0
    for _ in range(draws):
        c, y, groups, _ = _chains(rng, 500)
        res = ltt_threshold(c, y, target=target, delta=delta, max_candidates=100,
                            groups=groups)
        if res.threshold is not None:
            certified += 1
            violations += true_risk(res.threshold) > target
    assert violations / draws <= delta + 3 * math.sqrt(delta * (1 - delta) / draws)
    assert certified > 0.3 * draws, certified
