"""The shared sort of ``evaluate_confidence`` (:class:`confeval.metrics.selective.Ranking`):
every ranking metric from the one sorted sample equals the public metric on the unsorted
arrays (each sorting on its own), ties in the confidence included, binary and graded targets;
the bootstrap's sorted sample built on it is the one built alone."""

import json
import warnings

import numpy as np
import pytest

from confeval import metrics as M
from confeval.evaluate import evaluate_confidence
from confeval.metrics.selective import Ranking
from confeval.metrics.weighted import SortedSample

KINDS = ["continuous", "likert", "all tied", "rounded", "graded", "graded ties", "one class"]


def _sample(kind, n, seed):
    rng = np.random.default_rng(seed)
    conf = {"continuous": rng.random(n), "likert": np.round(rng.random(n) * 4) / 4,
            "all tied": np.full(n, 0.7), "rounded": np.round(rng.random(n), 2),
            "graded": rng.random(n), "graded ties": np.round(rng.random(n), 1),
            "one class": np.round(rng.random(n), 1)}[kind]
    if kind.startswith("graded"):
        target = np.round(rng.random(n) * 4) / 4
    elif kind == "one class":
        target = np.ones(n)
    else:
        target = (rng.random(n) < conf).astype(float)
    return conf, target


@pytest.mark.parametrize("n", [2, 7, 300])
@pytest.mark.parametrize("kind", KINDS)
def test_the_shared_sort_equals_each_metric_on_its_own(kind, n):
    conf, target = _sample(kind, n, seed=n)
    r = Ranking(conf, target)
    binary = bool(np.isin(target, (0.0, 1.0)).all())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", M.UndefinedMetricWarning)
        pairs = {"auarc": (r.auarc(), M.auarc(conf, target)),
                 "aurc": (r.aurc(), M.aurc(conf, 1.0 - target)),
                 "prr": (r.prediction_rejection_ratio(),
                         M.prediction_rejection_ratio(conf, target)),
                 "rce": (r.rank_calibration_error(20),
                         M.rank_calibration_error(conf, target, n_bins=20)),
                 "rce 3": (r.rank_calibration_error(3),
                           M.rank_calibration_error(conf, target, n_bins=3))}
        if binary:
            pairs["auroc"] = (r.auroc(), M.auroc(conf, target))
    for name, (shared, alone) in pairs.items():
        if np.isnan(alone):
            assert np.isnan(shared), name
        else:
            assert shared == pytest.approx(alone, rel=0, abs=1e-12), name
    coverage, risk = r.risk_coverage_curve()
    expected = M.risk_coverage_curve(conf, 1.0 - target)
    np.testing.assert_allclose(coverage, expected[0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(risk, expected[1], rtol=0, atol=1e-12)


@pytest.mark.parametrize("kind", ["continuous", "rounded", "graded ties"])
def test_the_sorted_sample_on_the_shared_sort_is_the_one_made_alone(kind):
    """Given the evaluation's sort and bins, the same cells, chunks and resamples."""
    from confeval.metrics.calibration import bin_indices

    conf, target = _sample(kind, 500, seed=4)
    alone = SortedSample(conf, target, 15, chunk=64)
    shared = SortedSample(conf, target, 15, chunk=64, ranking=Ranking(conf, target),
                          bins=bin_indices(conf, 15))
    for name in ("order", "c", "t", "g", "starts", "block_starts"):
        np.testing.assert_array_equal(getattr(alone, name), getattr(shared, name), name)
    for a, b in zip(alone.chunks, shared.chunks):
        np.testing.assert_array_equal(a.cols, b.cols)
        np.testing.assert_array_equal(a.seg_bins, b.seg_bins)
    a = alone.bootstrap(40, np.random.default_rng(3))
    b = shared.bootstrap(40, np.random.default_rng(3))
    for name in a:
        np.testing.assert_array_equal(a[name], b[name], name)


@pytest.mark.parametrize("kind", ["continuous", "likert", "graded ties"])
def test_evaluate_confidence_reports_each_metric_on_its_own(kind):
    """The point estimates of the one-sort evaluation are the public metrics' (1e-12)."""
    conf, target = _sample(kind, 400, seed=9)
    res = evaluate_confidence(conf, target, n_resamples=0)
    binary = kind != "graded ties"
    expected = {"auarc": M.auarc(conf, target), "aurc": M.aurc(conf, 1.0 - target),
                "prr": M.prediction_rejection_ratio(conf, target),
                "rce": M.rank_calibration_error(conf, target, n_bins=20)}
    if binary:
        expected["auroc"] = M.auroc(conf, target)
    expected.update(ece=M.expected_calibration_error(conf, target, n_bins=15),
                    mce=M.maximum_calibration_error(conf, target, n_bins=15))
    for name, value in expected.items():
        assert res[name] == pytest.approx(value, rel=0, abs=1e-12), name
    assert json.dumps(res["reliability"]) == json.dumps(
        M.reliability_diagram(conf, target, n_bins=15).to_dict())   # (NaN for empty bins)
    _, risk = M.risk_coverage_curve(conf, 1.0 - target)
    keep = np.unique(np.linspace(0, risk.size - 1, 201).round().astype(np.int64))
    np.testing.assert_allclose(res["risk_coverage"]["risk"], risk[keep], rtol=0, atol=1e-12)
