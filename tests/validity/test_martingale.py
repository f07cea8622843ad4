"""The conformal test martingale (confeval.validity.martingale): the online p-values by hand and
against a direct loop, parity with MAPIE's OnlineMartingaleTest (simple jumper) on the same
arrays, and the false-alarm rate under exchangeability by simulation (Ville's inequality)."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest

from confeval.validity import conformal_martingale, jumper_log_martingale, online_p_values

mapie_martingales = pytest.importorskip("mapie.exchangeability_testing",
                                        reason="MAPIE is not installed (pip install '.[dev]')")


def _se(rate: float, k: int) -> float:
    return math.sqrt(rate * (1 - rate) / k)


def _direct_p_values(cal, stream, seed):
    """Each item against everything before it, one at a time (the definition)."""
    u = np.random.default_rng(seed).uniform(size=len(stream))
    history, out = list(cal), []
    for t, s in enumerate(stream):
        greater = sum(h > s for h in history)
        equal = sum(h == s for h in history)
        out.append((greater + u[t] * (equal + 1)) / (len(history) + 1.0))
        history.append(s)
    return np.array(out)


def _mapie(cal, stream, seed, jump=0.01):
    """MAPIE's jumper martingale on the same values: its history starts with the calibration
    values, and its conformity scores are the values themselves (no estimator involved)."""
    test = mapie_martingales.OnlineMartingaleTest(test_method="jumper_martingale",
                                                  random_state=seed, burn_in=1, warn=False,
                                                  jump_size=jump)
    test.conformity_score_history = [float(v) for v in cal]
    test._compute_non_conformity_scores = lambda X, y: np.asarray(X, dtype=float).ravel()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        test.update(np.asarray(stream, dtype=float).reshape(-1, 1), np.zeros(len(stream)))
    return test


def test_online_p_values_by_hand():
    """Calibration [0.5, 0.5]; stream 0.5, 0.7, 0.5 with U = u1, u2, u3:
    0.5 against {0.5, 0.5}: (0 + u1 (2 + 1)) / 3; 0.7 against {0.5 x3}: (0 + u2) / 4;
    0.5 against {0.5 x3, 0.7}: (1 + u3 (3 + 1)) / 5."""
    u = np.random.default_rng(9).uniform(size=3)
    p = online_p_values([0.5, 0.5], [0.5, 0.7, 0.5], seed=9)
    assert p.tolist() == [3 * u[0] / 3, u[1] / 4, (1 + 4 * u[2]) / 5]


@pytest.mark.parametrize("grid", [None, 20])
def test_online_p_values_equal_the_direct_loop_across_blocks(grid):
    rng = np.random.default_rng(1)
    cal, stream = rng.uniform(size=150), rng.uniform(size=1300)   # three blocks of 512
    if grid:
        cal, stream = np.round(cal * grid) / grid, np.round(stream * grid) / grid
    np.testing.assert_array_equal(online_p_values(cal, stream, seed=3),
                                  _direct_p_values(cal, stream, 3))


def test_jumper_by_hand():
    """Equal weights average the bets (0.5, 1, 1.5) to 1; then weights (1/6, 1/3, 1/2), mixed
    with J = 0.01 to (0.168333, 0.333333, 0.498333), and p = 1 pays
    0.168333 x 0.5 + 0.333333 + 0.498333 x 1.5 = 1.165."""
    m = np.exp(jumper_log_martingale([0.5, 1.0, 1.0]))
    assert m == pytest.approx([1.0, 1.0, 1.165], rel=1e-14)
    # p = 1/2 never moves it; the experts' bets integrate to 1 (a martingale)
    assert np.exp(jumper_log_martingale([0.5] * 10)) == pytest.approx(np.ones(10))
    grid = (np.arange(100_000) + 0.5) / 100_000
    for eps in (-1.0, 0.0, 1.0):
        assert np.mean(1 + eps * (grid - 0.5)) == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("kind", ["continuous", "verbalised", "shifted"])
def test_p_values_path_and_alarm_equal_mapies(kind):
    """Same arrays, same seed: the randomised p-values are bit-identical to MAPIE 1.6's
    ``OnlineMartingaleTest.compute_p_value`` (same uniforms, same floating operations) and the
    path equals its ``martingale_value_history`` to 1e-12 relative (ours renormalises the
    experts' weights each step); the alarm is MAPIE's first crossing of 1/alpha."""
    rng = np.random.default_rng({"continuous": 1, "verbalised": 2, "shifted": 3}[kind])
    cal, stream = rng.beta(5, 2, size=400), rng.beta(5, 2, size=900)
    if kind == "verbalised":
        cal, stream = np.round(cal * 20) / 20, np.round(stream * 20) / 20
    if kind == "shifted":
        stream[300:] = rng.beta(3, 2, size=600)
    ours = conformal_martingale(cal, stream, alpha=0.05, seed=11)
    theirs = _mapie(cal, stream, seed=11)
    np.testing.assert_array_equal(ours.p_values, np.asarray(theirs.pvalue_history))
    path = np.asarray(theirs.martingale_value_history)
    np.testing.assert_allclose(np.exp(ours.log_path), path, rtol=1e-12, atol=0)
    crossings = np.flatnonzero(path > theirs.reject_threshold)
    assert ours.alarm == (int(crossings[0]) if crossings.size else None)
    assert (ours.alarm is not None) == (kind == "shifted")
    assert theirs.is_exchangeable is (ours.alarm is None)


def test_p_values_are_uniform_under_exchangeability_with_ties():
    """Pooled over 200 exchangeable streams on a 0.05 grid (heavy ties), the randomised
    p-values are uniform: each decile holds 10% of them within 4 SE."""
    rng = np.random.default_rng(4)
    p = np.concatenate([online_p_values(z[:100], z[100:], seed=i) for i, z in
                        enumerate(np.round(rng.beta(5, 2, size=(200, 300)) * 20) / 20)])
    share = np.histogram(p, bins=10, range=(0, 1))[0] / p.size
    assert np.abs(share - 0.1).max() <= 4 * _se(0.1, p.size)


@pytest.mark.parametrize("data", ["continuous", "verbalised"])
def test_false_alarm_rate_under_exchangeability(data):
    """1,000 exchangeable streams (200 calibration values, then 1,000 stream values, all from
    one distribution): the alarm at alpha = 0.05 (M_t >= 20 at any t) is raised on at most
    alpha + 3 SE of them (Ville's inequality; SE 0.0069)."""
    alpha, runs = 0.05, 1000
    rng = np.random.default_rng(7 if data == "continuous" else 8)
    alarms = 0
    for i in range(runs):
        z = rng.beta(5, 2, size=1200)
        if data == "verbalised":
            z = np.round(z * 20) / 20
        alarms += conformal_martingale(z[:200], z[200:], alpha=alpha, seed=i).alarm is not None
    print(f"\n{data}: false-alarm rate {alarms / runs:.3f} over {runs} streams")
    assert alarms / runs <= alpha + 3 * _se(alpha, runs)


def test_detects_a_drop_in_confidence():
    """A stream whose confidences drop after 300 items: the alarm comes after the drop, on
    every one of 20 seeds."""
    rng = np.random.default_rng(5)
    cal = rng.beta(5, 2, size=500)
    for seed in range(20):
        stream = np.concatenate([rng.beta(5, 2, size=300), rng.beta(3, 2, size=700)])
        alarm = conformal_martingale(cal, stream, seed=seed).alarm
        assert alarm is not None and alarm >= 300


def test_the_path_never_overflows_and_is_json_ready():
    """A stream that keeps rising (each item above everything before it: p = U / (h + 1))
    drives M past any float; the path is capped at 1e300, the alarm and p-value use logs."""
    rng = np.random.default_rng(6)
    r = conformal_martingale(rng.uniform(size=300), 2 + np.arange(5000.0), seed=0)
    d = r.to_dict()
    json.dumps(d, allow_nan=False)
    # p-values u / (h + 1) ~ 0: the down expert's 1.5 - p soon dominates, ln 20 / ln 1.5 ~ 7.4
    assert 7 <= d["alarm"] <= 12 and not d["holds"]
    assert d["log10_max"] > 300 and max(d["path"]) == 1e300
    assert 0 < d["p_value"] <= 0.05
    assert d["p_value"] == pytest.approx(max(math.exp(-d["log10_max"] * math.log(10)),
                                             np.finfo(float).tiny))


def test_seeded_and_checked():
    rng = np.random.default_rng(0)
    cal, stream = rng.uniform(size=50), rng.uniform(size=80)
    a = conformal_martingale(cal, stream, seed=1)
    b = conformal_martingale(cal, stream, seed=1)
    c = conformal_martingale(cal, stream, seed=2)
    assert (a.log_path == b.log_path).all() and not (a.log_path == c.log_path).all()
    with pytest.raises(ValueError, match="betting"):
        conformal_martingale(cal, stream, betting="plugin")
    with pytest.raises(ValueError, match="jump"):
        conformal_martingale(cal, stream, jump=1.5)
    with pytest.raises(ValueError, match="alpha"):
        conformal_martingale(cal, stream, alpha=0)
