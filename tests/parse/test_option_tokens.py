"""Option letters read from generated tokens and their top-k alternatives."""

import math

import pytest

from confeval.backends import TokenLogprob
from confeval.parse import DEFAULT_FLOOR, extract_from_tokens, normalise_token


@pytest.mark.parametrize("raw", ["A", " A", "▁A", "ĠA", "A)", "A.", "(A)", "A:"])
def test_token_normalisation(raw):
    assert normalise_token(raw) == "A"


def test_extraction_merges_spellings_floors_missing_and_skips_preamble():
    tokens = [TokenLogprob("The", -0.5, (("The", -0.5), ("B", -2.0))),
              TokenLogprob(" answer", -0.1, ()),
              TokenLogprob(" B", -0.4, ((" B", -0.4), ("B", -1.2), (" A", -2.0)))]
    found = extract_from_tokens(tokens, ["A", "B", "C"])
    assert found["position"] == 2 and found["n_missing"] == 1
    assert found["raw"]["B"] == pytest.approx(math.log(math.exp(-0.4) + math.exp(-1.2)))
    assert found["raw"]["A"] == -2.0 and found["raw"]["C"] == DEFAULT_FLOOR
