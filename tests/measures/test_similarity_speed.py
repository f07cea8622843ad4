"""The fast paths of the similarity measures decide what the plain definitions decide: the
one-pass range check (bits of the entries) against min/max, the linear tie detection (sorted
keys, neighbours compared) against comparing every pair of rows, on hand cases, random stacks
and real Jaccard matrices (UQ-NLG's TriviaQA sample)."""

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from confeval import measures as MS
from confeval.measures import similarity

DEMO = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "uq-nlg-triviaqa-demo"


def _pairwise_first(rows):
    """The quadratic definition: each row's first identical row."""
    equal = (rows[:, :, None, :] == rows[:, None, :, :]).all(axis=3)
    return np.argmax(equal, axis=2)


def _check_first(rows, real=None):
    want = _pairwise_first(rows)
    got = similarity._first_equal_rows(rows, real=real)
    if real is not None:   # rows beyond a size never count as ties
        want = np.where(real, want, np.arange(rows.shape[1]))
        if got is not None:
            got = np.where(real, got, np.arange(rows.shape[1]))
    if got is None:
        np.testing.assert_array_equal(want, np.broadcast_to(np.arange(rows.shape[1]), want.shape))
    else:
        np.testing.assert_array_equal(got, want)
    for k in range(len(rows)):
        one = similarity._first_equal_rows_of(rows[k])
        mine = np.arange(rows.shape[1]) if one is None else np.asarray(one)
        np.testing.assert_array_equal(mine, _pairwise_first(rows[k:k + 1])[0])


@pytest.mark.parametrize("seed", range(40))
def test_linear_ties_equal_the_pairwise_comparison(seed):
    """Few distinct values, so many identical rows and many equal sums of different rows;
    -0.0 equals 0.0."""
    rng = np.random.default_rng(seed)
    q, m, n = rng.integers(1, 7), rng.integers(1, 13), rng.integers(1, 9)
    rows = rng.integers(0, 3, size=(q, m, n)) / 2.0
    if seed % 3 == 0:
        rows[rng.random(rows.shape) < 0.3] = -0.0
    _check_first(rows)
    real = np.arange(m) < rng.integers(1, m + 1, size=(q, 1))
    _check_first(np.where(real[:, :, None], rows, 0.0), real)


def test_keys_shared_by_different_rows_are_sorted_by_the_rows(monkeypatch):
    """With every weight 1 the keys are the plain sums, shared by rows holding the same numbers
    in another order: those stacks are re-sorted by the rows (lexsort) and ties stay exact."""
    monkeypatch.setattr(similarity, "_row_weights", lambda n: np.ones(n))
    rows = np.array([[[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.0, 1.0], [0.5, 0.5]]])
    np.testing.assert_array_equal(similarity._first_equal_rows(rows), [[0, 1, 0, 1, 4]])
    rng = np.random.default_rng(1)
    for _ in range(30):
        q, m, n = rng.integers(1, 5), rng.integers(2, 10), rng.integers(1, 6)
        _check_first(rng.permuted(rng.integers(0, 2, size=(q, m, n)), axis=2).astype(float))


def test_linear_ties_on_real_jaccard_matrices():
    if not DEMO.is_dir():
        pytest.skip(f"needs the shared data at {DEMO}")
    data = json.loads((DEMO / "demo_data.json").read_text())[:120]
    stack = np.stack([MS.jaccard_similarity(q["generations"]["text_cleaned"][:20])
                      for q in data])
    _check_first(stack)
    assert similarity._first_equal_rows(stack) is not None   # real answers repeat


def test_one_pass_range_check_equals_min_and_max():
    tiny = np.nextafter(0.0, 1.0)
    top = 1 + 1e-12
    for value, ok in [(0.0, True), (-0.0, True), (tiny, True), (0.5, True), (1.0, True),
                      (top, True), (np.nextafter(top, 2.0), False), (-tiny, False),
                      (-1.0, False), (np.inf, False), (-np.inf, False), (np.nan, False),
                      (-np.nan, False), (2.0, False)]:
        w = np.full((3, 3), 0.5)
        w[1, 2] = value
        assert similarity._in_unit_interval(w) is ok, value
        assert similarity._in_unit_interval(w.T) is ok, value   # a strided view
        assert bool(np.min(w) >= 0 and np.max(w) <= top) is ok, value
    assert similarity._in_unit_interval(np.empty((0, 0)))


def test_valid_edge_entries_are_accepted_and_bad_ones_refused_by_every_measure():
    w = np.array([[1.0, -0.0, 0.5], [-0.0, 1.0, 0.0], [0.5, 0.0, 1.0]])
    for fn in (MS.degree, MS.eccentricity, MS.eigenvalue):
        fn(w)
    for fn in (MS.degree_batch, MS.eccentricity_batch, MS.eigenvalue_batch):
        fn(w[None])
    for bad in (np.nan, -np.nan, np.inf, -1e-300, 1 + 2e-12):
        v = w.copy()
        v[0, 2] = v[2, 0] = bad
        for fn in (MS.degree, MS.eccentricity, MS.eigenvalue):
            with pytest.raises(ValueError, match=r"similarities in \[0, 1\]"):
                fn(v)
        for fn in (MS.degree_batch, MS.eccentricity_batch, MS.eigenvalue_batch):
            with pytest.raises(ValueError, match=r"similarities in \[0, 1\]"):
                fn(v[None])
    for diagonal in (0.0, -0.0):
        v = w.copy()
        v[2, 2] = diagonal
        for fn in (MS.degree, MS.eccentricity, MS.eigenvalue):
            with pytest.raises(ValueError, match=r"diagonal must be positive.*W\[2, 2\]"):
                fn(v)


# ---------------------------------------------------------------- torch's eigh against numpy's


def _routes(stack, sizes=None, monkeypatch=None):
    out = {}
    for route in ("numpy", "torch"):
        monkeypatch.setattr(similarity, "_EIGH_ROUTE", route)
        out[route] = MS.eccentricity_batch(stack, sizes)
    return out["numpy"], out["torch"]


def _same(a, b):
    np.testing.assert_allclose(a.confidence, b.confidence, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(a.uncertainty, b.uncertainty, rtol=1e-12, atol=1e-12)


def _tied_spectra(m=8):
    """Matrices whose Laplacians have exactly repeated eigenvalues: disconnected responses
    (0, once per component: all kept, any basis of them), all-equal blocks and repeated
    responses (1, several times), a complete graph."""
    out = [np.eye(m), np.ones((m, m))]
    blocks = np.zeros((m, m))
    for a, b in ((0, 3), (3, 5), (5, 6), (6, m)):
        blocks[a:b, a:b] = 1.0
    out.append(blocks)
    half = np.eye(m)
    half[:4, :4] = 0.5
    np.fill_diagonal(half, 1.0)
    out.append(half)
    rng = np.random.default_rng(7)
    w = rng.random((m, m))
    w = (w + w.T) / 2
    np.fill_diagonal(w, 1.0)
    for j in (1, 2):   # responses 1 and 2 repeat response 0: eigenvalue 1 twice
        w[j, :] = w[0, :]
        w[:, j] = w[:, 0]
    w[:3, :3] = 1.0
    out.append(w)
    return np.stack(out)


@pytest.mark.parametrize("seed", range(4))
def test_torch_and_numpy_eigh_give_the_same_eccentricity(seed, monkeypatch):
    pytest.importorskip("torch")
    rng = np.random.default_rng(seed)
    q, m = 70, 12
    stack = rng.random((q, m, m))
    stack = (stack + stack.transpose(0, 2, 1)) / 2
    stack[:, np.arange(m), np.arange(m)] = 1.0
    stack[::3, 1], stack[::3, :, 1] = stack[::3, 0], stack[::3, :, 0]   # repeated responses
    sizes = rng.integers(1, m + 1, size=q)
    _same(*_routes(stack, monkeypatch=monkeypatch))
    _same(*_routes(stack, sizes, monkeypatch=monkeypatch))


def test_torch_and_numpy_eigh_agree_on_exactly_tied_eigenvalues(monkeypatch):
    pytest.importorskip("torch")
    stack = np.concatenate([_tied_spectra()] * 8)   # >= _TORCH_MIN_MATRICES
    laplacians = similarity._laplacians(similarity._batch(stack, spectral=True))
    values = np.linalg.eigvalsh(laplacians)
    # every one has an eigenvalue of several vectors (equal to the last bits or exactly)
    assert (np.diff(values, axis=1) < 1e-12).any(axis=1).all()
    numpy_route, torch_route = _routes(stack, monkeypatch=monkeypatch)
    _same(numpy_route, torch_route)
    # seven disconnected responses: any orthonormal basis of the kept space, the same distances
    np.testing.assert_allclose(-numpy_route.confidence[0], np.sqrt(1 - 1 / 8), rtol=1e-12)
    for out in (numpy_route, torch_route):   # repeated responses stay exact ties
        assert out.confidence[4, 0] == out.confidence[4, 1] == out.confidence[4, 2]


def test_torch_and_numpy_eigh_agree_on_real_jaccard_matrices(monkeypatch):
    pytest.importorskip("torch")
    if not DEMO.is_dir():
        pytest.skip(f"needs the shared data at {DEMO}")
    data = json.loads((DEMO / "demo_data.json").read_text())
    stack = np.stack([MS.jaccard_similarity(q["generations"]["text_cleaned"][:20])
                      for q in data if len(q["generations"]["text_cleaned"]) >= 20])
    numpy_route, torch_route = _routes(stack, monkeypatch=monkeypatch)
    _same(numpy_route, torch_route)
    for k in range(0, len(stack), 25):   # and each equals the single-matrix call
        single = MS.eccentricity(stack[k])
        np.testing.assert_allclose(torch_route.confidence[k], single.confidence, rtol=1e-12,
                                   atol=1e-12)


def test_the_route_is_numpy_unless_torch_is_imported_and_the_batch_is_large(monkeypatch):
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(similarity, "_EIGH_ROUTE", "auto")
    monkeypatch.setitem(sys.modules, "torch", None)   # not importable
    assert similarity._eigh_for(10_000) is similarity._eigh
    monkeypatch.delitem(sys.modules, "torch")   # installed, not imported
    assert similarity._eigh_for(10_000) is similarity._eigh
    assert "torch" not in sys.modules   # and not imported by asking
    monkeypatch.setitem(sys.modules, "torch", torch)
    assert similarity._eigh_for(similarity._TORCH_MIN_MATRICES - 1) is similarity._eigh
    assert similarity._eigh_for(similarity._TORCH_MIN_MATRICES) is similarity._torch_eigh
    monkeypatch.setattr(similarity, "_EIGH_ROUTE", "numpy")
    assert similarity._eigh_for(10_000) is similarity._eigh


def test_torch_threads_are_restored_in_every_thread(monkeypatch):
    """Each part sets torch to one thread in the thread that runs it and restores it there:
    the caller's and the pool's settings are what they were, and a split batch (parts on
    several threads) gives the same numbers as one part."""
    torch = pytest.importorskip("torch")
    from confeval import _threads

    def pool_settings():
        return sorted(set(_threads.parallel_map(lambda _: torch.get_num_threads(), range(8))))

    before = torch.get_num_threads()
    pool_before = pool_settings()
    stack = _tied_spectra()
    stack = np.concatenate([stack] * 40)
    monkeypatch.setattr(similarity, "_EIGH_ROUTE", "torch")
    monkeypatch.setattr(similarity, "_QUESTIONS_PER_THREAD", 10**9)
    alone = MS.eccentricity_batch(stack)
    monkeypatch.setattr(similarity, "_QUESTIONS_PER_THREAD", 7)
    monkeypatch.setattr(similarity, "_cores", lambda: 5)
    torch.set_num_threads(3)
    try:
        split = MS.eccentricity_batch(stack)
        assert torch.get_num_threads() == 3
    finally:
        torch.set_num_threads(before)
    assert torch.get_num_threads() == before
    assert pool_settings() == pool_before
    np.testing.assert_array_equal(alone.confidence, split.confidence)
    np.testing.assert_array_equal(alone.uncertainty, split.uncertainty)


def test_one_matrix_eccentricity_checks_and_symmetrises_as_the_batched_form():
    rng = np.random.default_rng(4)
    w = rng.random((9, 9))
    w = (w + w.T) / 2
    np.fill_diagonal(w, 1.0)
    w[3], w[:, 3] = w[2], w[:, 2]
    w[2, 3] = w[3, 2] = w[3, 3] = 1.0
    nearly = w.copy()
    nearly[0, 5] += 1e-12   # within 1e-9: its symmetric part is used
    for v in (w, nearly, np.asfortranarray(nearly), nearly.T):
        one, batched = MS.eccentricity(v), MS.eccentricity_batch(v[None])
        np.testing.assert_allclose(one.confidence, batched.confidence[0], rtol=1e-12, atol=1e-12)
        assert one.uncertainty == pytest.approx(batched.uncertainty[0], rel=1e-12, abs=1e-12)
        assert one.confidence[2] == one.confidence[3]
    lopsided = w.copy()
    lopsided[0, 5] += 1e-6
    messages = []
    for call in (lambda: MS.eccentricity(lopsided), lambda: MS.eccentricity_batch(lopsided[None])):
        with pytest.raises(ValueError, match="symmetric for a spectral measure") as info:
            call()
        messages.append(str(info.value))
    assert messages[0] == messages[1]
