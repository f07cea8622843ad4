"""Multiple-choice datasets for the measures suite: CommonsenseQA in both layouts, generic
JSONL, the built-in task; items that cannot be asked are counted."""

import json
from collections import Counter
from pathlib import Path

import pytest

from confeval.suites.measures import MeasuresOptions, load_mc_items, option_rows

CQA = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "commonsenseqa" / \
    "dev_rand_split.jsonl"


@pytest.mark.shared_data
def test_commonsenseqa_flat_layout():
    if not CQA.is_file():
        pytest.skip(f"needs the shared data at {CQA}")
    items = load_mc_items(str(CQA))
    assert len(items) == 1221 and items.excluded == {}
    assert Counter(it["answer"] for it in items) == {"A": 239, "B": 255, "C": 241, "D": 251,
                                                     "E": 235}
    rows = option_rows(items)
    assert len(rows) == 6105 and sum(r["correct"] for r in rows) == 1221
    assert rows[0] == {"question_id": "1afa02df02c908a558b4036e80242fac", "option": "A",
                       "text": "bank", "correct": 1}


def test_nested_layout_generic_jsonl_and_counted_exclusions(tmp_path):
    nested = [{"id": "q1", "question": {"stem": "Where?", "choices": [
                  {"label": "A", "text": "here"}, {"label": "B", "text": "there"}]},
               "answerKey": "B"},
              {"id": "q2", "question": {"stem": "", "choices": []}, "answerKey": "A"}]
    path = tmp_path / "nested.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in nested))
    items = load_mc_items(str(path))
    assert items == [{"item_id": "q1", "question": "Where?", "options": ["here", "there"],
                      "letters": ["A", "B"], "answer": "B"}]
    assert items.excluded == {"missing_question": 1}
    generic = [{"question": "2+2?", "options": ["3", "4"], "answer": "B"},
               {"question": "1+1?", "options": ["2"], "answer": "A"},
               {"question": "1+2?", "options": ["3", "4"], "answer": "c"}]
    path = tmp_path / "mcq.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in generic))
    items = load_mc_items(str(path))
    assert [it["answer"] for it in items] == ["B"] and items[0]["item_id"] == "row-1"
    assert items.excluded == {"fewer_than_2_options": 1, "answer_not_an_option": 1}
    builtin = load_mc_items("builtin:arith-mc", 5, seed=2)
    assert len(builtin) == 5 and all(it["answer"] in it["letters"] for it in builtin)


def test_infinite_measures_rank_last_or_first_and_repeated_options_are_counted():
    import numpy as np
    import pandas as pd

    from confeval.records import RecordSet
    from confeval.suites.measures.inputs import read_measure_records
    from confeval.suites.measures.scoring import score_measure_rows

    frame = pd.DataFrame({"question_id": ["q1"] * 3 + ["q2"] * 3 + ["q1"],
                          "option": ["A", "B", "C", "A", "B", "C", "A"],
                          "correct": [1, 0, 0, 0, 1, 0, 0],
                          "sl": [-0.5, -np.inf, -2.0, -3.0, -0.1, -np.inf, -9.0],
                          "deg_j": [0.9, 0.1, 0.2, 0.3, np.inf, 0.4, 0.5]})
    data = read_measure_records(RecordSet.from_frame(frame), measure_cols="sl,deg_j")
    assert data.records.excluded == {"duplicate_option_row": 1}
    assert data.infinite == {"sl": 2, "deg_j": 1}
    # -inf is 1 below the column's finite minimum, +inf 1 above its maximum: order kept
    assert data.values[:, 0].tolist() == [-0.5, -4.0, -2.0, -3.0, -0.1, -4.0]
    assert data.values[:, 1].tolist() == [0.9, 0.1, 0.2, 0.3, 1.9, 0.4]
    res = score_measure_rows(RecordSet.from_frame(frame),
                             MeasuresOptions(measure_cols="sl,deg_j", bootstrap=0))
    assert res["infinite_values"] == {"sl": 2, "deg_j": 1}
    assert res["measures"]["sl"]["auroc"] == 1.0  # the gold options have the highest SL
