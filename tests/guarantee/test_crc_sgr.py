"""Conformal risk control and SGR: hand cases; SGR's bound inverts the binomial CDF exactly
and its search follows a transcription of the authors' code; validity by simulation from the
simulator's known P(correct | confidence) (CRC: mean joint error <= target + 3 SE; SGR:
violations <= delta + 3 SE); ties never split."""

import math

import numpy as np
import pytest
from scipy.special import expit, logit
from scipy.stats import beta as beta_dist
from scipy.stats import binom

from confeval.guarantee import binomial_upper, crc_threshold, sgr_threshold

from .test_ltt import SHARPNESS, _true_selective_risk


def _true_joint_risk(t: float, sharpness: float, shift: float) -> float:
    """P(confidence >= t and wrong) under the simulator's model: P(q >= a) E[1 - q | q >= a]."""
    a = expit((logit(min(max(t, 1e-12), 1 - 1e-12)) - shift) / sharpness)
    return _true_selective_risk(t, sharpness, shift) * beta_dist.sf(a, 4, 2)


def test_crc_by_hand_and_ties():
    res = crc_threshold([0.9, 0.8, 0.7, 0.6], [1, 1, 0, 1], target=0.45)
    assert (res.threshold, res.bound, res.risk, res.answered) == (0.6, 0.4, 0.25, 4)
    assert res.risk_kind == "joint"
    res = crc_threshold([0.9, 0.8, 0.7, 0.6], [1, 1, 0, 1], target=0.4)   # 2/5 meets 0.4
    assert res.threshold == 0.6
    res = crc_threshold([0.9, 0.8, 0.7, 0.6], [1, 1, 0, 1], target=0.39)
    assert (res.threshold, res.answered, res.bound) == (0.8, 2, 0.2)
    # the top item is wrong: (1 + 1) / 4 > 0.3 at every threshold; answering nothing gives 1/4
    res = crc_threshold([0.9, 0.5, 0.4], [0, 1, 1], target=0.3)
    assert res.threshold is None and res.best_bound == 0.25
    conf = np.repeat([0.2, 0.5, 0.9], [30, 30, 40])
    correct = np.r_[np.zeros(30), np.ones(25), np.zeros(5), np.ones(38), np.zeros(2)]
    res = crc_threshold(conf, correct, target=0.1)
    assert res.threshold == 0.5 and res.answered == 70   # a tie block is answered whole
    assert res.bound == pytest.approx(8 / 101)


def test_binomial_upper_inverts_the_cdf():
    for n in (1, 7, 50, 400):
        for errors in range(0, n, max(1, n // 7)):
            for delta in (0.01, 0.1, 0.3):
                b = float(binomial_upper(errors, n, delta))
                assert binom.cdf(errors, n, b) == pytest.approx(delta, rel=1e-9)
    assert binomial_upper(5, 5, 0.1) == 1.0 and binomial_upper(0, 0, 0.1) == 1.0


def _authors_search(conf, residuals, rstar, delta):
    """The search of geifmany/selective_deep_learning risk_control.py (transcribed; its binomial
    inversion by bisection to 1e-7 in the CDF), run for ceil(log2 m) iterations at
    delta / ceil(log2 m): every iterate's (theta, bound)."""
    def bound_of(delta_hat, mi, erm):
        a, c = erm, 1.0
        b = (a + c) / 2
        val = binom.cdf(round(mi * erm), mi, b) - delta_hat
        while abs(val) > 1e-7:
            a, c = (b, c) if val > 0 else (a, b)
            b = (a + c) / 2
            val = binom.cdf(round(mi * erm), mi, b) - delta_hat
        return b

    m = len(residuals)
    idx = np.argsort(conf)
    a, b = 0, m - 1
    k = math.ceil(math.log2(m))
    out = []
    for _ in range(k):
        mid = math.ceil((a + b) / 2)
        mi = m - mid
        theta = conf[idx[mid]]
        risk = residuals[idx[mid:]].sum() / mi
        bound = bound_of(delta / k, mi, risk)
        out.append((theta, bound))
        if bound > rstar:
            a = mid
        else:
            b = mid
    return out


@pytest.mark.parametrize("seed", range(5))
def test_sgr_follows_the_authors_search(seed):
    rng = np.random.default_rng(seed)
    q = rng.beta(4, 2, 3000)
    conf = q + rng.normal(0, 0.05, q.size)     # distinct values: positions = the rule
    correct = (rng.random(q.size) < q).astype(float)
    target, delta = 0.15, 0.1
    iterates = _authors_search(conf, 1 - correct, target, delta)
    res = sgr_threshold(conf, correct, target=target, delta=delta)
    met = [(t, b) for t, b in iterates if b <= target]
    assert met, iterates
    theta, bound = min(met)
    assert res.threshold == theta and res.bound == pytest.approx(bound, abs=1e-5)
    assert res.answered == int((conf >= theta).sum())
    assert res.risk == pytest.approx(1 - correct[conf >= theta].mean(), abs=1e-12)


def test_sgr_ties_and_inputs():
    rng = np.random.default_rng(7)
    conf = rng.choice([0.2, 0.4, 0.6, 0.8, 1.0], size=4000, p=[0.1, 0.15, 0.2, 0.25, 0.3])
    correct = (rng.random(conf.size) < conf * 0.97).astype(float)
    res = sgr_threshold(conf, correct, target=0.12, delta=0.1)
    assert res.threshold in {0.2, 0.4, 0.6, 0.8, 1.0}
    assert res.answered == int((conf >= res.threshold).sum())
    with pytest.raises(ValueError, match="0/1 correctness"):
        sgr_threshold(conf, correct * 0.5, target=0.1, delta=0.1)


@pytest.mark.parametrize("behaviour", list(SHARPNESS))
@pytest.mark.parametrize("n", [100, 1000])
def test_crc_mean_joint_risk_and_sgr_violations(behaviour, n):
    """2,000 calibration draws from a known model: CRC's true joint error averages at most
    the target + 3 SE (its promise is an expectation); SGR's true selective error exceeds the
    target in at most delta + 3 SE of the draws."""
    sharpness, shift = SHARPNESS[behaviour]
    draws, crc_target, sgr_target, delta = 2000, 0.05, 0.15, 0.1
    rng = np.random.default_rng([10 + list(SHARPNESS).index(behaviour), n])
    joint, violations, certified = np.zeros(draws), 0, 0
    for d in range(draws):
        q = np.clip(rng.beta(4, 2, n), 1e-6, 1 - 1e-6)
        correct = (rng.random(n) < q).astype(float)
        conf = expit(sharpness * logit(q) + shift)
        crc = crc_threshold(conf, correct, target=crc_target)
        joint[d] = 0.0 if crc.threshold is None else _true_joint_risk(crc.threshold,
                                                                      sharpness, shift)
        sgr = sgr_threshold(conf, correct, target=sgr_target, delta=delta)
        if sgr.threshold is not None:
            certified += 1
            violations += _true_selective_risk(sgr.threshold, sharpness, shift) > sgr_target
    assert joint.mean() <= crc_target + 3 * joint.std(ddof=1) / math.sqrt(draws)
    assert joint.mean() > 0.5 * crc_target        # useful: not answering nothing
    rate = violations / draws
    assert rate <= delta + 3 * math.sqrt(delta * (1 - delta) / draws), (rate, certified)
