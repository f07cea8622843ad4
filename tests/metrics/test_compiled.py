"""The compiled pass over untied chunks (``confeval.metrics._compiled``, numba, the extra
``fast``): given the same seed it draws the same resamples as the numpy pass, so with 0/1
targets accuracy and AUROC (sums of integers) are equal bit for bit, and every other number
(float sums added in another order) to 1e-10; it is taken only where ``_ROUTE`` and the
sample's size say so."""

import itertools

import numpy as np
import pytest

from confeval.evaluate import evaluate_confidence
from confeval.metrics import _compiled
from confeval.metrics import weighted as W

pytest.importorskip("numba", reason="the compiled pass needs numba (pip install 'confeval[fast]')")

EXACT = ("accuracy", "auroc")


def _sample(n, seed, graded=False):
    rng = np.random.default_rng(seed)
    conf = rng.random(n)
    target = rng.random(n) if graded else (rng.random(n) < conf) * 1.0
    return conf, target


def _alternating(n, seed):
    """0/1 targets that change at every cell in the order of confidence: the position terms
    at every cell (the kernel's other branch), the squared positions read for the AUROC."""
    conf = np.random.default_rng(seed).random(n)
    target = np.empty(n)
    target[np.argsort(-conf)] = np.arange(n) % 2
    return conf, target


def _assert_same(ref, got, exact):
    assert ref.keys() == got.keys()
    for name in ref:
        if name in EXACT and exact:   # sums of integers
            np.testing.assert_array_equal(got[name], ref[name], err_msg=name)
        else:   # float sums added in another order
            np.testing.assert_allclose(got[name], ref[name], rtol=1e-10, atol=0, err_msg=name)


def _both_routes(sample, resamples, seed, monkeypatch):
    out = {}
    for route in ("numpy", "compiled"):
        monkeypatch.setattr(W, "_ROUTE", route)
        out[route] = sample.bootstrap(resamples, np.random.default_rng(seed))
    return out["numpy"], out["compiled"]


@pytest.mark.parametrize("graded", [False, True], ids=["binary", "graded"])
@pytest.mark.parametrize(("n", "n_bins"), [(50_000, 15), (50_000, None), (50_000, 45),
                                           (40_003, 15), (40_003, None)])
def test_the_compiled_pass_gives_the_numpy_pass_numbers(n, n_bins, graded, monkeypatch):
    """Chunks of 8,192 untied cells (binary targets: position terms at the run ends only;
    graded targets in [0, 1]: at every cell), a last chunk that is not a power of two
    (numpy's pass), 45 bins (where a chunk spans more than 8 bins it sums them apart: numpy's
    pass between compiled chunks), the running position carried from one chunk to the
    next."""
    conf, target = _sample(n, 3, graded)
    sample = W.SortedSample(conf, target, n_bins=n_bins)
    compiled = [ch.compilable for ch in sample.chunks]
    assert sum(compiled) >= 3 and not compiled[-1]
    if n_bins == 45:
        assert compiled[:6] == [True, True, False, True, False, True]
    ref, got = _both_routes(sample, 40, 11, monkeypatch)
    assert ("auroc" in got) == (not graded)
    _assert_same(ref, got, exact=not graded)


@pytest.mark.parametrize("n_bins", [15, None])
def test_binary_targets_changing_at_every_cell(n_bins, monkeypatch):
    """Every cell a run end: the kernel's every-cell branch, its squared positions in the
    AUROC (a wrong one moved this AUROC from ~0.5 to ~0.74)."""
    sample = W.SortedSample(*_alternating(3 * 8192 + 100, 4), n_bins=n_bins)
    assert all(ch.run_ends is None for ch in sample.chunks[:3])
    assert [ch.compilable for ch in sample.chunks] == [True, True, True, False]
    ref, got = _both_routes(sample, 24, 5, monkeypatch)
    _assert_same(ref, got, exact=True)
    assert abs(np.mean(got["auroc"]) - 0.5) < 0.01


def test_a_compiled_last_chunk_reads_the_table_made_once(monkeypatch):
    """n a multiple of 8,192: the last chunk is compiled too, and the F(k) table made for n
    draws is the one read (it was grown to 2n in the blocks' threads by a bound too wide)."""
    conf, target = _sample(4 * 8192, 9)
    sample = W.SortedSample(conf, target, n_bins=15)
    assert all(ch.compilable for ch in sample.chunks)
    table = sample._f
    ref, got = _both_routes(sample, 32, 3, monkeypatch)
    _assert_same(ref, got, exact=True)
    assert sample._f is table and table.size == conf.size + 1


def test_a_tied_sample_takes_no_compiled_pass_and_compiles_nothing(monkeypatch):
    """Confidences with two decimals (a typical verbalised confidence): no untied chunk, so
    no kernel is asked for however many rows."""
    rng = np.random.default_rng(1)
    conf = np.round(rng.random(20_000), 2)
    sample = W.SortedSample(conf, (rng.random(conf.size) < conf) * 1.0, n_bins=15)
    monkeypatch.setattr(W, "COMPILED_BOOTSTRAP_ROWS", 1000)
    monkeypatch.setattr(_compiled, "untied_pass", lambda: pytest.fail("asked for the kernel"))
    assert not sample.compilable and sample._kernel is None


def test_the_kernel_counts_and_sums_as_the_formulas_say():
    """One chunk of 4 cells by hand: counts of the draws, the weighted sums, the rise of F and
    the squared positions at the run ends, the draws in the chunk."""
    kernel = _compiled.untied_pass()
    draws = np.array([0, 2, 2, 3, 1, 1], dtype=np.uint16)   # resample 0: 4 draws; 1: 2 draws
    per_resample = np.array([4, 2], dtype=np.int64)
    cols = np.array([[1.0, 0.5], [0.0, 2.0], [1.0, -1.0], [0.0, 4.0]])
    f = np.arange(20, dtype=np.float64) ** 2   # any table: F(k) = k^2 here
    start = np.array([3, 7], dtype=np.int64)
    dt = np.array([1.0, -1.0])                 # kept at cells 0 and 2
    ends = np.array([0, 2], dtype=np.int64)
    sums, rise, squares, total = np.empty((2, 2)), np.empty(2), np.empty(2), np.empty(2)
    kernel(draws, per_resample, cols, dt, ends, False, f, start, sums, rise, squares, total)
    counts = np.array([[1, 0, 2, 1], [0, 2, 0, 0]], dtype=float)
    np.testing.assert_array_equal(sums, counts @ cols)
    local = np.cumsum(counts, axis=1)[:, ends]                 # draws up to cells 0 and 2
    expected_rise = ((f[(start[:, None] + local).astype(int)] - f[start][:, None]) @ dt)
    np.testing.assert_array_equal(rise, expected_rise)         # [1*(16-9) - 1*(36-9), 0 - (81-49)]
    np.testing.assert_array_equal(rise, [7.0 - 27.0, 0.0 - 32.0])
    np.testing.assert_array_equal(squares, (local ** 2) @ dt)
    np.testing.assert_array_equal(total, [4, 2])


def _untied_pass_in_python(draws, per_resample, cols, dt, ends, every_cell, f, start):
    """The kernel's docstring as plain Python floats: every sum taken cell after cell."""
    m, width = cols.shape
    sums, rise, squares, total = [], [], [], []
    at = 0
    for r, d in enumerate(per_resample):
        counts = [0] * m
        for cell in draws[at:at + d]:
            counts[int(cell)] += 1
        at += d
        row = []
        for j in range(width):
            acc = 0.0
            for k in range(m):
                acc += counts[k] * float(cols[k, j])
            row.append(acc)
        local = list(itertools.accumulate(counts))
        kept = range(m) if every_cell else ends
        area = square = 0.0
        for i, k in enumerate(kept):
            e = local[k]
            area += (float(f[start[r] + e]) - float(f[start[r]])) * float(dt[i])
            square += float(e) * float(e) * float(dt[i])
        sums.append(row)
        rise.append(area)
        squares.append(square)
        total.append(local[-1])
    return np.array(sums), np.array(rise), np.array(squares), np.array(total, dtype=float)


@pytest.mark.parametrize("every_cell", [False, True], ids=["run-ends", "every-cell"])
@pytest.mark.parametrize("width", [1, 2, 3, 4, 5, 7, 10])
def test_the_kernel_adds_every_sum_in_cell_order(width, every_cell):
    """Against the docstring in plain Python, bit for bit, at every number of columns the
    kernel takes (1-4 in local variables, more from the running count) and in both branches
    of the position terms: the same additions in the same order, so the same floats."""
    rng = np.random.default_rng(width * 2 + every_cell)
    m, b = 256, 5
    per_resample = rng.integers(0, 2 * m, b).astype(np.int64)
    draws = rng.integers(0, m, int(per_resample.sum())).astype(np.uint16)
    cols = rng.normal(size=(m, width)) * rng.choice([1e-3, 1.0, 1e3], size=(m, width))
    ends = np.sort(rng.choice(m, m // 3, replace=False)).astype(np.int64)
    dt = rng.normal(size=m if every_cell else ends.size)
    f = np.cumsum(rng.random(4 * m))   # any increasing table
    start = rng.integers(0, 2 * m, b).astype(np.int64)
    out = np.empty((b, width)), np.empty(b), np.empty(b), np.empty(b)
    _compiled.untied_pass()(draws, per_resample, cols, dt, ends, every_cell, f, start, *out)
    expected = _untied_pass_in_python(draws, per_resample, cols, dt, ends, every_cell, f, start)
    for name, got, want in zip(("sums", "rise", "squares", "total"), out, expected):
        np.testing.assert_array_equal(got, want, err_msg=name)


def test_intervals_are_the_same_from_either_route(monkeypatch):
    """evaluate_confidence end to end, threads and blocks included: the same intervals."""
    conf, correct = _sample(60_000, 5)
    found = {}
    for route in ("numpy", "compiled"):
        monkeypatch.setattr(W, "_ROUTE", route)
        found[route] = evaluate_confidence(conf, correct, n_resamples=48, seed=4)["ci"]
    assert found["numpy"].keys() == found["compiled"].keys()
    for metric, ref in found["numpy"].items():
        for key, value in ref.items():   # low, high, std_error
            np.testing.assert_allclose(found["compiled"][metric][key], value, rtol=1e-10,
                                       atol=1e-15, err_msg=f"{metric} {key}")


def test_numba_is_here_and_compiles():
    assert _compiled.untied_pass() is not None and _compiled.unavailable() == ""


def test_the_route_follows_the_setting_and_the_size(monkeypatch):
    small = W.SortedSample(*_sample(8192, 1))   # one chunk of 2^13 untied rows
    assert small.compilable
    assert W._ROUTE == "auto" and small._kernel is None   # below COMPILED_BOOTSTRAP_ROWS
    monkeypatch.setattr(W, "COMPILED_BOOTSTRAP_ROWS", 8192)
    assert small._kernel is _compiled.untied_pass()
    monkeypatch.setattr(W, "_ROUTE", "numpy")
    assert small._kernel is None
    monkeypatch.setattr(W, "_ROUTE", "compiled")
    monkeypatch.setattr(W, "COMPILED_BOOTSTRAP_ROWS", 10**9)
    assert small._kernel is _compiled.untied_pass()


def test_without_numba_auto_falls_back_and_compiled_says_what_is_missing(monkeypatch):
    monkeypatch.setattr(_compiled, "untied_pass", lambda: None)
    monkeypatch.setattr(_compiled, "unavailable", lambda: "numba is not installed")
    monkeypatch.setattr(W, "COMPILED_BOOTSTRAP_ROWS", 10)
    conf, correct = _sample(500, 2)
    sample = W.SortedSample(conf, correct, n_bins=15)
    assert sample._kernel is None
    monkeypatch.setattr(W, "_ROUTE", "numpy")
    ref = sample.bootstrap(8, np.random.default_rng(0))
    monkeypatch.setattr(W, "_ROUTE", "auto")
    got = sample.bootstrap(8, np.random.default_rng(0))
    for name in ref:
        np.testing.assert_array_equal(got[name], ref[name])
    monkeypatch.setattr(W, "_ROUTE", "compiled")
    with pytest.raises(RuntimeError, match=r"needs numba .*confeval\[fast\].*not installed"):
        sample.bootstrap(8, np.random.default_rng(0))
