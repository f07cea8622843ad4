"""The stated-confidence parser on replies as models write them, and on hostile ones."""

from __future__ import annotations

import pytest

from confeval.parse import MAX_REPLY_CHARS, parse_stated_confidence


@pytest.mark.parametrize("reply, value, flags", [
    ("B. Confidence: 85%", 0.85, ("percent",)),
    ("I am 90% sure.", 0.9, ("percent",)),
    ("I am 90 sure.", None, ("no_number",)),             # before the word: a percentage only
    ("Answer: 7\nConfidence level: 0.6", 0.6, ()),
    ("confidence = .25", 0.25, ()),
    ("My confidence is 70", 0.7, ("percent_without_sign",)),
    ("Probability: 1", 1.0, ()),
    ("Confidence: 0.4 ... on reflection, confidence: 0.9", 0.9, ()),
    ("Confidence: -5%", None, ("percent", "out_of_range")),
    ("Confidence: 101", None, ("out_of_range",)),
    ("Certainty: high", None, ("no_number",)),
    ("", None, ("no_number",)),
    (None, None, ("no_number",)),
])
def test_replies(reply, value, flags):
    stated = parse_stated_confidence(reply)
    assert stated.value == value and stated.flags == flags


def test_the_window_bounds_how_far_the_number_may_be():
    reply = "Confidence: " + "x" * 50 + " 0.8"
    assert parse_stated_confidence(reply).value is None
    assert parse_stated_confidence(reply, window=60).value == 0.8


def test_the_last_number_only_when_asked():
    assert parse_stated_confidence("4, 90").value is None
    stated = parse_stated_confidence("4, 90", fallback="last_number")
    assert stated.value == 0.9 and stated.flags == ("no_anchor", "percent_without_sign")
    assert stated.position == 3


def test_a_reply_too_long_is_not_read():
    stated = parse_stated_confidence("Confidence: 0.5 " + "a" * MAX_REPLY_CHARS)
    assert stated.value is None and stated.flags == ("reply_too_long",)


def test_a_long_hostile_reply_is_read_in_linear_time():
    """Many anchor words and digits: each is searched once (no number within reach of any
    anchor but the last)."""
    reply = "confidence " * 50_000 + "9" * 10 + " confidence: 0.3"
    assert parse_stated_confidence(reply).value == 0.3


def test_an_unknown_fallback_is_one_error_naming_the_choices():
    with pytest.raises(ValueError, match="fallback must be one of none, last_number"):
        parse_stated_confidence("x", fallback="first")
