"""Reading judge records for intervals: joins (counted misses and conflicts), judge columns,
floors, groups and the group map."""

import numpy as np
import pandas as pd
import pytest

from confeval.records import RecordSet
from confeval.suites.intervals import join_records, read_intervals_records
from confeval.suites.intervals.inputs import judge_columns


def _judge(n=6):
    frame = pd.DataFrame({f"lp{k}": np.log(np.full(n, 0.2)) for k in range(1, 6)})
    frame["gt"] = [1, 2, 3, 4, 5, 3][:n]
    frame["sid"] = np.arange(n)
    return frame


def test_join_counts_rows_without_a_match_and_conflicting_keys(tmp_path):
    side = pd.DataFrame({"sid": [0, 1, 1, 2, 3], "task": ["a", "b", "c", "a", "b"]})
    path = tmp_path / "side.csv"
    side.to_csv(path, index=False)
    joined = join_records(RecordSet.from_frame(_judge()), f"{path}:sid")
    assert joined.frame["task"].tolist()[:4] == ["a", "b", "a", "b"]  # first row of sid 1
    assert joined.notes == {f"join {path}:sid": {"rows_without_match": 2,
                                                 "conflicting_duplicate_keys": 1}}
    with pytest.raises(ValueError, match="use FILE:KEY"):
        join_records(RecordSet.from_frame(_judge()), "nokey")


def test_judge_columns_and_floors_and_groups():
    frame = _judge()
    frame.loc[0, "lp3"] = np.nan
    frame["task"] = ["coco", "ChartQA", "coco", None, "mathvista", "unknown"]
    rs = RecordSet.from_frame(frame)
    assert judge_columns(rs, "lp*") == ([f"lp{k}" for k in range(1, 6)], 5)
    data = read_intervals_records(rs, logprob_cols="lp*", label_col="gt", floor=-9.0,
                                  group_col="task", group_map="paper-difficulty")
    assert data.floored_values == 1 and data.features[0, 2] == -9.0
    assert rs.excluded == {"missing_group": 1, "unmapped_group": 1}
    assert data.groups.tolist() == ["easy", "medium", "easy", "hard"]
    assert data.levels.tolist() == [1, 2, 3, 4, 5] and data.n_judges == 1


def test_an_empty_method_list_is_refused_not_an_empty_table():
    from confeval.suites.intervals.options import IntervalsOptions

    for text in ("", " , "):
        with pytest.raises(ValueError, match="--methods is empty"):
            IntervalsOptions(methods=text)
