"""The diagnosis parser against a hand-labelled corpus of replies (expected type, presence or
failure reason, and the rule that must fire), letter permutations, and hostile lengths."""

import pytest

from confeval.parse.diagnosis import default_letters, parse_diagnosis

# (reply, protocol, expected value or None, rule or failure reason)
CORPUS = [
    # a marker, the letter and a reason on one line: models write this constantly
    ("Answer: (B) since step 3 is wrong", "etc", "re", "marker"),
    ("The answer is B because the total is off", "etc", "re", "marker"),
    ("Final answer: [C] as the constraint was dropped", "etc", "qce", "marker"),
    ("The answer is D, given that a dozen is 12", "etc", "kde", "marker"),
    ("Answer: A careful look at step 2 shows the slip", "etc", None, "no_answer"),
    ("B", "etc", "re", "whole"),
    ("b", "etc", "re", "whole"),                      # a lone lower-case letter is an answer
    ("a", "etc", "vpe", "whole"),
    ("(B)", "etc", "re", "whole"),
    ("[C]", "etc", "qce", "whole"),
    ("**B**", "etc", "re", "whole"),
    ("`C`", "etc", "qce", "whole"),
    ("$D$", "etc", "kde", "whole"),
    ("B.", "etc", "re", "whole"),
    ("B)", "etc", "re", "whole"),
    (r"\boxed{B}", "etc", "re", "whole"),
    (r"\boxed{\text{C}}", "etc", "qce", "whole"),
    ("<|begin_of_box|>D<|end_of_box|>", "etc", "kde", "whole"),
    ("<think>I considered D.</think>B", "etc", "re", "whole"),
    ("<think>Maybe A\nor D</think>\nB", "etc", "re", "whole"),
    ("<think>never closed, leaning A", "etc", None, "unterminated_reasoning"),
    ("The answer is B.", "etc", "re", "marker"),
    ("**Answer: B**", "etc", "re", "marker"),
    ("Option B", "etc", "re", "marker"),
    ("Final answer: D", "etc", "kde", "marker"),
    ("Step 1 reads the chart right.\nStep 2 adds 3 + 4 = 8.\nFinal answer: B", "etc", "re",
     "marker"),
    ("Answer: A\nAnswer: B", "etc", "re", "marker"),  # self-correction: the last one, flagged
    ("After checking, the answer is C.\n\nActually, final answer: B", "etc", "re", "marker"),
    ("The answer is (C) Question Comprehension Error", "etc", "qce", "marker"),
    ("Answer: Reasoning Error", "etc", "re", "marker"),
    ("Answer: a careful reading shows nothing", "etc", None, "no_answer"),
    ("B) Reasoning Error", "etc", "re", "whole"),
    ("B. B_Reasoning_Error", "etc", "re", "whole"),
    ("B) Visual Perception Error", "etc", None, "letter_name_conflict"),
    ("Reasoning Error", "etc", "re", "whole"),
    ("RE", "etc", "re", "whole"),
    ("A_Visual_Perception_Error", "etc", "vpe", "whole"),
    ("Knowledge application error", "etc", "kde", "whole"),
    ("KAE", "etc", "kde", "whole"),
    ("knowledge deficiency", "etc", "kde", "whole"),
    ("The chain misapplies a formula, so this is a knowledge deployment error.", "etc", "kde",
     "single_name"),
    ("The reasoning error is in step 3, not a perception issue", "etc", None,
     "ambiguous_names"),
    ("A careful look shows the arithmetic is off.", "etc", None, "no_answer"),
    ("I think the error is in step 2.", "etc", None, "no_answer"),
    ("B because the arithmetic is wrong", "etc", None, "no_answer"),
    ("B: the arithmetic in step 2 is wrong", "etc", "re", "leading_letter"),
    ("Step 3 wrongly assumes a dozen is 10.\n\nD", "etc", "kde", "last_line"),
    ("E", "etc", None, "out_of_options"),               # no "no error" option in ETC
    ("No error", "etc", None, "out_of_options"),
    ("F", "epd5", None, "out_of_options"),
    ("E", "epd5", "no_error", "whole"),
    ("No error", "epd5", "no_error", "whole"),
    ("E_NoError", "epd5", "no_error", "whole"),
    ("", "etc", None, "empty"),
    ("  \n\t ", "etc", None, "empty"),
    ("<think>all of it hidden</think>", "etc", None, "empty"),
    ("P", "presence", "present", "whole"),
    ("N.", "presence", "absent", "whole"),
    ("**P**", "presence", "present", "whole"),
    ("(N)", "presence", "absent", "whole"),
    ("Yes", "presence", "present", "whole"),
    ("no", "presence", "absent", "whole"),
    ("Error present", "presence", "present", "whole"),
    ("No error.", "presence", "absent", "whole"),
    ("Answer: N", "presence", "absent", "marker"),
    ("No errors found in perception, but step 3 is wrong", "presence", None, "no_answer"),
    ("The chain has no error-free steps; error present", "presence", None, "no_answer"),
    ("A", "presence", None, "out_of_options"),
]


@pytest.mark.parametrize(("reply", "protocol", "value", "how"), CORPUS)
def test_corpus(reply, protocol, value, how):
    got = parse_diagnosis(reply, protocol)
    assert got.value == value
    assert (got.rule if value is not None else got.failure) == how


def test_corpus_is_large_and_every_rule_and_failure_is_covered():
    assert len(CORPUS) >= 40
    hows = {how for *_, how in CORPUS}
    assert {"whole", "marker", "last_line", "leading_letter", "single_name", "empty",
            "unterminated_reasoning", "out_of_options", "letter_name_conflict",
            "ambiguous_names", "no_answer"} <= hows


def test_self_corrections_are_flagged():
    assert parse_diagnosis("Answer: A\nAnswer: B").flags == ("revised_answer",)
    assert parse_diagnosis("Answer: B\nSo the answer is B.").flags == ()


def test_permuted_letters_map_to_their_own_types():
    letters = {"A": "kde", "B": "vpe", "C": "re", "D": "qce"}
    assert parse_diagnosis("B", "etc", letters).value == "vpe"
    assert parse_diagnosis("C) Reasoning Error", "etc", letters).value == "re"
    assert parse_diagnosis("A) Reasoning Error", "etc", letters).failure == \
        "letter_name_conflict"
    assert default_letters("epd5")["E"] == "no_error"
    with pytest.raises(ValueError):
        default_letters("epd")


HOSTILE_REPLIES = [  # a megabyte each, and what is read from it
    ("The chain is long. " * 47_000 + "Answer: C", ("qce", "C", None)),
    ("answer: " * 110_000, (None, None, "no_answer")),
    ("(" * 900_000 + "B", ("re", "B", None)),
    ("B) x" + "." * 990_000 + "y", ("re", "B", None)),
    ("B" + " " * 990_000 + "x", (None, None, "no_answer")),
    ("\\boxed{" * 90_000, (None, None, "no_answer")),
    ("reasoning" + " " * 990_000 + "x", ("re", None, None)),
    ("A\n" * 450_000, ("vpe", "A", None)),
    ("<think>" * 100_000 + "B", (None, None, "unterminated_reasoning")),
]


@pytest.mark.parametrize(("reply", "expected"), HOSTILE_REPLIES)
def test_hostile_replies_of_a_megabyte_are_read_right(reply, expected):
    # how long each takes (linear, not quadratic): benchmarks/hostile_replies.py
    got = parse_diagnosis(reply)
    assert (got.value, got.letter, got.failure) == expected


def test_replies_over_the_cap_are_counted_not_parsed():
    assert parse_diagnosis("B" * 1_000_001).failure == "reply_too_long"
