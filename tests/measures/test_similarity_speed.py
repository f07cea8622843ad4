"""The fast paths of the similarity measures decide what the plain definitions decide: the
one-pass range check (bits of the entries) against min/max, the linear tie detection (sorted
keys, neighbours compared) against comparing every pair of rows, on hand cases, random stacks
and real Jaccard matrices (UQ-NLG's TriviaQA sample)."""

import json
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
