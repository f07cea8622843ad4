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


def test_token_sar_is_the_relevance_weighted_token_nll():
    from confeval.measures import token_sar

    lp = np.log([0.9, 0.2, 0.6])
    relevance = np.array([0.1, 0.6, 0.3])
    # transcription: uncertainty sum_i (R_i / sum R) * (-l_i); confidence is its negative
    expected = -np.sum(relevance / relevance.sum() * -lp)
    assert token_sar(lp, relevance) == pytest.approx(expected)
    assert token_sar(lp, np.zeros(3)) == pytest.approx(normalised_likelihood(lp))
    # single-token answers: SL, SL(norm) and TokenSAR coincide
    one = [np.log(0.4)]
    assert token_sar(one, [0.7]) == sequence_likelihood(one) == normalised_likelihood(one)
    with pytest.raises(ValueError):
        token_sar(lp, [1.0, -1.0, 0.0])


def test_token_relevance_removes_each_token_by_position():
    from confeval.measures import token_relevance

    seen = {}

    def similarity(full, reduced):
        seen["full"], seen["reduced"] = full, reduced
        return [0.9, 0.2, 0.9]

    r = token_relevance([" the", " the", " car"], similarity, prefix="Q: ")
    assert seen["full"] == "Q:  the the car"
    # positional removal keeps the other " the" (str.replace would remove both)
    assert seen["reduced"] == ["Q:  the car", "Q:  the car", "Q:  the the"]
    np.testing.assert_allclose(r, [0.1, 0.8, 0.1])
    with pytest.raises(ValueError, match="similarity returned"):
        token_relevance(["a", "b"], lambda full, reduced: [1.0])


def test_p_true_renormalises_a_against_b():
    from confeval.measures import p_true, p_true_prompt

    assert p_true(np.log(0.3), np.log(0.1)) == pytest.approx(0.75)
    assert p_true(0.0, -np.inf) == 1.0 and p_true(-np.inf, 0.0) == 0.0
    assert np.isnan(p_true(-np.inf, -np.inf))
    assert p_true_prompt("Q?", "yes").endswith("The possible answer is: (")
    with pytest.raises(ValueError):
        p_true(0.5, -1.0)
