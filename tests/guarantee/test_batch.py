"""The batch promise (confeval.guarantee.batch): the failure bound G equals its definition
summed term by term (scipy's binomial pmf), bounds the exact failure probability everywhere in
its box, and by simulation the chance that a new batch's selective error exceeds the target
stays under delta — where the population promise's does not."""

import math

import numpy as np
import pytest
from scipy.special import expit, logit
from scipy.stats import beta as beta_dist
from scipy.stats import binom

from confeval.guarantee import ltt_threshold
from confeval.guarantee.batch import batch_bound, batch_failure_bound, box, split_delta
from tests.guarantee.test_ltt import SHARPNESS, _true_selective_risk, draw


def _g(m: int, r: float, target: float) -> np.ndarray:
    """g_a = P(Binomial(a, r) > target a) for a = 0..m, g_0 = 0, by scipy.stats."""
    a = np.arange(m + 1)
    return np.where(a > 0, binom.sf(np.floor(np.round(target * a, 9)), a, r), 0.0)


def _failure(q: float, r: float, m: int, target: float) -> float:
    """F(q, r): the exact chance a batch of m fails (no maximum taken)."""
    return float(binom.pmf(np.arange(m + 1), m, q) @ _g(m, r, target))


def _by_definition(q: float, r: float, m: int, target: float) -> float:
    gbar = np.maximum.accumulate(_g(m, r, target)[::-1])[::-1]
    return min(float(binom.pmf(np.arange(m + 1), m, q) @ gbar), 1.0)


@pytest.mark.parametrize("m", [1, 2, 7, 60, 700])
@pytest.mark.parametrize("target", [0.05, 0.1, 0.3, 0.7])
def test_the_bound_equals_its_definition_term_by_term(m, target):
    rng = np.random.default_rng([m, int(target * 100)])
    q, r = rng.uniform(0, 1, 12), rng.uniform(0, 0.6, 12)
    q[:3], r[3] = (0.0, 1.0, 0.5), 0.0
    expected = [_by_definition(a, b, m, target) for a, b in zip(q, r)]
    np.testing.assert_allclose(batch_failure_bound(q, r, m, target), expected, rtol=1e-10,
                               atol=1e-13)
    # one target per threshold gives the same as each alone
    np.testing.assert_allclose(batch_failure_bound(q, r, m, np.full(12, target)), expected,
                               rtol=1e-10, atol=1e-13)


def test_the_bound_holds_over_its_whole_box():
    """G(q_lo, r_hi) >= F(q, r) for every q >= q_lo and r <= r_hi (on a grid), while
    F(q_lo, r_hi) itself can be smaller than G (the suffix maximum is what makes it hold)."""
    m, target, q_lo, r_hi = 40, 0.1, 0.3, 0.06
    bound = float(batch_failure_bound([q_lo], [r_hi], m, target)[0])
    worst = max(_failure(q, r, m, target) for q in np.linspace(q_lo, 1, 15)
                for r in np.linspace(0, r_hi, 15))
    assert worst <= bound + 1e-12
    assert bound > 0


def test_box_is_two_exact_one_sided_bounds():
    q_lo, r_hi = box(np.array([3.0]), np.array([50.0]), 200, 0.1)
    # P(Binomial(200, q_lo) >= 50) = 0.01 and P(Binomial(50, r_hi) <= 3) = 0.09
    assert binom.sf(49, 200, q_lo[0]) == pytest.approx(0.01, rel=1e-9)
    assert binom.cdf(3, 50, r_hi[0]) == pytest.approx(0.09, rel=1e-9)


def test_batch_bound_is_where_the_failure_bound_meets_delta():
    q_lo, r_hi, m, d = 0.6, 0.05, 500, 0.05
    b = float(batch_bound(q_lo, r_hi, m, d)[0])
    assert batch_failure_bound([q_lo], [r_hi], m, b)[0] <= d
    assert batch_failure_bound([q_lo], [r_hi], m, b - 2e-3)[0] > d
    assert r_hi < b < 0.1


def _failure_of_threshold(t, sharpness, shift, m, target) -> float:
    """The exact chance a batch of m from the simulator's model fails at threshold t."""
    a = expit((logit(min(max(t, 1e-12), 1 - 1e-12)) - shift) / sharpness)
    return _failure(beta_dist.sf(a, 4, 2), _true_selective_risk(t, sharpness, shift), m,
                    target)


@pytest.mark.parametrize(("n", "draws"), [(100, 2000), (1000, 600)])
def test_a_new_batch_fails_at_most_delta_of_the_time(n, draws):
    """Calibration draws from the simulator's calibrated judge (its other behaviours are
    monotone maps of the same confidence, so they answer the same items and give the same
    results), a batch of m = n: the mean exact failure chance of the certified threshold is at
    most delta + 3 standard errors. At n = 1,000 the population promise's threshold fails the
    batch more often than delta (why the batch promise exists), and the batch promise still
    certifies a threshold on most draws (a procedure certifying nothing is valid and
    useless). Target 0.25: at 0.15 this judge's error curve leaves the batch promise nothing
    to certify (its best answer rate is a few percent)."""
    sharpness, shift = SHARPNESS["calibrated"]
    target, delta, m = 0.25, 0.1, n
    rng = np.random.default_rng([7, n])
    fail_batch, fail_population, certified = [], [], 0
    for k in range(draws):
        conf, correct = draw(rng, n, sharpness, shift)
        res = ltt_threshold(conf, correct, target=target, delta=delta, max_candidates=50,
                            batch=m)
        certified += res.threshold is not None
        fail_batch.append(0.0 if res.threshold is None else
                          _failure_of_threshold(res.threshold, sharpness, shift, m, target))
        if n == 1000 and k < 200:
            pop = ltt_threshold(conf, correct, target=target, delta=delta, max_candidates=50)
            fail_population.append(0.0 if pop.threshold is None else _failure_of_threshold(
                pop.threshold, sharpness, shift, m, target))
    rate = float(np.mean(fail_batch))
    assert rate <= delta + 3 * math.sqrt(delta * (1 - delta) / draws), (rate, certified)
    if n == 1000:
        assert np.mean(fail_population) > delta, np.mean(fail_population)
        assert certified > 0.5 * draws, certified


def test_what_the_batch_promise_refuses():
    conf, y = np.linspace(0, 1, 200), np.ones(200)
    with pytest.raises(ValueError, match="positive number"):
        ltt_threshold(conf, y, target=0.1, delta=0.1, batch=0)
    with pytest.raises(ValueError, match="0/1"):
        ltt_threshold(conf, np.full(200, 0.5), target=0.1, delta=0.1, batch=10)
    with pytest.raises(ValueError, match="holm"):
        ltt_threshold(conf, y, target=0.1, delta=0.1, batch=10, fwer="holm")
    with pytest.raises(ValueError, match="chain"):
        ltt_threshold(conf, y, target=0.1, delta=0.1, batch=10, groups=np.arange(200) // 4)
    assert split_delta(0.1) == (0.05, 0.05)
