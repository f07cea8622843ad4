"""The numeric helpers against scipy: mid-ranks equal ``scipy.stats.rankdata`` exactly."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import rankdata

from confeval._numeric import mid_ranks


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), rows=st.integers(1, 4), n=st.integers(1, 30),
       levels=st.integers(1, 6))
def test_mid_ranks_equal_scipy_rankdata(seed, rows, n, levels):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, levels, size=(rows, n)) / levels   # heavy ties
    np.testing.assert_array_equal(mid_ranks(x, axis=1), rankdata(x, axis=1))
    np.testing.assert_array_equal(mid_ranks(x, axis=0), rankdata(x, axis=0))
    np.testing.assert_array_equal(mid_ranks(x[0]), rankdata(x[0]))


@pytest.mark.parametrize("x", [[], [3.0], [2.0, 2.0, 2.0], [-np.inf, 0.0, np.inf, 0.0]])
def test_mid_ranks_edge_cases(x):
    np.testing.assert_array_equal(mid_ranks(x), rankdata(x))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), rows=st.integers(1, 4), n=st.integers(1, 30),
       levels=st.integers(1, 6))
def test_rank_bounds_equal_scipy_min_and_max_ranks(seed, rows, n, levels):
    from confeval._numeric import rank_bounds

    rng = np.random.default_rng(seed)
    x = rng.integers(0, levels, size=(rows, n)) / levels   # heavy ties
    for axis in (0, 1):
        low, high = rank_bounds(x, axis=axis)
        assert low.dtype == np.int64 and high.dtype == np.int64
        np.testing.assert_array_equal(low, rankdata(x, method="min", axis=axis))
        np.testing.assert_array_equal(high, rankdata(x, method="max", axis=axis))


def test_rank_bounds_put_nan_last_tied_with_each_other():
    from confeval._numeric import rank_bounds

    low, high = rank_bounds([np.nan, 0.2, np.inf, np.nan, 0.2])
    # 0.2 and 0.2 are ranks 1-2, inf 3, the two NaNs 4-5 (after inf, tied with each other)
    assert low.tolist() == [4, 1, 3, 4, 1] and high.tolist() == [5, 2, 3, 5, 2]
