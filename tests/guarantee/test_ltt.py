"""Learn then Test thresholds: the Hoeffding–Bentkus p-values and the FWER procedures equal
MAPIE's (mapie.risk_control, dev extra); validity by simulation from a known P(correct |
confidence); ties; hand cases."""

import math
import warnings

import numpy as np
import pytest
from scipy.special import expit, logit
from scipy.stats import beta as beta_dist

from confeval.guarantee import hb_p_values, ltt_threshold, selective_risk, upper_bound
from confeval.guarantee.fwer import fwer_rejections as _fwer

mapie_methods = pytest.importorskip("mapie.risk_control.methods")
mapie_fwer = pytest.importorskip("mapie.risk_control.fwer_control")


@pytest.mark.parametrize("binary", [True, False])
def test_hb_p_values_equal_mapies(binary):
    rng = np.random.default_rng(0)
    risk = rng.integers(0, 40, 60) / 100
    n = rng.integers(1, 400, 60)
    for target in (0.05, 0.1, 0.3):
        ours = hb_p_values(risk, n, target, binary=binary)
        theirs = mapie_methods.compute_hoeffding_bentkus_p_value(risk, n.astype(float), target,
                                                                 binary=binary)[:, 0]
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize(("ours", "theirs"), [("fixed-sequence", "fixed_sequence"),
                                              ("bonferroni", "bonferroni"),
                                              ("holm", "bonferroni_holm")])
def test_fwer_rejections_equal_mapies(ours, theirs):
    rng = np.random.default_rng(1)
    for _ in range(50):
        p = np.sort(rng.random(20) ** 3)[::-1] if rng.random() < 0.5 else rng.random(20) ** 4
        got = np.flatnonzero(_fwer(p, np.ones(20, bool), 0.1, ours))
        expected = np.sort(mapie_fwer.control_fwer(p, 0.1, theirs))
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("starts", [1, 2, 4, 7, 25])
def test_multi_start_fixed_sequence_equals_mapies(starts):
    rng = np.random.default_rng(starts)
    for _ in range(100):
        n = int(rng.integers(1, 40))
        p = rng.random(n) ** 4 if rng.random() < 0.5 else np.sort(rng.random(n) ** 3)[::-1]
        got = np.flatnonzero(_fwer(p, np.ones(n, bool), 0.1, "fixed-sequence", starts))
        with warnings.catch_warnings():   # MAPIE warns when starts exceed the tests
            warnings.simplefilter("ignore", UserWarning)
            expected = np.sort(mapie_fwer.FWERFixedSequenceTesting(n_starts=starts).run(p, 0.1))
        np.testing.assert_array_equal(got, expected)


def test_selective_risk_and_bound_by_hand():
    conf = np.array([0.9, 0.8, 0.8, 0.6, 0.3])
    correct = np.array([1, 1, 0, 1, 0])
    risk, n = selective_risk(conf, correct, [0.95, 0.9, 0.8, 0.5, 0.0])
    np.testing.assert_array_equal(n, [0, 1, 3, 4, 5])
    np.testing.assert_allclose(risk[1:], [0, 1 / 3, 1 / 4, 2 / 5])
    assert np.isnan(risk[0])
    # no error among 50: the bound solves (1 - b)^50 = delta
    assert upper_bound(0, 50, 0.1) == pytest.approx(1 - 0.1 ** (1 / 50), abs=1e-8)


def test_ties_never_split_and_the_threshold_is_an_observed_value():
    rng = np.random.default_rng(2)
    conf = rng.choice([0.2, 0.4, 0.6, 0.8, 1.0], size=3000, p=[0.1, 0.15, 0.2, 0.25, 0.3])
    correct = (rng.random(3000) < conf * 0.97).astype(int)
    res = ltt_threshold(conf, correct, target=0.1, delta=0.1)
    assert res.threshold in {0.2, 0.4, 0.6, 0.8, 1.0}
    answered = conf >= res.threshold
    i = int(np.flatnonzero(res.candidates == res.threshold)[0])
    assert res.answered[i] == answered.sum()
    assert res.bound <= 0.1 and res.to_dict()["calibration"]["risk"] == pytest.approx(
        1 - correct[answered].mean())


def test_nothing_certified_is_said_with_the_best_achievable_bound():
    rng = np.random.default_rng(3)
    conf = rng.random(2000)
    correct = (rng.random(2000) < 0.5).astype(int)   # confidence says nothing
    res = ltt_threshold(conf, correct, target=0.05, delta=0.05)
    assert res.threshold is None and res.bound is None
    assert 0.05 < res.best_bound <= 1
    # too few items to test any threshold at this target: nothing to say but that
    few = ltt_threshold(conf[:80], correct[:80], target=0.05, delta=0.05)
    assert few.threshold is None and few.best_bound is None and not few.tested.any()
    with pytest.raises(ValueError, match="fwer must be one of"):
        ltt_threshold(conf, correct, target=0.1, delta=0.1, fwer="bh")


SHARPNESS = {"calibrated": (1.0, 0.0), "overconfident": (2.5, 1.0), "underconfident": (0.4, 0.0)}


def _true_selective_risk(t: float, sharpness: float, shift: float) -> float:
    """The simulator's model (confeval.simulate): q ~ Beta(4, 2), correct ~ Bernoulli(q),
    confidence = expit(s logit(q) + shift), so conf >= t exactly when q >= a. Then
    E[1 - q | q >= a] = B(4, 3) / B(4, 2) * P(Beta(4, 3) >= a) / P(Beta(4, 2) >= a), since
    (1 - q) times the Beta(4, 2) kernel q^3 (1 - q) is the Beta(4, 3) kernel."""
    a = expit((logit(min(max(t, 1e-12), 1 - 1e-12)) - shift) / sharpness)
    mass = beta_dist.sf(a, 4, 2)
    if mass <= 0:
        return 0.0
    ratio = math.exp(math.lgamma(4) + math.lgamma(3) - math.lgamma(7)
                     - (math.lgamma(4) + math.lgamma(2) - math.lgamma(6)))
    return ratio * beta_dist.sf(a, 4, 3) / mass


def draw(rng: np.random.Generator, n: int, sharpness: float, shift: float
         ) -> tuple[np.ndarray, np.ndarray]:
    """(confidence, correctness) of n items from the model of :func:`_true_selective_risk`."""
    q = np.clip(rng.beta(4, 2, n), 1e-6, 1 - 1e-6)
    correct = (rng.random(n) < q).astype(float)
    return expit(sharpness * logit(q) + shift), correct


@pytest.mark.parametrize("behaviour", list(SHARPNESS))
@pytest.mark.parametrize("n", [100, 1000])
@pytest.mark.parametrize("starts", [1, 4])
def test_violations_stay_under_delta(behaviour, n, starts):
    """2,000 calibration draws: the share whose certified threshold's true selective error
    exceeds the target is at most delta + 3 standard errors, with one walk or four; and at
    n = 1,000 one walk certifies a threshold on most draws (a procedure that certifies nothing
    is valid and useless)."""
    sharpness, shift = SHARPNESS[behaviour]
    target, delta, draws = 0.15, 0.1, 2000
    rng = np.random.default_rng([list(SHARPNESS).index(behaviour), n])   # hash() is salted
    violations = certified = 0
    for _ in range(draws):
        conf, correct = draw(rng, n, sharpness, shift)
        res = ltt_threshold(conf, correct, target=target, delta=delta, max_candidates=50,
                            starts=starts)
        if res.threshold is not None:
            certified += 1
            violations += _true_selective_risk(res.threshold, sharpness, shift) > target
    rate = violations / draws
    assert rate <= delta + 3 * math.sqrt(delta * (1 - delta) / draws), (rate, certified)
    if n == 1000 and starts == 1:
        assert certified > 0.75 * draws, certified


@pytest.mark.parametrize("fwer, starts", [("fixed-sequence", 1), ("fixed-sequence", 4),
                                          ("bonferroni", 1), ("holm", 1)])
def test_bounds_are_the_procedures_own_and_never_below_the_target_when_nothing_is(
        fwer, starts):
    """The certified bound is the bound at the level the procedure tested that threshold at
    (delta / k for k walks, delta / m for Bonferroni, Holm's step level), so it is at most the
    target; with nothing certified, the best bound the procedure could certify (where it
    tests first) lies above the target — never "nothing certified" beside a bound below it."""
    from confeval.guarantee.fwer import fwer_levels

    rng = np.random.default_rng(11)
    seen = {"certified": 0, "not": 0}
    for _ in range(60):
        n = int(rng.integers(80, 600))
        conf = rng.uniform(size=n).round(2)
        correct = (rng.uniform(size=n) < 0.75 + 0.2 * conf).astype(float)
        target = float(rng.choice([0.08, 0.12, 0.2]))
        res = ltt_threshold(conf, correct, target=target, delta=0.1, fwer=fwer, starts=starts)
        if res.threshold is None:
            seen["not"] += 1
            assert res.best_bound is None or res.best_bound > target
            continue
        seen["certified"] += 1
        i = int(np.flatnonzero(res.candidates == res.threshold)[0])
        level = fwer_levels(res.p_values, res.tested, 0.1, fwer, starts)[i]
        errors = res.risk[i] * res.answered[i]
        assert res.bound == pytest.approx(upper_bound(errors, res.answered[i], level), abs=0)
        assert res.bound <= target + 1e-9
        if fwer == "bonferroni" or starts > 1:   # Holm's last step is at delta itself
            assert level < 0.1 and res.bound >= upper_bound(errors, res.answered[i], 0.1)
        assert level <= 0.1
    assert seen["certified"] > 5 and seen["not"] > 5
