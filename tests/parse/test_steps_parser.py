"""The process-judge reply parser on realistic malformed replies, its consistency policies,
and a property test: no input string makes it raise or run anything."""

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from confeval.parse import normalise_error_type, parse_step_judgement, read_literal
from confeval.parse.literal import LiteralError

CORPUS = [
    # (reply, n_steps, expected p per step (None: unparseable), expected reasons/flags)
    ("""<evaluation>
[["Step 1: F = ma = 2 x 3 = 6 N", 1, 0.93, ""],
 ["Step 2: so a = 4", 0, 0.12, "Numerical Calculation Error"]]
</evaluation>""", 2, [0.93, 0.12], {}),
    # prose around, a revised second block: the last block counts
    ("""Let me think. <evaluation>[["s1", 1, 0.5, ""]]</evaluation> Wait, I misjudged.
<evaluation>[["s1", 0, 0.3, "Reasoning Error"]]</evaluation>""", 1, [0.3], {}),
    # code fence with JSON objects, percentages as strings, label words
    ("""```json
[{"step": 1, "correctness": "correct", "P(correct)": "88%", "error_type": ""},
 {"step": 2, "correctness": "incorrect", "P(correct)": "15 %", "error_type": "knowledge error"}]
```""", 2, [0.88, 0.15], {0: "percent", 1: "percent"}),
    # trailing commas, smart quotes, an unescaped quote inside a step, a LaTeX backslash
    ("""<evaluation>[[“Step 1: the “net” force is \\frac{F}{2}”, 1, 0.9, “ ”,],
[‘Step 2’, 0, 0.05, ‘Visual Interpretation Error’,],]</evaluation>""", 2, [0.9, 0.05], {}),
    # a bare 85 meaning 85 %, and a probability out of any range
    ("""<evaluation>[["s1", 1, 85, ""], ["s2", 0, -3, "Reasoning Error"]]</evaluation>""", 2,
     [0.85, None], {0: "percent_without_sign", 1: "probability_out_of_range"}),
    # too few entries: matched by position, the rest are missing
    ("""<evaluation>[["s1", 1, 0.7, ""]]</evaluation>""", 3, [0.7, None, None],
     {0: "step_count_mismatch:1/3", 1: "missing_step"}),
    # too many entries: extra ones ignored, flagged
    ("""<evaluation>[["a", 1, 0.7, ""], ["b", 1, 0.8, ""], ["c", 1, 0.9, ""]]</evaluation>""",
     2, [0.7, 0.8], {0: "step_count_mismatch:3/2"}),
    # cut off by a token limit: complete entries kept
    ("""<evaluation>[["s1", 1, 0.6, ""], ["s2", 0, 0.2, "Reasoning""", 2, [0.6, None],
     {0: "truncated", 1: "missing_step"}),
    # missing probability, textual probability
    ("""<evaluation>[["s1", 1, "", ""], ["s2", 1, "about 0.7", ""]]</evaluation>""", 2,
     [None, 0.7], {0: "missing_probability"}),
    # no block at all
    ("I am unable to evaluate this solution.", 2, [None, None], {0: "no_block"}),
    # a Python expression is text, not code
    ("""<evaluation>[__import__("os").system("touch /tmp/confeval-pwned")]</evaluation>""",
     1, [None], {}),
    # entries without the step text; booleans as labels
    ("""<evaluation>[[true, 0.8, ""], [false, 0.1, "Question Understanding Error"]]
</evaluation>""", 2, [0.8, 0.1], {}),
]


@pytest.mark.parametrize("reply,n,expected,marks", CORPUS)
def test_corpus(reply, n, expected, marks):
    verdicts = parse_step_judgement(reply, n)
    assert len(verdicts) == n
    assert [v.p_correct if v.p_correct is None else round(v.p_correct, 10)
            for v in verdicts] == expected
    for i, mark in marks.items():
        assert mark in [*verdicts[i].flags, verdicts[i].reason or ""], (i, verdicts[i])
    for v in verdicts:
        assert (v.status == "ok") == (v.p_correct is not None)
        assert v.status == "ok" or v.reason
    assert not os.path.exists("/tmp/confeval-pwned")


def test_error_types_and_labels_are_normalised():
    v = parse_step_judgement("""<evaluation>[["s1", 0, 0.2, "NCE"], ["s2", 0, 0.3, "Logic"],
        ["s3", 0, 0.1, "No solution provided"], ["s4", 0, 0.2, "Spelling Error"],
        ["s5", "maybe", 0.9, ""]]</evaluation>""", 5)
    assert [x.pred_error_type for x in v[:4]] == ["numerical_calculation", "reasoning",
                                                  "no_solution_provided", "spelling"]
    assert "unknown_error_type" in v[3].flags and "unreadable_label" in v[4].flags
    assert normalise_error_type("  ") == ("", True)


@pytest.mark.parametrize("policy,expected_p,status", [("flag", 0.9, "ok"),
                                                      ("mirror", 0.1, "ok"),
                                                      ("exclude", None, "unparseable")])
def test_consistency_policies(policy, expected_p, status):
    reply = """<evaluation>[["s1", 0, 0.9, "Reasoning Error"]]</evaluation>"""
    (v,) = parse_step_judgement(reply, 1, consistency=policy)
    assert v.status == status and "label_contradicts_probability" in v.flags
    assert v.p_correct == (None if expected_p is None else pytest.approx(expected_p))
    # an error type alone (no label) also contradicts a high p
    (w,) = parse_step_judgement('<evaluation>[[null, 0.8, "Knowledge Error"]]</evaluation>',
                                1, consistency=policy)
    assert "label_contradicts_probability" in w.flags


def test_bad_arguments_raise():
    with pytest.raises(ValueError):
        parse_step_judgement("x", 1, consistency="vote")
    with pytest.raises(ValueError):
        parse_step_judgement("x", -1)


def test_literal_limits():
    with pytest.raises(LiteralError, match="nested too deeply"):
        read_literal("[" * 100 + "]" * 100)
    with pytest.raises(LiteralError):
        read_literal("[1, 2")
    assert read_literal("(1, 'a', None)") == [1, "a", None]


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=400), st.integers(min_value=0, max_value=6))
def test_no_input_makes_the_parser_raise(text, n):
    verdicts = parse_step_judgement(text, n)
    assert len(verdicts) == n
    assert all(v.p_correct is None or 0 <= v.p_correct <= 1 for v in verdicts)


_ATOMS = st.one_of(st.sampled_from(["[", "]", "{", "}", "(", ")", ",", ":", '"', "'", "“",
                                    "”", "%", "\\", "<evaluation>", "</evaluation>", "```",
                                    "0.5", "1", "0", "true", "None", "Reasoning Error",
                                    "__import__('os')", "\n", " "]),
                   st.text(max_size=5))


@settings(max_examples=400, deadline=None)
@given(st.lists(_ATOMS, max_size=60), st.integers(min_value=0, max_value=4))
def test_no_bracket_soup_makes_the_parser_raise(parts, n):
    verdicts = parse_step_judgement("".join(parts), n)
    assert len(verdicts) == n
