"""Every parser of model output reads hostile replies right, in bounded memory, with a counted
length cap (``reply_too_long``): the bracket reply that once took 15 GB, and hypothesis soups of
brackets, quotes and backslashes up to 10 MB, each read to its expected result in < 200 MB of
allocations (tracemalloc's count of bytes, not a clock).

How long each parse takes, and whether twice the reply takes about twice the time, is measured
by ``benchmarks/hostile_replies.py``, not here: no test asserts a wall-clock time (the same
parse took 1.9 s on a quiet 2-core machine and 2.3 s beside another job)."""

import tracemalloc

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from confeval.backends import TokenLogprob
from confeval.parse import (
    MAX_REPLY_CHARS,
    extract_from_tokens,
    extract_score,
    extract_score_from_text,
    parse_step_judgement,
)

LIMIT_BYTES = 200e6


def _within_memory(fn, *args):
    """``fn(*args)`` run under tracemalloc, its peak of allocations checked (tracemalloc
    slows Python down several times, so it is kept to the cases that once blew up)."""
    tracemalloc.start()
    try:
        result = fn(*args)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < LIMIT_BYTES, f"{peak / 1e6:.0f} MB"
    return result


SOUPS = {
    "brackets": "[" * 100_000 + "]" * 100_000,
    "nested lists just under the cap": "[" * (MAX_REPLY_CHARS // 2 - 10) + "]" * 10,
    "quotes": '["' + '" "' * 300_000 + '"]',
    "closing quotes": "[[1, 0.5, " + '"a"b' * 240_000 + "]]",
    "backslashes": '["' + "\\" * 900_000 + '"]',
    "tags": "<evaluation>[" * 70_000,
    "fences": "```\n[{" * 150_000,
    "many brackets then a list": "{" * 400_000 + '[["s", 1, 0.9, ""]]',
    "score anchors": "Score: " * 140_000,
    "20 brackets then quotes": "[" * 20 + '"' + 'a"b' * 300_000,
}


MEMORY_CHECKED = ("brackets", "tags", "backslashes")
NESTED = "unreadable_block: nested too deeply at character 52"
EXPECTED = {  # soup -> (every step's reason, the text score's (stage, score))
    "brackets": (NESTED, ("none", None)),
    "nested lists just under the cap": (NESTED, ("none", None)),
    "quotes": ("no_block", ("none", None)),  # a list of strings holds no step entries
    "closing quotes": ("unreadable_block: unclosed string at character 960012",
                       ("backward", 1)),
    "backslashes": ("no_block", ("none", None)),
    "tags": ("unreadable_block: unclosed '[' at character 910000", ("none", None)),
    "fences": ("unreadable_block: unclosed '{' at character 6", ("none", None)),
    "many brackets then a list": (NESTED, ("backward", 1)),
    "score anchors": ("no_block", ("none", None)),
    "20 brackets then quotes": ("unreadable_block: unclosed string at character 900021",
                                ("none", None)),
}


@pytest.mark.parametrize("name", sorted(SOUPS))
def test_adversarial_replies_are_read_right_and_small(name):
    text = SOUPS[name]
    reason, score = EXPECTED[name]
    verdicts = (_within_memory(parse_step_judgement, text, 3) if name in MEMORY_CHECKED
                else parse_step_judgement(text, 3))
    assert [(v.status, v.reason, v.p_correct) for v in verdicts] == [
        ("unparseable", reason, None)] * 3
    found = extract_score_from_text(text)
    assert (found.stage, found.score) == score


def test_replies_over_the_cap_are_counted_not_parsed():
    huge = "[" * (10 * 1024 * 1024)  # 10 MB
    verdicts = _within_memory(parse_step_judgement, huge, 2)
    assert [v.reason for v in verdicts] == ["reply_too_long"] * 2
    assert extract_score_from_text(huge).flags == ["reply_too_long"]
    tokens = [TokenLogprob("[" * 1000, -0.1, ())] * 1100
    assert extract_score(tokens).flags == ["reply_too_long"]
    assert extract_from_tokens(tokens, ["A", "B"])["reason"] == "reply_too_long"


def test_token_parsers_read_digit_runs_and_anchors():
    digits = [TokenLogprob("1", -0.1, ((" 1", -0.1), (" 2", -2.0)))] * 100_000
    found = extract_score(digits)
    assert (found.stage, found.score, found.position) == ("backward", 1, 0)
    anchors = [TokenLogprob("Score", -0.1, ()), TokenLogprob(":", -0.1, ())] * 60_000
    found = extract_score([*anchors, TokenLogprob(" 4", -0.2, ((" 4", -0.2),))])
    assert (found.stage, found.score, found.position) == ("anchored", 4, 120_000)


_SOUP = st.text(alphabet='[]{}()"\'\u201c\u201d\\,: 0.5%abc<>/`\n', max_size=2000)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(unit=_SOUP, repeats=st.integers(min_value=1, max_value=5000))
def test_repeated_soup_up_to_10_mb_is_read(unit, repeats):
    text = (unit * repeats)[: 10 * 1024 * 1024]
    verdicts = parse_step_judgement(text, 4)
    assert len(verdicts) == 4 and all(v.p_correct is None or 0 <= v.p_correct <= 1
                                      for v in verdicts)
    if len(text) > MAX_REPLY_CHARS:
        assert {v.reason for v in verdicts} == {"reply_too_long"}
