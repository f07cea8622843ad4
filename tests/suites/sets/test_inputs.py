"""Reading multiple-choice records and datasets: option columns, letters, exclusions."""

import json

import numpy as np
import pandas as pd
import pytest

from confeval.records import RecordsError, RecordSet
from confeval.suites.sets import load_mc_items, read_sets_records


def test_logprobs_become_probabilities_and_bad_rows_are_counted():
    frame = pd.DataFrame({
        "answer": ["A", "B", "C", "B", "A"],
        "lp_A": [np.log(0.7), np.log(0.2), -1.0, 0.5, np.log(0.5)],   # row 3: lp > 0
        "lp_B": [np.log(0.2), np.log(0.7), -2.0, -1.0, np.log(0.5)],
        "lp_C": [np.log(0.1), np.log(0.1), np.nan, -1.0, np.nan],     # row 2: gold missing
        "topic": ["x", "y", "x", "y", "x"]})
    rs = RecordSet.from_frame(frame)
    data = read_sets_records(rs, logit_cols="lp_*", input_kind="logprobs", precision="float64",
                             group_col="topic")
    assert data.letters == ["A", "B", "C"]
    assert rs.excluded == {"option_value_out_of_range": 1, "gold_option_missing": 1}
    assert data.labels.tolist() == [0, 1, 0]
    np.testing.assert_allclose(data.probs[0], [0.7, 0.2, 0.1])
    np.testing.assert_allclose(data.probs[2], [0.5, 0.5, 0.0])
    assert data.groups.tolist() == ["x", "y", "x"]
    with pytest.raises(ValueError, match="--input must be one of"):
        read_sets_records(RecordSet.from_frame(frame), input_kind="odds")


def test_dataset_items_from_a_list_or_letter_columns(tmp_path):
    path = tmp_path / "mc.jsonl"
    path.write_text(json.dumps({"question": "2+2?", "options": ["3", "4"], "answer": "B",
                                "category": "math"}) + "\n")
    (item,) = load_mc_items(str(path))
    assert item["options"] == ["3", "4"] and item["item_id"] == "row-1"
    assert item["category"] == "math"
    csv = tmp_path / "mc.csv"
    pd.DataFrame({"question": ["q"], "answer": ["A"], "A": ["x"], "B": ["y"],
                  "C": [None]}).to_csv(csv, index=False)
    assert load_mc_items(str(csv))[0]["options"] == ["x", "y"]
    bad = tmp_path / "bad.csv"
    pd.DataFrame({"question": ["q"], "answer": ["A"]}).to_csv(bad, index=False)
    with pytest.raises(RecordsError, match="no options"):
        load_mc_items(str(bad))
    assert len(load_mc_items("builtin:arith-mc", 7, seed=1)) == 7
