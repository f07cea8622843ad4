"""The count-weighted bootstrap of ``evaluate_confidence`` (from 50 rows on): for any counts,
each metric equals the metric of the sample with row i repeated counts[i] times
(numpy.repeat), ties included, over one chunk or many; given the same resample indices it
equals the index bootstrap's row-wise metrics; its own draws are the multinomial bootstrap's
(each cell's count Binomial(n, g/n), every resample n draws), and its intervals agree with the
index bootstrap's within Monte Carlo error over seeds."""

import warnings

import numpy as np
import pytest

from confeval import metrics as M
from confeval.evaluate import evaluate_confidence
from confeval.metrics.bootstrap import BATCHED, resample_counts
from confeval.metrics.weighted import SortedSample, bootstrap_metrics

KINDS = ["continuous", "likert", "all tied", "graded", "rounded", "graded ties"]


def _sample(kind, n, rng):
    conf = {"continuous": rng.random(n), "likert": np.round(rng.random(n) * 4) / 4,
            "all tied": np.full(n, 0.7), "graded": rng.random(n),
            "rounded": np.round(rng.random(n), 2),
            "graded ties": np.round(rng.random(n), 1)}[kind]
    if kind.startswith("graded"):
        target = np.round(rng.random(n) * 4) / 4
    else:
        target = (rng.random(n) < conf).astype(float)
    return conf, target


def _repeated(conf, target, counts):
    idx = np.repeat(np.arange(conf.size), counts.astype(int))
    c, t = conf[idx], target[idx]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", M.UndefinedMetricWarning)
        out = {"accuracy": t.mean(), "brier": M.brier_score(c, t),
               "ece": M.expected_calibration_error(c, t, n_bins=15), "auarc": M.auarc(c, t)}
        if np.isin(target, (0.0, 1.0)).all():
            out["auroc"] = M.auroc(c, t)
    return out


@pytest.mark.parametrize("chunk", [8192, 7, 50])
@pytest.mark.parametrize("kind", KINDS)
def test_weighted_metrics_equal_the_repeated_sample(kind, chunk):
    rng = np.random.default_rng(1)
    n = 400
    conf, target = _sample(kind, n, rng)
    sample = SortedSample(conf, target, n_bins=15, chunk=chunk)
    counts = np.concatenate([next(resample_counts(n, 3, rng, scheme="poisson")),
                             next(resample_counts(n, 3, rng))])
    found = sample.metrics(sample.sort(counts))
    for r in range(counts.shape[0]):
        expected = _repeated(conf, target, counts[r])
        assert set(found) == set(expected)
        for name, value in expected.items():
            if kind == "all tied" and name == "auroc":
                value = 0.5
            assert found[name][r] == pytest.approx(value, abs=1e-12), (name, r)


@pytest.mark.parametrize("kind", KINDS)
def test_given_the_same_indices_the_counts_equal_the_index_bootstrap(kind):
    """The route of every size against the index route's own row-wise metrics
    (:data:`confeval.metrics.bootstrap.BATCHED`, what ``bootstrap_ci`` evaluates) on the same
    resample indices: equal to 1e-12."""
    rng = np.random.default_rng(2)
    n, r = 300, 40
    conf, target = _sample(kind, n, rng)
    idx = rng.integers(0, n, size=(r, n))
    counts = np.stack([np.bincount(i, minlength=n) for i in idx]).astype(float)
    found = SortedSample(conf, target, n_bins=15, chunk=16).metrics(
        SortedSample(conf, target, n_bins=15, chunk=16).sort(counts))
    c, t = conf[idx], target[idx]
    index_route = {"accuracy": BATCHED[np.mean](t), "brier": BATCHED[M.brier_score](c, t),
                   "ece": BATCHED[M.expected_calibration_error](c, t, n_bins=15),
                   "auarc": BATCHED[M.auarc](c, t)}
    if not kind.startswith("graded"):
        index_route["auroc"] = BATCHED[M.auroc](c, t)
    for name, values in index_route.items():
        np.testing.assert_allclose(found[name], values, rtol=0, atol=1e-12, err_msg=name)


def _drawn_counts(sample, n_resamples, rng):
    """The cell counts :meth:`SortedSample.bootstrap` draws, chunk by chunk, as one array."""
    totals = rng.multinomial(sample.n, sample.chunk_rows / sample.n, size=n_resamples)
    return np.concatenate([sample._draw(ch, totals[:, j], rng)
                           for j, ch in enumerate(sample.chunks)], axis=1)


@pytest.mark.parametrize("kind", ["continuous", "likert", "rounded"])
def test_the_drawn_counts_are_the_multinomial_bootstrap(kind):
    """n draws in every resample; each cell's count has the Binomial(n, g/n) mean and
    variance, two cells' counts the multinomial covariance -n p_i p_j (4,000 resamples, the
    tolerance 5 standard errors); sparse, tied and dense chunks alike."""
    rng = np.random.default_rng(3)
    n, reps = 200, 4000
    conf, target = _sample(kind, n, rng)
    sample = SortedSample(conf, target, n_bins=15, chunk=9)
    assert kind != "likert" or any(ch.dense for ch in sample.chunks)
    counts = _drawn_counts(sample, reps, rng)
    assert counts.shape == (reps, sample.K) and (counts.sum(axis=1) == n).all()
    p = sample.g / n
    mean, var = counts.mean(axis=0), counts.var(axis=0, ddof=1)
    se_mean = np.sqrt(n * p * (1 - p) / reps)
    assert (np.abs(mean - n * p) < 5 * se_mean + 1e-12).all()
    se_var = np.sqrt(2 / reps) * n * p * (1 - p) + 1e-12
    assert (np.abs(var - n * p * (1 - p)) < 5 * se_var + 0.05).all()
    cov = np.cov(counts[:, 0], counts[:, -1])[0, 1]
    assert abs(cov + n * p[0] * p[-1]) < 5 * np.sqrt(n * p[0] * n * p[-1] / reps) + 0.01


def test_chunks_of_a_power_of_two_rows_draw_uniform_row_numbers_from_raw_bits():
    """A chunk of 2^k rows takes each row number as the top k of 16 random bits: the counts
    are still the multinomial bootstrap's (each cell Binomial(n, 1/n) in mean and variance,
    n draws per resample; 4,000 resamples, 5 standard errors), and seeded."""
    rng = np.random.default_rng(13)
    n, reps = 256, 4000
    conf, target = _sample("continuous", n, rng)
    sample = SortedSample(conf, target, n_bins=15, chunk=32)
    assert all(ch.bits == 5 for ch in sample.chunks)
    counts = _drawn_counts(sample, reps, rng)
    assert (counts.sum(axis=1) == n).all()
    p = 1 / n
    mean, var = counts.mean(axis=0), counts.var(axis=0, ddof=1)
    assert (np.abs(mean - n * p) < 5 * np.sqrt(n * p * (1 - p) / reps)).all()
    assert (np.abs(var - n * p * (1 - p)) < 5 * np.sqrt(2 / reps) * n * p * (1 - p) + 0.05).all()
    assert abs(np.corrcoef(counts[:, 0], counts[:, 1])[0, 1] + 1 / (n - 1)) < 5 / np.sqrt(reps)
    again = _drawn_counts(sample, 3, np.random.default_rng(1))
    assert np.array_equal(again, _drawn_counts(sample, 3, np.random.default_rng(1)))


@pytest.mark.parametrize("kind", ["continuous", "rounded"])
def test_intervals_agree_with_the_index_bootstrap_over_seeds(kind):
    """The interval endpoints of ``evaluate_confidence`` and of the index bootstrap
    (``bootstrap_ci``, one metric at a time) over 30 seeds each: their means differ by less
    than 4 standard errors of the difference (Monte Carlo error), for every metric."""
    rng = np.random.default_rng(4)
    n, resamples, seeds = 250, 200, 30
    conf, target = _sample(kind, n, rng)
    ours = {k: [] for k in ("accuracy", "brier", "ece", "auroc", "auarc")}
    index = {k: [] for k in ours}
    metric = {"accuracy": (np.mean, (target,), {}), "brier": (M.brier_score, (conf, target), {}),
              "ece": (M.expected_calibration_error, (conf, target), {"n_bins": 15}),
              "auroc": (M.auroc, (conf, target), {}), "auarc": (M.auarc, (conf, target), {})}
    for seed in range(seeds):
        ci = evaluate_confidence(conf, target, n_resamples=resamples, seed=seed)["ci"]
        for name, (fn, arrays, kw) in metric.items():
            ours[name].append((ci[name]["low"], ci[name]["high"]))
            res = M.bootstrap_ci(fn, *arrays, n_resamples=resamples, seed=1000 + seed, **kw)
            index[name].append((res.low, res.high))
    for name in metric:
        a, b = np.array(ours[name]), np.array(index[name])
        se = np.sqrt(a.var(axis=0, ddof=1) / seeds + b.var(axis=0, ddof=1) / seeds)
        assert (np.abs(a.mean(axis=0) - b.mean(axis=0)) < 4 * se + 1e-12).all(), name


def test_counts_are_seeded_poisson_and_touch_no_global_rng():
    state = np.random.get_state()[1].copy()  # noqa: NPY002 - checking it is untouched
    a = np.concatenate(list(resample_counts(1000, 20, np.random.default_rng(3), scheme="poisson")))
    b = np.concatenate(list(resample_counts(1000, 20, np.random.default_rng(3), scheme="poisson")))
    assert a.shape == (20, 1000) and np.array_equal(a, b)
    assert a.mean() == pytest.approx(1.0, abs=0.02) and a.var() == pytest.approx(1.0, abs=0.05)
    evaluate_confidence(np.linspace(0, 1, 50), np.arange(50) % 2, n_resamples=20, seed=1)
    assert (np.random.get_state()[1] == state).all()  # noqa: NPY002


def test_progress_is_called_once_per_block_of_resamples():
    from confeval.metrics.weighted import RESAMPLE_BLOCK

    rng = np.random.default_rng(5)
    conf = rng.random(3000)
    correct = (rng.random(3000) < conf).astype(float)
    seen = []
    evaluate_confidence(conf, correct, n_resamples=100, seed=1,
                        progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (100, 100) and len(seen) == -(-100 // RESAMPLE_BLOCK)


def test_large_sample_intervals_do_not_depend_on_the_threads(monkeypatch):
    """Each block of resamples has its own seeded stream: one thread or several, the same
    intervals to the last bit."""
    from concurrent.futures import ThreadPoolExecutor

    import confeval.evaluate as E

    rng = np.random.default_rng(6)
    conf = np.round(rng.random(2000) * 10) / 10   # with ties
    correct = (rng.random(2000) < conf).astype(float)
    monkeypatch.setattr(E, "parallel_map", map)   # one thread
    one = evaluate_confidence(conf, correct, n_resamples=60, seed=2)["ci"]
    with ThreadPoolExecutor(max_workers=3) as pool:
        monkeypatch.setattr(E, "parallel_map", pool.map)
        assert evaluate_confidence(conf, correct, n_resamples=60, seed=2)["ci"] == one


def test_blocks_are_the_same_numbers_as_one_call():
    """bootstrap_metrics's blocks, each with its stream, are SortedSample.bootstrap of them."""
    rng = np.random.default_rng(7)
    conf, target = _sample("rounded", 500, rng)
    sample = SortedSample(conf, target, n_bins=15)
    blocks = list(bootstrap_metrics(sample, 40, 9))
    streams = np.random.SeedSequence(9).spawn(len(blocks))
    for (size, found), stream in zip(blocks, streams):
        again = sample.bootstrap(size, np.random.default_rng(stream))
        for name in found:
            np.testing.assert_array_equal(found[name], again[name])


def test_below_the_threshold_each_metric_is_bootstrapped_by_index(monkeypatch):
    """Under FAST_BOOTSTRAP_ROWS rows the intervals are bootstrap_ci's, one metric at a time
    (seed + its position); from it on, the counts route's (SortedSample over the blocks)."""
    import confeval.evaluate as E
    from confeval.metrics.weighted import FAST_BOOTSTRAP_ROWS

    rng = np.random.default_rng(8)
    for n in (FAST_BOOTSTRAP_ROWS - 1, FAST_BOOTSTRAP_ROWS):
        conf, target = _sample("rounded", n, rng)
        ci = evaluate_confidence(conf, target, n_resamples=100, seed=3)["ci"]
        if n < FAST_BOOTSTRAP_ROWS:
            res = M.bootstrap_ci(M.auarc, conf, target, n_resamples=100, seed=3 + 4)
            assert (ci["auarc"]["low"], ci["auarc"]["high"]) == (res.low, res.high)
        else:
            reps = np.concatenate([found["auarc"] for _, found in bootstrap_metrics(
                SortedSample(conf, target, n_bins=15), 100, 3, map)])
            assert ci["auarc"]["low"] == pytest.approx(np.quantile(reps, 0.025), abs=1e-12)
            assert ci["auarc"]["high"] == pytest.approx(np.quantile(reps, 0.975), abs=1e-12)
    assert E.FAST_BOOTSTRAP_ROWS == FAST_BOOTSTRAP_ROWS


@pytest.mark.parametrize("kind", KINDS)
def test_memory_bounds_do_not_change_the_numbers(kind, monkeypatch):
    """The bounds on memory only cut the work: a chunk taken a few resamples at a time
    (``_MAX_BLOCK_ELEMENTS``), the position terms at every cell or only where a run of equal
    targets ends (``_RUN_SHARE``) and any chunk size give the same metrics of the same counts,
    and the same draws the same numbers (1e-12: BLAS may round a product of fewer rows
    differently)."""
    import confeval.metrics.weighted as W

    rng = np.random.default_rng(11)
    n = 600
    conf, target = _sample(kind, n, rng)
    counts = np.concatenate([next(resample_counts(n, 5, rng)),
                             next(resample_counts(n, 3, rng, scheme="poisson"))])

    def run():
        sample = SortedSample(conf, target, n_bins=15, chunk=64)
        return sample.metrics(sample.sort(counts)), sample.bootstrap(12, np.random.default_rng(4))

    given, drawn = run()
    monkeypatch.setattr(W, "_MAX_BLOCK_ELEMENTS", 100)      # one or two resamples at a time
    small_given, small_drawn = run()
    for name in given:
        np.testing.assert_allclose(small_given[name], given[name], rtol=0, atol=1e-12,
                                   err_msg=name)
        np.testing.assert_allclose(small_drawn[name], drawn[name], rtol=0, atol=1e-12,
                                   err_msg=name)
    for share in (0.0, 1.0):                                 # every cell / the run ends only
        monkeypatch.setattr(W, "_RUN_SHARE", share)
        other, _ = run()
        for name in given:
            np.testing.assert_allclose(other[name], given[name], rtol=0, atol=1e-12,
                                       err_msg=name)
    for chunk in (7, 8192):
        sample = SortedSample(conf, target, n_bins=15, chunk=chunk)
        other = sample.metrics(sample.sort(counts))
        for name in given:
            np.testing.assert_allclose(other[name], given[name], rtol=0, atol=1e-12,
                                       err_msg=name)


def test_the_position_terms_keep_their_precision_at_a_million_rows():
    """AUARC of a resample of 10^6 rows against the running accuracies summed in long double
    (each F(e) - F(carry) is formed before the sum: 1e-12 and better; summing the F(e)
    themselves and subtracting afterwards lost ~3e-12)."""
    rng = np.random.default_rng(12)
    n = 10**6
    conf = rng.random(n)
    target = (rng.random(n) < conf).astype(float)
    counts = next(resample_counts(n, 1, rng))
    sample = SortedSample(conf, target, n_bins=15)
    found = sample.metrics(sample.sort(counts))["auarc"][0]
    idx = np.repeat(np.arange(n), counts[0].astype(int))
    y = target[idx][np.argsort(-conf[idx], kind="stable")].astype(np.longdouble)
    k = np.arange(1, y.size + 1, dtype=np.longdouble)
    reference = (np.cumsum(y) / k).sum() / y.size
    assert abs(float(found - reference)) < 1e-12


@pytest.mark.parametrize("m", [1, 15, 16, 17, 33, 8192, 8203])
def test_prefix_sums_are_numpys_running_sums_exactly(m):
    """The running sums the passes take from a matrix product (numpy's accumulate holds the
    GIL): the same integers as ``np.cumsum`` along each row, whole runs of 16 or not."""
    from confeval.metrics.weighted import _prefix_sums

    counts = np.random.default_rng(m).integers(0, 5, size=(3, m)).astype(np.float64)
    counts[1, : m // 2] = 0.0
    assert np.array_equal(_prefix_sums(counts), np.cumsum(counts, axis=1))
