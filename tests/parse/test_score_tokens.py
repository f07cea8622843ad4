"""A corpus of judge outputs written for the purpose, with the expected score and stage."""

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from confeval.parse import DEFAULT_FLOOR, extract_score, extract_score_from_text


def tokens(text, marker="Ġ", rating_top=None, at=None):
    """Split like a byte-level BPE: words, digits and punctuation, leading space as a marker.

    Every token gets log-prob -0.1; the token at index ``at`` (or every rating-looking
    digit) gets ``rating_top`` as its top alternatives.
    """
    pieces = re.findall(r" ?\d| ?[A-Za-z]+| ?[^\sA-Za-z\d]|\n", text)
    out = []
    for i, p in enumerate(pieces):
        tok = p.replace(" ", marker)
        top = rating_top if (rating_top is not None and (at is None or i == at)) else ()
        out.append((tok, -0.1, tuple(top)))
    return out


TOP = [("4", -0.3), ("3", -1.6), ("5", -2.5), ("2", -4.0), ("1", -6.0)]

CORPUS = [
    # (judge output, expected score, expected stage)
    ("The answer reads 5 charts in Step 2 correctly.\nScore: 4", 4, "anchored"),
    ("**Score:** 3\nThe response is adequate.", 3, "anchored"),
    ("Overall the answer is good. Score: 4/5", 4, "anchored"),
    ("Initial score: 2. After checking again, Final Score: 5", 5, "anchored"),
    ("I would give this a rating of 4 out of 5 because step 1 fails.", 4, "keyword"),
    ("Step 1: count 3 bars. Step 2: compare with 5. Overall I think 2", 2, "backward"),
    ("score is high: 4 - but the chart has 12 bars", 4, "keyword"),
    ("No number at all here.", None, "none"),
    ("SCORE : 1", 1, "anchored"),
    ("Rating: 5 (excellent)", 5, "keyword"),
]


@pytest.mark.parametrize("text,score,stage", CORPUS)
@pytest.mark.parametrize("marker", ["Ġ", "▁", " "])
def test_corpus_tokens(text, score, stage, marker):
    res = extract_score(tokens(text, marker=marker))
    assert (res.score, res.stage) == (score, stage)


@pytest.mark.parametrize("text,score,stage", CORPUS)
def test_corpus_text(text, score, stage):
    res = extract_score_from_text(text)
    assert (res.score, res.stage) == (score, stage)


def test_logprobs_read_from_top_k_with_markers_merged_and_floor():
    toks = tokens("Reasoning with 2 steps.\nScore:")
    top = [("Ġ4", -0.5), ("4", -1.0), ("▁3", -1.5), ("Ġ5", -3.0)]
    toks.append(("Ġ4", -0.5, tuple(top)))
    res = extract_score(toks)
    assert res.score == 4 and res.stage == "anchored" and res.position == len(toks) - 1
    expected4 = math.log(math.exp(-0.5) + math.exp(-1.0))
    assert res.logprobs == pytest.approx([DEFAULT_FLOOR, DEFAULT_FLOOR, -1.5, expected4, -3.0])
    assert "floored:2" in res.flags


def test_nan_logprobs_become_floor_and_are_flagged():
    toks = tokens("Score:")
    toks.append(("3", float("nan"), (("3", float("nan")), ("4", -1.0))))
    res = extract_score(toks)
    assert res.score == 3
    assert res.logprobs[2] == DEFAULT_FLOOR and res.logprobs[3] == -1.0
    assert "nan_replaced:1" in res.flags


def test_ten_point_scale_with_a_two_token_ten():
    toks = [*tokens("Careful answer. Score:"), ("Ġ1", -0.2, (("Ġ1", -0.2), ("Ġ9", -2.0))),
            ("0", -0.05, (("0", -0.05),))]
    res = extract_score(toks, levels=range(1, 11))
    assert res.score == 10
    assert res.logprobs[9] == pytest.approx(-0.25)  # chain rule: P("1") * P("0" | "1")
    assert res.logprobs[8] == -2.0 and "multi_token" in res.flags


def test_zero_based_scale():
    res = extract_score(tokens("Score: 0"), levels=range(0, 5))
    assert res.score == 0 and res.stage == "anchored"
    assert extract_score(tokens("Score: 7"), levels=range(0, 5)).stage == "none"


def test_repeated_scores_take_the_last_anchor_and_rating_top_is_used():
    text = "Score: 2\nWait, I reconsider.\nScore: 4"
    toks = tokens(text)
    last = len(toks) - 1
    toks[last] = (toks[last][0], -0.3, tuple(TOP))
    res = extract_score(toks)
    assert res.score == 4 and res.position == last
    np.testing.assert_allclose(res.logprobs, [-6.0, -4.0, -1.6, -0.3, -2.5])
    assert res.flags == []


@settings(deadline=None)  # hypothesis's default 200 ms per example is a wall-clock limit
@given(st.text(max_size=300))
def test_never_raises_on_arbitrary_text(text):
    res = extract_score_from_text(text)
    assert res.score is None or 1 <= res.score <= 5
    res = extract_score(tokens(text))
    assert res.stage in {"anchored", "keyword", "backward", "none"}
