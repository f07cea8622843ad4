"""Point metrics of the VLM-judge paper's Table 1, reproduced from ../shared/data.

Correlations, accuracy, +-1 accuracy and MAE are over the items whose score was parsed
(parsed_score > 0); the overconfidence rates are over all items, with the five score-token
probabilities renormalised (softmax of the log-probs) — the paper's protocol.
"""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.special import softmax

from confeval.evaluate import evaluate_agreement
from confeval.metrics import overconfidence_rate

DATA = (Path(__file__).resolve().parents[2].parent / "shared" / "data"
        / "vlm-judge-uncertainty" / "results")
pytestmark = pytest.mark.skipif(not DATA.is_dir(), reason=f"shared data not found at {DATA}")

TABLE_1 = {  # folder: (pearson, spearman, kendall, acc %, within1 %, mae, over.99 %, over.999 %)
    "v2": (.402, .356, .300, 32.2, 75.1, 1.031, 25.6, 6.6),
    "v2_phi4": (.303, .293, .251, 34.2, 76.1, 1.005, 43.0, 16.9),
    "v2_gemini": (.459, .446, .377, 32.1, 70.3, 1.122, 83.0, 77.4),
}


DIGITS = (3, 3, 3, 1, 1, 3, 1, 1)
"""The digits Table 1 prints each column with."""


def table_1_values(df: pd.DataFrame) -> tuple[tuple[float, ...], dict]:
    """Our Table 1 row of one judge's ``features_s2.csv`` (the columns of :data:`TABLE_1`),
    and the agreement result it comes from (benchmarks/reproductions_page.py prints it)."""
    parsed = df[df.parsed_score > 0]
    res = evaluate_agreement(parsed.parsed_score, parsed.gt_score, n_resamples=0)
    probs = softmax(df[[f"s2_lp{k}" for k in range(1, 6)]].to_numpy(), axis=1)
    return (res["pearson"], res["spearman"], res["kendall"], 100 * res["accuracy"],
            100 * res["within1"], res["mae"], 100 * overconfidence_rate(probs, 0.99),
            100 * overconfidence_rate(probs, 0.999)), res


@pytest.mark.parametrize("folder", TABLE_1)
def test_table_1_point_metrics(folder):
    ours, res = table_1_values(pd.read_csv(DATA / folder / "features_s2.csv"))
    for value, expected, d in zip(ours, TABLE_1[folder], DIGITS):
        assert round(value, d) == pytest.approx(expected, abs=1e-9)
    assert np.isfinite(res["bias"])
