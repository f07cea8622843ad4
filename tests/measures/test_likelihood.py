"""White-box likelihood measures against their definitions."""

import numpy as np
import pytest

from confeval.measures import normalised_likelihood, perplexity, sequence_likelihood


def test_definitions_and_single_token_answers():
    lp = np.log([0.5, 0.25, 0.8])
    assert sequence_likelihood(lp) == pytest.approx(np.log(0.1))
    assert normalised_likelihood(lp) == pytest.approx(np.log(0.1) / 3)
    assert perplexity(lp) == pytest.approx(0.1 ** (-1 / 3))
    # a one-token answer: SL and SL(norm) are the same number, perplexity its exp(-x)
    one = [np.log(0.3)]
    assert sequence_likelihood(one) == normalised_likelihood(one)
    assert perplexity(one) == pytest.approx(1 / 0.3)


@pytest.mark.parametrize("bad", [[], [0.1], [np.nan], [[-1.0]]])
def test_bad_token_logprobs_are_errors(bad):
    with pytest.raises(ValueError):
        sequence_likelihood(bad)
