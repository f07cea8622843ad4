"""The calibration summary a policy stores (confeval.validity.summary): format, size bound,
exact JSON round trip, the seeded subsample above the cap (and the tests' level with it), and
the keys ``batch_validity`` and ``monitor_stream`` return."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from confeval.validity import (
    DEFAULT_CAP,
    batch_validity,
    calibration_values,
    monitor_stream,
    summarise_calibration,
    two_sample_test,
)

OUTSIDE_KEYS = {"p_value", "holds"}   # read by the outside check as validity.p_value / .holds


def _se(rate: float, k: int) -> float:
    return math.sqrt(rate * (1 - rate) / k)


def test_summary_keeps_sorted_values_and_round_trips_exactly():
    conf = np.random.default_rng(0).uniform(size=300).astype(np.float32)
    s = summarise_calibration(conf)
    back = json.loads(json.dumps(s))
    assert back == s
    assert back["values"] == np.sort(conf.astype(np.float64)).tolist()
    assert (back["n"], back["stored"], back["subsampled"], back["seed"]) == (300, 300, False,
                                                                             None)
    np.testing.assert_array_equal(calibration_values(back), np.sort(conf))


def test_ties_survive_the_summary():
    grid = np.round(np.random.default_rng(1).beta(5, 2, size=400) * 20) / 20
    s = json.loads(json.dumps(summarise_calibration(grid)))
    assert s["distinct"] == np.unique(grid).size < s["stored"]
    batch = np.round(np.random.default_rng(2).beta(5, 2, size=60) * 20) / 20
    assert batch_validity(s, batch)["p_value"] == two_sample_test(grid, batch).p_value


def test_size_is_bounded_by_the_cap():
    """At most cap values, each a float64 repr of at most 24 characters: at most 26 bytes per
    value plus the fields (module docstring), whatever the values."""
    rng = np.random.default_rng(3)
    worst = -rng.uniform(size=20_000) * 10.0 ** rng.integers(-300, 300, size=20_000)
    for cap in (10, 1000, DEFAULT_CAP):
        text = json.dumps(summarise_calibration(worst, cap=cap))
        assert len(text) <= 26 * cap + 300
    assert len(json.dumps(summarise_calibration(rng.uniform(size=10 ** 5)))) <= 130_300


def test_subsample_is_seeded_uniform_and_recorded():
    conf = np.random.default_rng(4).uniform(size=5000)
    a = summarise_calibration(conf, cap=100, seed=1)
    b = summarise_calibration(conf, cap=100, seed=1)
    c = summarise_calibration(conf, cap=100, seed=2)
    assert a == b and a["values"] != c["values"]
    assert (a["stored"], a["n"], a["subsampled"], a["seed"]) == (100, 5000, True, 1)
    assert set(a["values"]) <= set(conf.tolist())
    r = batch_validity(a, conf[:50])
    assert r["n_calibration"] == 100 and r["note"] == (
        "calibration summarised by a seeded subsample of 100 of 5,000 values (a random "
        "subsample of exchangeable values is exchangeable with new items too, so the test "
        "stays valid; its power is that of 100 values)")   # not "exact" beside an asymptotic p


def test_tests_stay_valid_with_a_subsampled_summary():
    """500 draws of 2,000 calibration values summarised by 200 of them, and a batch of 100
    from the same distribution: the batch test rejects at alpha = 0.05 on at most alpha + 3 SE
    of them (SE 0.0097), and so does the martingale over a stream of 300."""
    rng = np.random.default_rng(5)
    rejected = alarms = 0
    for i in range(500):
        z = np.round(rng.beta(5, 2, size=2400) * 20) / 20
        s = summarise_calibration(z[:2000], cap=200, seed=i)
        rejected += not batch_validity(s, z[2000:2100])["holds"]
        alarms += monitor_stream(s, z[2100:], seed=i)["alarm"] is not None
    print(f"\nsubsampled summary: batch rejections {rejected / 500:.3f}, martingale alarms "
          f"{alarms / 500:.3f}")
    assert rejected / 500 <= 0.05 + 3 * _se(0.05, 500)
    assert alarms / 500 <= 0.05 + 3 * _se(0.05, 500)


def test_batch_validity_keys_and_json():
    rng = np.random.default_rng(6)
    s = summarise_calibration(rng.beta(5, 2, size=1000))
    for kwargs in ({}, {"statistic": "rank_sum"}, {"method": "permutation",
                                                    "n_permutations": 99}):
        r = batch_validity(s, rng.beta(5, 2, size=100), **kwargs)
        assert OUTSIDE_KEYS <= set(r) and {"statistic", "test", "n_calibration",
                                           "n_batch"} <= set(r)
        assert isinstance(r["p_value"], float) and isinstance(r["holds"], bool)
        assert (r["n_calibration"], r["n_batch"]) == (1000, 100)
        json.dumps(r, allow_nan=False)
    r = batch_validity(s, [])
    assert r["holds"] and r["p_value"] == 1.0 and not r["informative"] and "empty" in r["note"]


def test_monitor_stream_keys_and_json():
    rng = np.random.default_rng(7)
    s = summarise_calibration(rng.beta(5, 2, size=1000))
    r = monitor_stream(s, rng.beta(5, 2, size=200), alpha=0.1, seed=3)
    assert OUTSIDE_KEYS <= set(r) and {"path", "alarm", "threshold"} <= set(r)
    assert len(r["path"]) == 200 and r["threshold"] == 10.0 and r["holds"] is (r["alarm"] is
                                                                                 None)
    json.dumps(r, allow_nan=False)
    # a plain array is accepted as the calibration values
    assert monitor_stream(np.asarray(s["values"]), rng.beta(5, 2, size=10))["n_calibration"] \
        == 1000


def test_a_bad_summary_is_refused():
    s = summarise_calibration([0.2, 0.4, 0.6])
    with pytest.raises(ValueError, match="format"):
        batch_validity({**s, "format": "x"}, [0.5])
    with pytest.raises(ValueError, match="version"):
        batch_validity({**s, "version": 2}, [0.5])
    with pytest.raises(ValueError, match="sorted"):
        batch_validity({**s, "values": [0.6, 0.4, 0.2]}, [0.5])
    with pytest.raises(ValueError, match="says"):
        batch_validity({**s, "stored": 4}, [0.5])
    with pytest.raises(ValueError, match="cap"):
        summarise_calibration([0.5], cap=0)
    with pytest.raises(ValueError, match="empty"):
        summarise_calibration([])
