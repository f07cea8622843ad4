"""Every parser of model output is linear in the reply's length, in time and memory, with a
counted length cap (``reply_too_long``): the bracket reply that once took 15 GB, and hypothesis
soups of brackets, quotes and backslashes up to 10 MB, each parse in seconds and < 200 MB,
and twice the reply taking about twice the time (a ratio, not a wall-clock figure: the same
parse takes 1.9 s on a quiet 2-core machine and 2.3 s beside another job)."""

import time
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

LIMIT_SECONDS, LIMIT_BYTES = 10.0, 200e6
LINEAR_RATIO = 3.0
"""time(reply) / time(its first half) stays under this: 2 for a linear parser, 4 for a
quadratic one (the bracket reply that took 15 GB was worse)."""


def _measured(fn, *args, memory: bool = False):
    """Run ``fn`` timed; with ``memory`` run it again under tracemalloc for the peak of
    allocations (tracemalloc slows Python down several times, so the two are apart and the
    memory check is kept to the cases that once blew up)."""
    started = time.perf_counter()
    result = fn(*args)
    seconds = time.perf_counter() - started
    assert seconds < LIMIT_SECONDS, f"{seconds:.2f} s"
    if memory:
        tracemalloc.start()
        try:
            fn(*args)
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


@pytest.mark.parametrize("name", sorted(SOUPS))
def test_adversarial_replies_parse_fast_and_small(name):
    text = SOUPS[name]
    verdicts = _measured(parse_step_judgement, text, 3,
                         memory=name in ("brackets", "tags", "backslashes"))
    assert len(verdicts) == 3
    assert _measured(extract_score_from_text, text).stage in ("none", "anchored", "keyword",
                                                              "backward")


def _best_seconds(fn, texts, *args, repeats: int = 4) -> list[float]:
    """The best time of ``fn`` on each text over ``repeats`` rounds, the texts interleaved
    within a round: a burst of load on the machine slows both sides of the ratio alike rather
    than one of them (a CI run beside other jobs once made a linear parse look quadratic)."""
    best = [float("inf")] * len(texts)
    for _ in range(repeats):
        for i, text in enumerate(texts):
            started = time.perf_counter()
            fn(text, *args)
            best[i] = min(best[i], time.perf_counter() - started)
    return best


@pytest.mark.parametrize("name", ["brackets", "closing quotes", "tags"])
def test_parse_time_grows_linearly_with_the_reply(name):
    text = SOUPS[name]
    half = text[:len(text) // 2]
    for fn, args in ((parse_step_judgement, (3,)), (extract_score_from_text, ())):
        full_s, half_s = _best_seconds(fn, [text, half], *args)
        assert full_s < LINEAR_RATIO * half_s + 0.05, (fn.__name__, full_s, half_s)


def test_replies_over_the_cap_are_counted_not_parsed():
    huge = "[" * (10 * 1024 * 1024)  # 10 MB
    verdicts = _measured(parse_step_judgement, huge, 2, memory=True)
    assert [v.reason for v in verdicts] == ["reply_too_long"] * 2
    assert _measured(extract_score_from_text, huge).flags == ["reply_too_long"]
    tokens = [TokenLogprob("[" * 1000, -0.1, ())] * 1100
    assert _measured(extract_score, tokens).flags == ["reply_too_long"]
    assert _measured(extract_from_tokens, tokens, ["A", "B"])["reason"] == "reply_too_long"


def test_token_parsers_are_linear_on_digit_runs_and_anchors():
    digits = [TokenLogprob("1", -0.1, ((" 1", -0.1), (" 2", -2.0)))] * 100_000
    found = _measured(extract_score, digits)
    assert found.stage == "backward"
    anchors = [TokenLogprob("Score", -0.1, ()), TokenLogprob(":", -0.1, ())] * 60_000
    assert _measured(extract_score, [*anchors, TokenLogprob(" 4", -0.2, ((" 4", -0.2),))]
                     ).score == 4


_SOUP = st.text(alphabet='[]{}()"\'\u201c\u201d\\,: 0.5%abc<>/`\n', max_size=2000)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(unit=_SOUP, repeats=st.integers(min_value=1, max_value=5000))
def test_repeated_soup_up_to_10_mb_is_linear(unit, repeats):
    text = (unit * repeats)[: 10 * 1024 * 1024]
    verdicts = _measured(parse_step_judgement, text, 4)
    assert len(verdicts) == 4 and all(v.p_correct is None or 0 <= v.p_correct <= 1
                                      for v in verdicts)
    if len(text) > MAX_REPLY_CHARS:
        assert {v.reason for v in verdicts} == {"reply_too_long"}
