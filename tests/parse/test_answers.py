"""Strict answer checking: numbers by value, letters exactly, texts whole — never substrings."""

import pytest

from confeval.parse.answers import check_answer

CASES = [
    ("So the shop has 1,204 pens. The answer is 1204.", 1204, True),
    ("1204", "1,204", True),
    ("120", 12, False),                 # the authors' matcher: correct (substring)
    ("2", 12, False),
    ("-3", "3", False),
    ("3.50", 3.5, True),
    ("Total: 82 + 24 = 106 pens.", 106, True),
    ("The answer is 106, not 105", 106, True),
    ("Final answer: 105\nWait, the answer is 106", 106, True),
    ("12 pens", "12", True),
    ("The answer is (B).", "B", True),
    ("**D**", "B", False),
    ("Answer: the Eiffel Tower", "Eiffel tower", True),
    ("Eiffel Tower is in Paris", "Eiffel Tower", False),
]


@pytest.mark.parametrize(("reply", "key", "correct"), CASES)
def test_cases(reply, key, correct):
    assert check_answer(reply, key).correct is correct


@pytest.mark.parametrize(("reply", "key", "failure"), [
    ("I am not sure.", 7, "no_number"), ("D because it is", "B", "no_letter"), ("", 3, "empty"),
    ("7", None, "no_key"), ("7", "", "no_key"), ("7" * 1_000_001, 7, "reply_too_long")])
def test_failures_are_named(reply, key, failure):
    got = check_answer(reply, key)
    assert got.correct is None and got.failure == failure


def test_a_megabyte_of_markers_is_read_right():
    # how long it takes: benchmarks/hostile_replies.py (no test asserts a wall-clock time)
    got = check_answer("answer: " * 120_000 + "5", 5)
    assert (got.correct, got.answer, got.failure) == (True, "5", None)
