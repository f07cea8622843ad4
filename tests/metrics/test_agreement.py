import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import confusion_matrix as sk_confusion_matrix

from confeval.metrics import (
    UndefinedMetricWarning,
    bias_by_level,
    confusion_matrix,
    exact_accuracy,
    kendall,
    mean_absolute_error,
    mean_bias,
    overconfidence_rate,
    pearson,
    spearman,
    within_k_accuracy,
)


@pytest.fixture
def likert():
    rng = np.random.default_rng(0)
    truth = rng.integers(1, 6, size=2000)
    pred = np.clip(truth + rng.integers(-2, 3, size=2000), 1, 5)
    return pred, truth


def test_correlations_are_scipy_identical(likert):
    pred, truth = likert
    assert pearson(pred, truth) == stats.pearsonr(pred, truth)[0]
    assert spearman(pred, truth) == stats.spearmanr(pred, truth)[0]
    assert kendall(pred, truth) == stats.kendalltau(pred, truth)[0]


def test_constant_input_gives_nan_with_warning():
    with pytest.warns(UndefinedMetricWarning):
        assert np.isnan(spearman([3, 3, 3], [1, 2, 3]))


def test_point_metrics_hand_computed():
    pred = np.array([1, 2, 4, 5, 3])
    truth = np.array([1, 3, 4, 3, 3])
    assert exact_accuracy(pred, truth) == 0.6
    assert within_k_accuracy(pred, truth) == 0.8
    assert mean_absolute_error(pred, truth) == pytest.approx(3 / 5)
    assert mean_bias(pred, truth) == pytest.approx(1 / 5)
    by = bias_by_level(pred, truth)
    assert by == {1.0: {"n": 1, "bias": 0.0, "mae": 0.0},
                  3.0: {"n": 3, "bias": pytest.approx(1 / 3), "mae": 1.0},
                  4.0: {"n": 1, "bias": 0.0, "mae": 0.0}}


def test_confusion_matrix_matches_sklearn(likert):
    pred, truth = likert
    mat, labels = confusion_matrix(pred, truth)
    np.testing.assert_array_equal(mat, sk_confusion_matrix(truth, pred))
    np.testing.assert_array_equal(labels, [1, 2, 3, 4, 5])
    mat, _ = confusion_matrix(pred, truth, labels=[5, 4, 3, 2, 1])
    np.testing.assert_array_equal(mat, sk_confusion_matrix(truth, pred, labels=[5, 4, 3, 2, 1]))


def test_overconfidence_rate_is_strict():
    probs = np.array([[0.99, 0.01], [0.991, 0.009], [0.5, 0.5]])
    assert overconfidence_rate(probs, 0.99) == pytest.approx(1 / 3)
    assert overconfidence_rate([0.999, 0.2], 0.99) == 0.5
