import numpy as np
import pandas as pd
import pytest
from scipy.special import softmax

from confeval.metrics import auroc, expected_calibration_error, top_label_calibration_error
from confeval.simulate import ERROR_TYPES, simulate


def test_confidence_behaviours_do_what_they_say():
    cal = simulate("confidence", 20000, "calibrated", seed=1)
    over = simulate("confidence", 20000, "overconfident", seed=1)
    blind = simulate("confidence", 20000, "uninformative", seed=1)
    assert expected_calibration_error(cal.confidence, cal.correct) < 0.015
    assert expected_calibration_error(over.confidence, over.correct) > 0.1
    assert (over.confidence - over.correct).mean() > 0.1
    assert abs(auroc(blind.confidence, blind.correct) - 0.5) < 0.02
    assert cal.simulated.all()


def test_verbalised_grid():
    df = simulate("confidence", 500, "calibrated", seed=0, step=0.05)
    assert np.allclose(df.confidence * 20, np.round(df.confidence * 20))


def test_calibrated_score_judge_is_calibrated_per_level():
    df = simulate("scores", 40000, "calibrated", seed=2)
    probs = np.exp(df[[f"score_lp{k}" for k in range(1, 6)]].to_numpy())
    np.testing.assert_allclose(probs.sum(1), 1, atol=1e-12)
    freq = np.bincount(df.gt_score - 1, minlength=5) / len(df)
    np.testing.assert_allclose(probs.mean(0), freq, atol=0.01)
    assert top_label_calibration_error(probs, df.gt_score - 1) < 0.02


def test_overconfident_and_compressing_score_judges():
    over = simulate("scores", 20000, "overconfident", seed=3)
    probs = np.exp(over[[f"score_lp{k}" for k in range(1, 6)]].to_numpy())
    assert top_label_calibration_error(probs, over.gt_score - 1) > 0.15
    comp = simulate("scores", 20000, "compressing", seed=3)
    assert comp.parsed_score.std() < 0.7 * comp.gt_score.std()
    assert set(comp.parsed_score) <= {2, 3, 4}


def test_steps_format_and_behaviour():
    df = simulate("steps", 400, "typical", seed=4)
    assert list(df.columns[:6]) == ["item_id", "step", "variant", "p_correct", "label",
                                    "error_type"]
    assert set(df.variant) == {"original", "lexical", "syntactic"}
    orig = df[df.variant == "original"]
    assert (orig.step.groupby(orig.item_id).min() == 0).all()
    assert ((orig.p_correct >= 0.01) & (orig.p_correct <= 0.99)).all()
    assert set(orig.error_type[orig.label == 0]) <= set(ERROR_TYPES)
    assert (orig.error_type[orig.label == 1] == "").all()
    assert auroc(orig.p_correct, orig.label) > 0.8
    pairs = orig.merge(df[df.variant == "syntactic"], on=["item_id", "step"])
    assert 0 < (pairs.p_correct_x != pairs.p_correct_y).mean() < 1


def test_mcq_calibrated_logits():
    df = simulate("mcq", 20000, "calibrated", seed=5, n_options=5)
    logits = df[[f"logit_{c}" for c in "ABCDE"]].to_numpy()
    labels = df.answer.map({c: i for i, c in enumerate("ABCDE")}).to_numpy()
    assert top_label_calibration_error(softmax(logits, axis=1), labels) < 0.02
    assert set(df.category) == {"easy", "medium", "hard"}


@pytest.mark.parametrize("kind", ["confidence", "scores", "steps", "mcq"])
def test_seeded_and_deterministic(kind):
    a = simulate(kind, 50, seed=7)
    b = simulate(kind, 50, seed=7)
    c = simulate(kind, 50, seed=8)
    pd.testing.assert_frame_equal(a, b)
    assert not a.equals(c)


def test_unknown_behaviour_is_clear():
    with pytest.raises(ValueError, match="unknown scores behaviour 'smug'"):
        simulate("scores", 10, "smug")
