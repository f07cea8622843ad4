"""Count-weighted metrics for the large-sample bootstrap: for any counts, each equals the
metric of the sample with row i repeated counts[i] times (numpy.repeat), ties included."""

import numpy as np
import pytest

from confeval import metrics as M
from confeval.evaluate import evaluate_confidence
from confeval.metrics.bootstrap import resample_counts
from confeval.metrics.weighted import SortedSample


@pytest.mark.parametrize("kind", ["continuous", "likert", "all tied", "graded"])
def test_weighted_metrics_equal_the_repeated_sample(kind):
    rng = np.random.default_rng(1)
    n = 400
    conf = {"continuous": rng.random(n), "likert": np.round(rng.random(n) * 4) / 4,
            "all tied": np.full(n, 0.7), "graded": rng.random(n)}[kind]
    target = rng.random(n) if kind == "graded" else (rng.random(n) < conf).astype(float)
    sample = SortedSample(conf, target, n_bins=15)
    counts = next(resample_counts(n, 4, rng, scheme="poisson"))
    weights = sample.sort(counts)
    for r in range(4):
        idx = np.repeat(np.arange(n), counts[r].astype(int))
        c, t = conf[idx], target[idx]
        assert sample.mean(weights)[r] == pytest.approx(t.mean(), abs=1e-12)
        assert sample.brier(weights)[r] == pytest.approx(M.brier_score(c, t), abs=1e-12)
        assert sample.ece(weights)[r] == pytest.approx(
            M.expected_calibration_error(c, t, n_bins=15), abs=1e-12)
        assert sample.auarc(weights)[r] == pytest.approx(M.auarc(c, t), abs=1e-10)
        if kind != "graded":
            expected = M.auroc(c, t) if kind != "all tied" else 0.5
            assert sample.auroc(weights)[r] == pytest.approx(expected, abs=1e-12)
    together = sample.metrics(weights)   # one pass for all: the same numbers
    singles = {"accuracy": sample.mean, "brier": sample.brier, "ece": sample.ece,
               "auarc": sample.auarc, "auroc": sample.auroc}
    assert set(together) == set(singles) - ({"auroc"} if kind == "graded" else set())
    for name, values in together.items():
        np.testing.assert_allclose(values, singles[name](weights), rtol=1e-13, atol=1e-15)


def test_counts_are_seeded_poisson_and_touch_no_global_rng():
    state = np.random.get_state()[1].copy()  # noqa: NPY002 - checking it is untouched
    a = np.concatenate(list(resample_counts(1000, 20, np.random.default_rng(3), scheme="poisson")))
    b = np.concatenate(list(resample_counts(1000, 20, np.random.default_rng(3), scheme="poisson")))
    assert a.shape == (20, 1000) and np.array_equal(a, b)
    assert a.mean() == pytest.approx(1.0, abs=0.02) and a.var() == pytest.approx(1.0, abs=0.05)
    assert (np.random.get_state()[1] == state).all()  # noqa: NPY002


def test_large_sample_intervals_agree_with_the_index_bootstrap(monkeypatch):
    """Forcing the count path on 3,000 rows gives intervals within sampling noise of the
    index bootstrap's, and calls progress once per block of resamples."""
    import confeval.evaluate as E

    rng = np.random.default_rng(5)
    conf = rng.random(3000)
    correct = (rng.random(3000) < conf).astype(float)
    slow = evaluate_confidence(conf, correct, n_resamples=400, seed=1)["ci"]
    monkeypatch.setattr(E, "FAST_BOOTSTRAP_ROWS", 1000)
    seen = []
    fast = evaluate_confidence(conf, correct, n_resamples=400, seed=1,
                               progress=lambda done, total: seen.append((done, total)))["ci"]
    assert set(fast) == set(slow)
    for name in slow:
        width = slow[name]["high"] - slow[name]["low"]
        assert abs(fast[name]["low"] - slow[name]["low"]) < 0.25 * width + 1e-9, name
        assert abs(fast[name]["std_error"] / slow[name]["std_error"] - 1) < 0.2, name
    assert seen[-1] == (400, 400) and len(seen) == 400 // E._COUNT_BLOCK


def test_large_sample_intervals_do_not_depend_on_the_threads(monkeypatch):
    """Each block of resamples has its own seeded stream: one thread or several, the same
    intervals to the last bit."""
    from concurrent.futures import ThreadPoolExecutor

    import confeval.evaluate as E

    rng = np.random.default_rng(6)
    conf = np.round(rng.random(2000) * 10) / 10   # with ties
    correct = (rng.random(2000) < conf).astype(float)
    monkeypatch.setattr(E, "FAST_BOOTSTRAP_ROWS", 1000)
    monkeypatch.setattr(E, "parallel_map", map)   # one thread
    one = evaluate_confidence(conf, correct, n_resamples=60, seed=2)["ci"]
    with ThreadPoolExecutor(max_workers=3) as pool:
        monkeypatch.setattr(E, "parallel_map", pool.map)
        assert evaluate_confidence(conf, correct, n_resamples=60, seed=2)["ci"] == one
