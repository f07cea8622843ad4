"""Risk monitoring with late labels (confeval.validity.risk): the PrPl-EB confidence sequence
by hand and against a plain loop of Waudby-Smith & Ramdas's formulas, the alarm rule, and its
level and power by simulation."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from confeval.validity import eb_confidence_sequence, monitor_risk


def _se(rate: float, k: int) -> float:
    return math.sqrt(rate * (1 - rate) / k)


def _loop_bounds(x, alpha, c=0.5):
    """Waudby-Smith & Ramdas (2024) Thm 2, one-sided, written out step by step."""
    log_a = math.log(1 / alpha)
    mu_prev, s2_prev = 0.5, 0.25
    total, sq, s_lam, s_lamx, s_pen = 0.0, 0.0, 0.0, 0.0, 0.0
    lower, upper = [], []
    for t, xt in enumerate(x, start=1):
        lam = min(math.sqrt(2 * log_a / (s2_prev * t * math.log(1 + t))), c)
        v = 4 * (xt - mu_prev) ** 2
        psi = (-math.log(1 - lam) - lam) / 4
        s_lam += lam
        s_lamx += lam * xt
        s_pen += v * psi
        centre, margin = s_lamx / s_lam, (log_a + s_pen) / s_lam
        lower.append(min(max(centre - margin, 0.0), 1.0))
        upper.append(min(max(centre + margin, 0.0), 1.0))
        total += xt
        mu = (0.5 + total) / (t + 1)
        sq += (xt - mu) ** 2
        mu_prev, s2_prev = mu, (0.25 + sq) / (t + 1)
    return np.array(lower), np.array(upper)


def test_first_step_by_hand():
    """t = 1: mu_0 = 1/2, sigma2_0 = 1/4, lambda_1 = min(sqrt(2 ln 20 / (1/4 ln 2)), 1/2)
    = 1/2; v_1 = 4 (1 - 1/2)^2 = 1; psi(1/2) = (ln 2 - 1/2) / 4; the bounds are
    1 -/+ (ln 20 + psi) / (1/2): clipped to [0, 1], nothing learnt."""
    cs = eb_confidence_sequence([1.0], alpha=0.05)
    assert cs["lam"][0] == 0.5
    assert cs["penalty"][0] == pytest.approx((math.log(2) - 0.5) / 4, rel=1e-15)
    assert (cs["lower"][0], cs["upper"][0]) == (0.0, 1.0)
    # the wealth against target 0.1: exp(1/2 (1 - 0.1) - psi)
    m = monitor_risk([0.0], target=0.1)
    assert m.log_wealth[0] == pytest.approx(0.45 - (math.log(2) - 0.5) / 4, rel=1e-14)
    assert m.p_value == pytest.approx(math.exp(-(0.45 - (math.log(2) - 0.5) / 4)), rel=1e-14)


@pytest.mark.parametrize("rate", [0.02, 0.1, 0.4])
def test_bounds_equal_the_step_by_step_formulas(rate):
    x = (np.random.default_rng(int(rate * 100)).uniform(size=500) < rate).astype(float)
    lower, upper = _loop_bounds(x, 0.05)
    cs = eb_confidence_sequence(x, alpha=0.05)
    np.testing.assert_allclose(cs["lower"], lower, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(cs["upper"], upper, rtol=1e-12, atol=1e-14)
    # rows of a 2-D input are independent sequences
    both = eb_confidence_sequence(np.stack([x, x[::-1]]), alpha=0.05)
    np.testing.assert_allclose(both["lower"][1], _loop_bounds(x[::-1], 0.05)[0], rtol=1e-12,
                               atol=1e-14)


def test_alarm_is_the_first_lower_bound_at_the_target():
    wrong = np.random.default_rng(1).uniform(size=3000) < 0.25
    m = monitor_risk(~wrong, target=0.15, alpha=0.05)
    cs = eb_confidence_sequence(wrong.astype(float), alpha=0.05)
    first = int(np.flatnonzero(cs["lower"] >= 0.15)[0])
    assert m.alarm == first and m.lower[first] >= 0.15 > m.lower[:first].max()
    assert m.p_value <= 0.05 and not m.to_dict()["holds"]


def test_answered_items_are_the_confident_ones():
    conf = np.array([0.9, 0.2, 0.95, 0.5, 0.99, 0.1])
    correct = np.array([1, 0, 0, 0, 1, 0])
    m = monitor_risk(correct, target=0.2, confidence=conf, threshold=0.9)
    assert m.errors.tolist() == [0.0, 1.0, 0.0] and m.answered_index.tolist() == [0, 2, 4]
    d = m.to_dict()
    assert (d["n_labelled"], d["n_answered"], d["errors"]) == (6, 3, 1)
    json.dumps(d, allow_nan=False)
    # an alarm names the labelled item it happened at
    conf = np.tile([0.95, 0.1], 2000)
    correct = np.tile([0, 1], 2000)
    d = monitor_risk(correct, target=0.2, confidence=conf, threshold=0.9).to_dict()
    assert d["alarm_item"] == 2 * d["alarm"]
    with pytest.raises(ValueError, match="both"):
        monitor_risk(correct, target=0.2, confidence=conf)


def test_nothing_answered_says_so():
    d = monitor_risk([1, 0], target=0.1, confidence=[0.1, 0.2], threshold=0.9).to_dict()
    assert d["holds"] and d["p_value"] == 1.0 and not d["informative"] and d["note"]
    assert d["selective_error"] is None


@pytest.mark.parametrize("rate", [0.05, 0.1])
def test_false_alarms_at_most_alpha_when_the_error_is_at_the_target(rate):
    """1,000 streams of 3,000 answered items whose selective error is exactly the target: the
    lower bound reaches the target on at most alpha + 3 SE of them (SE 0.0069), and the upper
    bound ever falls below the true error on at most alpha + 3 SE."""
    x = (np.random.default_rng(int(rate * 1000)).uniform(size=(1000, 3000)) < rate)
    cs = eb_confidence_sequence(x.astype(float), alpha=0.05)
    false_alarm = (cs["lower"] >= rate).any(axis=1).mean()
    miss = (cs["upper"] < rate).any(axis=1).mean()
    print(f"\nerror rate {rate} = target: false alarms {false_alarm:.3f}, upper bound "
          f"below the rate {miss:.3f}")
    assert false_alarm <= 0.05 + 3 * _se(0.05, 1000)
    assert miss <= 0.05 + 3 * _se(0.05, 1000)


def test_false_alarms_at_most_alpha_when_the_rates_vary_under_the_target():
    """The promise holds item by item but the error rate moves (0.025 for 1,500 answered items,
    then 0.1 = the target, and the reverse): over 1,000 streams each, the alarm (Ville on the
    wealth against 0.1) is raised on at most alpha + 3 SE; the lower bound never crosses the
    upper one (no running intersection)."""
    rng = np.random.default_rng(12)
    for rates in ([0.025, 0.1], [0.1, 0.025]):
        mu = np.repeat(rates, 1500)
        x = (rng.uniform(size=(1000, 3000)) < mu).astype(float)
        cs = eb_confidence_sequence(x, alpha=0.05)
        rate = (cs["lower"] >= 0.1).any(axis=1).mean()
        print(f"\nerror rates {rates}: false alarms {rate:.3f}")
        assert rate <= 0.05 + 3 * _se(0.05, 1000)
        assert (cs["lower"] <= cs["upper"]).all()


def test_power_when_the_error_is_above_the_target():
    """Target 0.1, true selective error 0.2: every one of 200 streams of 2,000 answered items
    raises the alarm, a median of about 150 items in (printed)."""
    x = np.random.default_rng(3).uniform(size=(200, 2000)) < 0.2
    times = [monitor_risk(~row, target=0.1).alarm for row in x]
    assert all(t is not None for t in times)
    print(f"\nselective error 0.2 vs target 0.1: median alarm after {np.median(times):.0f} "
          "answered items")
    assert np.median(times) < 400


def test_checked_inputs():
    with pytest.raises(ValueError, match="target"):
        monitor_risk([1, 0], target=1.2)
    with pytest.raises(ValueError, match="alpha"):
        eb_confidence_sequence([1.0], alpha=0.0)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        eb_confidence_sequence([2.0])
