"""Reading step data: items, replies to step records, and validated step frames."""

import pandas as pd
import pytest

from confeval.records import RecordsError, RecordSet
from confeval.suites.steps import load_step_items, parse_step_replies, step_frame


def test_builtin_items_have_aligned_steps_labels_and_types():
    items = load_step_items("builtin:arith-steps", 5, seed=1)
    for it in items:
        assert len(it["steps"]) == len(it["labels"]) == len(it["error_types"])
        assert it["variant"] == "original" and it["run_id"].endswith("::original")


def test_step_frame_excludes_and_counts():
    frame = pd.DataFrame({"item_id": ["a", "a", None, "b", "b", "c"],
                          "step": [0, 1, 0, 1e300, 0.5, 0],
                          "p_correct": [0.9, 0.2, 0.5, 0.5, 0.5, 0.7],
                          "label": [1, 0, 1, 1, 1, 1],
                          "grade": ["x", "NA", "x", "x", "x", None]})
    rs = RecordSet.from_frame(frame)
    out = step_frame(rs, group_cols=["grade"])
    assert rs.excluded == {"missing_item_id": 1, "step_out_of_range": 1,
                           "non_integer_step": 1, "missing_group": 1}
    assert out["item_id"].tolist() == ["a", "a"] and out["grade"].tolist() == ["x", "NA"]
    assert out["variant"].tolist() == ["original", "original"]


def test_replies_become_step_records_and_unreadable_files_are_errors():
    frame = pd.DataFrame([{"item_id": "a", "raw_output": '[["s", 1, 0.8, ""]]',
                           "labels": [1], "variant": " lexical "}])
    steps, summary = parse_step_replies(RecordSet.from_frame(frame))
    assert steps["variant"].tolist() == ["lexical"] and steps["p_correct"].tolist() == [0.8]
    assert summary["parsed"] == 1 and summary["skipped_replies"] == {}
    bad = pd.DataFrame([{"item_id": "a", "raw_output": "x", "labels": []}])
    with pytest.raises(RecordsError, match="no reply could be read"):
        parse_step_replies(RecordSet.from_frame(bad))
