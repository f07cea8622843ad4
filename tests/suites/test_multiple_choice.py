"""The multiple-choice helpers shared by the sets and measures suites: the option
distribution read from a model, and the one dataset loader."""

import asyncio
import json
import math

import pandas as pd
import pytest

from confeval.backends import Generation, ScriptedBackend, TokenLogprob
from confeval.records import RecordsError
from confeval.suites._multiple_choice import build_messages, load_mc_items, option_distribution


def test_option_distribution_renormalises_and_records_mass_outside():
    reply = Generation("C", (TokenLogprob("C", math.log(0.6),
                                          (("C", math.log(0.6)), ("A", math.log(0.2)),
                                           ("Sure", math.log(0.15)))),), "stop")
    backend = ScriptedBackend(lambda m, p, i: reply)
    messages, letters = build_messages("2 + 2?", ["3", "5", "4"], idk=True)
    assert letters == ["A", "B", "C", "D"] and "I don't know" in messages[1]["content"]
    dist = asyncio.run(option_distribution(backend, messages, letters))
    assert dist["method"] == "top_logprobs" and dist["status"] == "ok"
    total = 0.6 + 0.2 + 2e-5
    assert math.exp(dist["logprobs"]["C"]) == pytest.approx(0.6 / total)
    assert dist["mass_outside"] == pytest.approx(1 - total)


def test_unparseable_reply_is_reported_not_raised():
    backend = ScriptedBackend(lambda m, p, i: Generation("I cannot say.", (), "stop"))
    messages, letters = build_messages("?", ["x", "y"])
    dist = asyncio.run(option_distribution(backend, messages, letters))
    assert dist["status"] == "unparseable" and "no option letter" in dist["reason"]


def _jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def test_one_loader_reads_every_layout_to_the_same_items(tmp_path):
    """Generic options list, letter columns, CommonsenseQA's Hugging Face and original layouts:
    one question, one item."""
    want = {"item_id": "q1", "question": "Where?", "options": ["here", "there"],
            "letters": ["A", "B"], "answer": "B"}
    layouts = {
        "generic": {"item_id": "q1", "question": "Where?", "options": ["here", "there"],
                    "answer": "B"},
        "columns": {"item_id": "q1", "question": "Where?", "A": "here", "B": "there",
                    "answer": "B"},
        "hf": {"id": "q1", "question": "Where?",
               "choices": {"label": ["A", "B"], "text": ["here", "there"]}, "answerKey": "B"},
        "original": {"id": "q1", "question": {"stem": "Where?", "choices": [
            {"label": "A", "text": "here"}, {"label": "B", "text": "there"}]},
            "answerKey": "B"}}
    for name, row in layouts.items():
        items = load_mc_items(_jsonl(tmp_path / f"{name}.jsonl", [row]))
        assert items == [want] and items.excluded == {}, name


def test_other_labels_map_to_the_letter_shown_and_extra_columns_are_kept(tmp_path):
    row = {"question": "Pick", "choices": {"label": ["1", "2", "3"], "text": ["x", "y", "z"]},
           "answerKey": "3", "category": "toy"}
    (item,) = load_mc_items(_jsonl(tmp_path / "d.jsonl", [row]))
    assert item["answer"] == "C" and item["letters"] == ["A", "B", "C"]
    assert item["category"] == "toy" and item["item_id"] == "row-1"


def test_rows_that_cannot_be_asked_are_counted_by_reason(tmp_path):
    ok = {"question": "q", "options": ["x", "y"], "answer": "A"}
    rows = [ok,
            {**ok, "question": " "},                                 # missing_question
            {**ok, "answer": None},                                  # missing_answer
            {**ok, "options": ["x"]},                                # fewer_than_2_options
            {**ok, "options": ["x", None, "z"]},                     # empty_option
            {**ok, "options": ["x", ""]},                            # empty_option
            {**ok, "options": [str(i) for i in range(27)]},          # too_many_options
            {**ok, "answer": "a"},                                   # answer_not_an_option
            {"question": "q", "answerKey": "A",
             "choices": {"label": ["A", "A"], "text": ["x", "y"]}},  # duplicate labels
            {"question": "q", "answerKey": "A",
             "choices": {"label": ["A"], "text": ["x", "y"]}}]       # labels != texts
    items = load_mc_items(_jsonl(tmp_path / "d.jsonl", rows))
    assert len(items) == 1
    assert items.excluded == {"missing_question": 1, "missing_answer": 1,
                              "fewer_than_2_options": 1, "empty_option": 2,
                              "too_many_options": 1, "answer_not_an_option": 1,
                              "duplicate_option_labels": 2}


def test_letter_columns_end_at_the_last_filled_cell(tmp_path):
    path = tmp_path / "d.csv"
    pd.DataFrame({"question": ["q", "r"], "answer": ["B", "A"], "A": ["x", "x"],
                  "B": ["y", None], "C": [None, "z"]}).to_csv(path, index=False)
    items = load_mc_items(str(path))
    assert [it["options"] for it in items] == [["x", "y"]]
    assert items.excluded == {"empty_option": 1}


def test_a_file_without_questions_answers_or_options_is_refused_naming_it(tmp_path):
    for frame, message in [({"answer": ["A"], "options": ["[]"]}, "column 'question'"),
                           ({"question": ["q"], "A": ["x"]}, "column 'answer'"),
                           ({"question": ["q"], "answer": ["A"]}, "no options")]:
        path = tmp_path / "bad.csv"
        pd.DataFrame(frame).to_csv(path, index=False)
        with pytest.raises(RecordsError, match=f"bad.csv: .*{message}"):
            load_mc_items(str(path))


def test_first_n_askable_items(tmp_path):
    rows = [{"question": "q", "options": ["x"], "answer": "A"}] + \
        [{"question": f"q{i}", "options": ["x", "y"], "answer": "A"} for i in range(5)]
    items = load_mc_items(_jsonl(tmp_path / "d.jsonl", rows), n=3)
    assert [it["question"] for it in items] == ["q0", "q1", "q2"]
    builtin = load_mc_items("builtin:arith-mc", 4, seed=3)
    assert len(builtin) == 4 and all(it["answer"] in it["letters"] for it in builtin)
