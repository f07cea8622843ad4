"""The answer's probability from its tokens (confeval.parse.answer_tokens): the tokens of the
answer's last occurrence, tokenizer markers read as the spaces they stand for, pooled three
ways — checked against the sums written out by hand."""

import math

import pytest

from confeval.backends.base import TokenLogprob
from confeval.parse.answer_tokens import answer_probability, answer_tokens, pooled_probability

TOKENS = [TokenLogprob(t, lp, ()) for t, lp in
          [("4", -0.5), ("Ġ+", -0.1), ("Ġ", -0.2), ("4", -0.25), ("Ġ=", -0.05), ("Ġ", -0.3),
           ("1", -1.0), ("2", -0.75), (".", -0.01)]]


def test_the_last_occurrence_through_markers():
    chosen = answer_tokens(TOKENS, "12")
    assert [t.token for t in chosen] == ["1", "2"]
    assert [t.token for t in answer_tokens(TOKENS, "4")] == ["4"]   # the last "4"
    assert [t.logprob for t in answer_tokens(TOKENS, "4")] == [-0.25]
    assert [t.token for t in answer_tokens(TOKENS, "= 12")] == ["Ġ=", "Ġ", "1", "2"]


@pytest.mark.parametrize(("pooling", "expected"), [
    ("sequence", math.exp(-1.0 - 0.75)), ("normalised", math.exp((-1.0 - 0.75) / 2)),
    ("first", math.exp(-1.0))])
def test_three_poolings(pooling, expected):
    value, details = answer_probability(TOKENS, "12", pooling=pooling)
    assert value == pytest.approx(expected, rel=1e-15)
    assert details == {"n_tokens": 2, "answer_tokens": "12"}


def test_no_answer_and_an_answer_not_spelled_are_reasons():
    assert answer_tokens(TOKENS, None) == "no_answer"
    assert answer_tokens(TOKENS, "  ") == "no_answer"
    assert answer_tokens(TOKENS, "7") == "answer_not_in_tokens"
    assert answer_probability(TOKENS, "7") == (None, {"confidence_missing":
                                                      "answer_not_in_tokens"})
    assert [t.token for t in answer_tokens(TOKENS, None, span="reply")] == \
        [t.token for t in TOKENS]
    with pytest.raises(ValueError, match="pooling must be one of sequence, normalised, first"):
        pooled_probability([-1.0], "max")
