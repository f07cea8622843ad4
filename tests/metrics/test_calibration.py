import numpy as np
import pytest
from sklearn.calibration import calibration_curve
from sklearn.metrics import brier_score_loss

from confeval.metrics import (
    HistogramBinning,
    bin_indices,
    brier_score,
    calibration_error_float32_left_closed,
    classwise_calibration_error,
    expected_calibration_error,
    maximum_calibration_error,
    multiclass_brier_score,
    reliability_diagram,
    top_label,
    top_label_calibration_error,
)


def test_edges_are_right_closed_and_zero_in_first_bin():
    conf = [0.0, 1e-12, 0.1, 0.1000001, 0.5, 0.9999, 1.0]
    assert bin_indices(conf, n_bins=10).tolist() == [0, 0, 0, 1, 4, 9, 9]


def test_values_made_by_float_arithmetic_land_on_their_edge():
    # 0.1 * 7 = 0.7000000000000001 and 0.1 * 3 = 0.30000000000000004: both are on an edge.
    made = np.array([0.1 * 7, 0.1 * 3, 1 - 0.9, 0.7 - 1e-10, 0.7 + 2e-9])
    assert made[0] != 0.7 and made[1] != 0.3
    assert bin_indices(made, n_bins=10).tolist() == [6, 2, 0, 6, 7]


def test_ece_hand_computed_with_values_on_edges():
    # M = 4 bins: (0, .25], (.25, .5], (.5, .75], (.75, 1]
    conf = np.array([0.25, 0.25, 0.5, 0.75, 1.0, 1.0])
    correct = np.array([0, 0, 1, 1, 1, 0])
    # bin1: {.25,.25} acc 0 conf .25 -> gap .25 (w 2/6); bin2: {.5} acc 1 gap .5 (w 1/6)
    # bin3: {.75} acc 1 gap .25 (w 1/6); bin4: {1,1} acc .5 gap .5 (w 2/6)
    expected = (2 * 0.25 + 0.5 + 0.25 + 2 * 0.5) / 6
    assert expected_calibration_error(conf, correct, n_bins=4) == pytest.approx(expected, abs=1e-15)
    assert maximum_calibration_error(conf, correct, n_bins=4) == pytest.approx(0.5, abs=1e-15)


def test_ece_discrete_likert_confidences():
    # Verbalised confidences on a 0/0.25/.../1 grid with M = 4: 0 and 0.25 share bin 1.
    conf = np.array([0.0, 0.25, 0.5, 0.5, 0.75, 1.0])
    correct = np.array([0, 1, 0, 1, 1, 1])
    expected = (abs(1 - 0.25) + abs(1 - 1.0) + abs(1 - 0.75) + abs(1 - 1.0)) / 6
    assert expected_calibration_error(conf, correct, n_bins=4) == pytest.approx(expected)


def test_reliability_diagram_matches_sklearn_calibration_curve():
    rng = np.random.default_rng(3)
    conf = rng.uniform(size=5000)
    correct = (rng.uniform(size=5000) < conf ** 1.3).astype(float)
    diag = reliability_diagram(conf, correct, n_bins=10)
    prob_true, prob_pred = calibration_curve(correct, conf, n_bins=10)
    filled = diag.counts > 0
    # sklearn's bins are left-closed; with continuous data no value sits on an edge.
    np.testing.assert_allclose(diag.accuracy[filled], prob_true, rtol=1e-12)
    np.testing.assert_allclose(diag.mean_confidence[filled], prob_pred, rtol=1e-12)
    ece = np.sum(diag.counts[filled] / conf.size * np.abs(prob_true - prob_pred))
    assert expected_calibration_error(conf, correct, n_bins=10) == pytest.approx(ece, rel=1e-12)


def test_equal_mass_bins_keep_ties_together_and_are_order_independent():
    conf = np.array([0.1, 0.2, 0.2, 0.2, 0.2, 0.3, 0.9, 0.9])
    correct = np.array([0, 1, 0, 1, 1, 0, 1, 1])
    idx = bin_indices(conf, n_bins=4, strategy="quantile")
    for v in np.unique(conf):
        assert np.unique(idx[conf == v]).size == 1
    perm = np.random.default_rng(0).permutation(conf.size)
    a = expected_calibration_error(conf, correct, n_bins=4, strategy="quantile")
    b = expected_calibration_error(conf[perm], correct[perm], n_bins=4, strategy="quantile")
    assert a == pytest.approx(b, abs=1e-15)


def test_equal_mass_bins_hand_computed():
    conf = np.arange(1, 9) / 10  # 0.1 .. 0.8, quartile edges at 0.1, .275, .45, .625, .8
    correct = np.array([0, 0, 1, 0, 1, 1, 1, 1])
    assert bin_indices(conf, n_bins=4, strategy="quantile").tolist() == [0, 0, 1, 1, 2, 2, 3, 3]
    expected = (abs(0 - 0.15) + abs(0.5 - 0.35) + abs(1 - 0.55) + abs(1 - 0.75)) / 4
    assert expected_calibration_error(conf, correct, n_bins=4, strategy="quantile") == \
        pytest.approx(expected)


def test_top_label_and_classwise():
    probs = np.array([[0.7, 0.2, 0.1], [0.3, 0.3, 0.4], [0.5, 0.5, 0.0]])
    labels = np.array([0, 1, 1])
    conf, correct = top_label(probs, labels)
    assert conf.tolist() == [0.7, 0.4, 0.5] and correct.tolist() == [1, 0, 0]  # tie -> class 0
    assert top_label_calibration_error(probs, labels, n_bins=10) == pytest.approx(
        (0.3 + 0.4 + 0.5) / 3)
    per_class = [expected_calibration_error(probs[:, k], labels == k, n_bins=10) for k in range(3)]
    expected = np.mean(per_class)
    assert classwise_calibration_error(probs, labels, n_bins=10) == pytest.approx(expected)


def test_brier_matches_sklearn():
    rng = np.random.default_rng(1)
    conf = rng.uniform(size=1000)
    y = rng.integers(0, 2, size=1000)
    assert brier_score(conf, y) == pytest.approx(brier_score_loss(y, conf), rel=1e-12)
    probs = rng.dirichlet(np.ones(4), size=500)
    labels = rng.integers(0, 4, size=500)
    onehot = np.eye(4)[labels]
    assert multiclass_brier_score(probs, labels) == pytest.approx(
        np.mean(((probs - onehot) ** 2).sum(1)), rel=1e-12)


def test_histogram_binning_fit_transform():
    conf = np.array([0.05, 0.1, 0.3, 0.35, 0.9, 0.95])
    correct = np.array([0, 0, 1, 0, 1, 1])
    hb = HistogramBinning(n_bins=3, strategy="quantile").fit(conf, correct)
    np.testing.assert_allclose(hb.transform(conf), [0, 0, 0.5, 0.5, 1, 1])
    # Outside the fitted range: the end bins.
    np.testing.assert_allclose(hb.transform([-5.0, 7.0]), [0, 1])
    # Uniform bins with an empty bin fall back to the base rate 0.5.
    hb = HistogramBinning(n_bins=4, strategy="uniform").fit([0.1, 0.9], [0, 1])
    np.testing.assert_allclose(hb.transform([0.1, 0.4, 0.6, 0.9]), [0, 0.5, 0.5, 1])


def test_recalibration_reduces_ece_of_an_overconfident_measure():
    rng = np.random.default_rng(0)
    p = rng.uniform(size=20000)
    correct = (rng.uniform(size=p.size) < p).astype(float)
    over = p ** 0.3
    hb = HistogramBinning(n_bins=15).fit(over[:10000], correct[:10000])
    before = expected_calibration_error(over[10000:], correct[10000:])
    after = expected_calibration_error(hb.transform(over[10000:]), correct[10000:])
    assert before > 0.15 and after < 0.03


@pytest.mark.parametrize("bad", [[0.5, np.nan], [0.5, 1.2], [[0.5]]])
def test_bad_input_is_a_clear_error(bad):
    with pytest.raises(ValueError, match="confidence"):
        expected_calibration_error(bad, [1, 0])


def test_torch_linspace_float32_is_bit_identical_to_torch():
    torch = pytest.importorskip("torch")
    from confeval.metrics.calibration import torch_linspace_float32

    for steps in range(1, 302):
        ours = torch_linspace_float32(steps)
        assert np.array_equal(ours, torch.linspace(0, 1, steps, dtype=torch.float32).numpy())
    # numpy's float32 linspace is one ulp off at some edges (the finding)
    numpy_edges = np.linspace(0, 1, 16, dtype=np.float32)
    assert np.flatnonzero(torch_linspace_float32(16) != numpy_edges).tolist() == [3, 6, 7, 8, 9,
                                                                                   10]


@pytest.mark.parametrize("n_bins", [10, 15, 20])
def test_float32_left_closed_equals_torchmetrics_on_edges(n_bins):
    """Confidences exactly on every float32 edge (as torch makes them), between edges, at 0
    and 1, and a uniform 5-way softmax (exactly 0.2): ECE and MCE equal torchmetrics'."""
    torch = pytest.importorskip("torch")
    tm = pytest.importorskip("torchmetrics.functional.classification")
    from confeval.metrics.calibration import torch_linspace_float32

    edges = torch_linspace_float32(n_bins + 1)
    mids = ((edges[:-1].astype(np.float64) + edges[1:]) / 2).astype(np.float32)
    rng = np.random.default_rng(n_bins)
    grid = np.concatenate([edges, mids, np.float32([0.2, 0.45, 0.7, 1.0, 0.0])])
    conf = np.repeat(grid, 7)
    conf = np.concatenate([conf, rng.choice(grid, 500)]).astype(np.float32)
    correct = (rng.random(conf.size) < conf).astype(np.int64)
    for norm, tm_norm in (("l1", "l1"), ("max", "max")):
        ours = calibration_error_float32_left_closed(conf, correct, n_bins=n_bins, norm=norm)
        ref = tm.binary_calibration_error(torch.from_numpy(conf), torch.from_numpy(correct),
                                          n_bins=n_bins, norm=tm_norm).item()
        assert ours == pytest.approx(ref, abs=1e-7), norm
    # the repro: 0.2 lies on edge 3 of 15 bins
    repro = calibration_error_float32_left_closed([0.15, 0.2, 0.25], [1, 0, 0], n_bins=15)
    assert repro == pytest.approx(0.3, abs=1e-7)
