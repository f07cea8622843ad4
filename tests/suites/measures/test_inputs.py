"""Multiple-choice datasets for the measures suite: CommonsenseQA in both layouts, generic
JSONL, the built-in task; items that cannot be asked are counted."""

import json
from collections import Counter
from pathlib import Path

import pytest

from confeval.suites.measures import load_mc_items, option_rows

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
