"""CSL / CSL-Next against a direct transcription of ContextSL's per-head definition."""

import numpy as np
import pytest

from confeval.measures import (
    csl,
    csl_per_head,
    normalised_likelihood,
    select_heads,
    sequence_likelihood,
    token_sar,
)


def _transcribed(lp, attention, heads):
    # ContextSL: per head, normalise the readout row over the answer span, weight the NLL;
    # then average the chosen heads (negated: our measures are confidences).
    total = 0.0
    for h in heads:
        row = attention[h]
        total += sum(row[t] / sum(row) * lp[t] for t in range(len(lp)))
    return total / len(heads)


def test_csl_equals_the_transcribed_definition():
    rng = np.random.default_rng(3)
    lp = np.log(rng.uniform(0.05, 1.0, 6))
    attention = rng.uniform(0, 1, (12, 6))
    assert csl(lp, attention) == pytest.approx(_transcribed(lp, attention, range(12)), rel=1e-12)
    assert csl(lp, attention, heads=[2, 7]) == pytest.approx(
        _transcribed(lp, attention, [2, 7]), rel=1e-12)
    # per-head normalisation differs from LM-Polygraph's average-then-normalise
    pooled = attention.mean(0) / attention.mean(0).sum() @ lp
    assert abs(csl(lp, attention) - pooled) > 1e-6


def test_single_token_answers_make_sl_norm_tokensar_and_csl_coincide():
    lp = [np.log(0.37)]
    attention = np.array([[0.2], [0.9], [0.0]])  # a head with no attention: uniform weights
    values = [sequence_likelihood(lp), normalised_likelihood(lp), token_sar(lp, [0.4]),
              csl(lp, attention), csl(lp, attention, heads=[1])]
    assert np.ptp(values) == 0.0


def test_a_head_without_attention_on_the_answer_weights_tokens_uniformly():
    lp = np.array([-1.0, -3.0])
    assert csl_per_head(lp, [[0.0, 0.0], [1.0, 0.0]]).tolist() == [-2.0, -1.0]


@pytest.mark.parametrize("attention", [[[1.0]], [[1.0, -1.0]], [[np.nan, 1.0]],
                                       np.ones((2, 2, 2))])
def test_bad_attention_is_an_error(attention):
    with pytest.raises(ValueError):
        csl([-1.0, -2.0], attention)


def test_select_heads_ranks_heads_by_auroc_and_keeps_the_lower_index_on_ties():
    rng = np.random.default_rng(0)
    y = (np.arange(200) % 5 == 0).astype(float)
    noise = rng.normal(size=(200, 4))
    per_head = np.c_[noise[:, 0], y + 0.3 * noise[:, 1], noise[:, 2], y + 0.3 * noise[:, 1]]
    assert select_heads(per_head, y, k=2).tolist() == [1, 3]
    with pytest.raises(ValueError):
        select_heads(per_head, y, k=5)
    with pytest.raises(ValueError):
        select_heads(per_head, y, metric="f1")
