from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from confeval.conformal.interval_metrics import (
    adjust_to_labels,
    clip_intervals,
    coverage_by_level,
    error_bin_coverage,
    informativeness_bands,
    interval_label_sets,
    interval_metrics,
    ranking_scoring_gap,
)

LO = np.array([0.5, 2.2, 3.0, 1.0000000001])
HI = np.array([2.5, 4.9999999999, 6.0, 1.7])
Y = np.array([1, 5, 4, 2])


def test_clip_adjust_and_label_sets():
    lo, hi = clip_intervals(LO, HI, 1, 5)
    assert lo.tolist() == [1.0, 2.2, 3.0, 1.0000000001] and hi.tolist()[2] == 5.0
    lo_adj, hi_adj = adjust_to_labels(lo, hi)
    assert lo_adj.tolist() == [1, 2, 3, 1] and hi_adj.tolist() == [3, 5, 5, 2]
    sets = interval_label_sets(lo_adj, hi_adj, [1, 2, 3, 4, 5])
    assert sets.sum(1).tolist() == [3, 4, 3, 2]
    raw = interval_metrics(lo, hi, Y)
    # y=1 in [1, 2.5] yes; y=5 in [2.2, 4.9999999999] yes (edge tolerance); y=4 in [3, 5] yes;
    # y=2 in [1.0000000001, 1.7] no
    assert raw["coverage"] == 0.75
    assert raw["width"] == pytest.approx((1.5 + 2.7999999999 + 2.0 + 0.6999999999) / 4)
    adj = interval_metrics(lo_adj, hi_adj, Y)
    assert adj == {"coverage": 1.0, "width": (2 + 3 + 2 + 1) / 4}


def test_bad_intervals_are_rejected():
    with pytest.raises(ValueError, match="lo <= hi"):
        interval_metrics([3.0], [2.0], [2.0])


def test_by_level_error_bins_and_bands():
    lo = np.array([1, 1, 2, 4, 1.0])
    hi = np.array([3, 2, 5, 5, 5.0])
    y = np.array([1, 3, 3, 5, 5])
    point = np.array([1, 1, 4, 2, 5])
    by = coverage_by_level(lo, hi, y)
    assert by == {1.0: {"n": 1, "coverage": 1.0, "width": 2.0},
                  3.0: {"n": 2, "coverage": 0.5, "width": 2.0},
                  5.0: {"n": 2, "coverage": 1.0, "width": 2.5}}
    bins = error_bin_coverage(lo, hi, y, point)
    assert bins[0] == {"n": 2, "share": 0.4, "coverage": 1.0, "width": 3.0}
    assert bins[2]["coverage"] == 0.0 and bins[3]["coverage"] == 1.0
    bands = informativeness_bands(lo, hi, y)
    assert bands["decisive"]["n"] == 3 and bands["uninformative"]["n"] == 1
    assert bands["moderate"] == {"n": 1, "share": 0.2, "width": 3.0, "coverage": 1.0}


SHARED = (Path(__file__).resolve().parents[2].parent / "shared" / "data"
          / "vlm-judge-uncertainty" / "results" / "rebuttal" / "exp3" / "rsg_with_95ci.csv")


@pytest.mark.skipif(not SHARED.is_file(), reason=f"shared data not found at {SHARED}")
def test_ranking_scoring_gap_matches_the_authors_table():
    table = pd.read_csv(SHARED)
    # informativeness term: exactly the authors' cpi = 1 - width / 4
    cpi = [p - ranking_scoring_gap(p, w, 4) for p, w in zip(table.pearson_mean,
                                                             table.width_mean)]
    np.testing.assert_allclose(cpi, table.cpi_mean, atol=1e-12)
    # their rsg_mean is a bootstrap mean, so pearson_mean - cpi_mean matches it closely only
    ours = [ranking_scoring_gap(p, w, 4) for p, w in zip(table.pearson_mean, table.width_mean)]
    np.testing.assert_allclose(ours, table.rsg_mean, atol=1e-3)
