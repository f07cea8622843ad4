"""Calibration metrics: ECE, MCE, class-wise ECE, Brier score, reliability diagrams and
histogram-binning recalibration.

Bin conventions (documented once, used everywhere in confeval)
---------------------------------------------------------------
``strategy="uniform"`` (equal width, the default)
    M bins over [0, 1], **right-closed**: bin k (1-based) holds (k-1)/M < c <= k/M, and c = 0
    falls in the first bin. A value within ``EDGE_TOL`` (1e-9) of an edge counts as *on* the
    edge, so 0.7 lands in (0.6, 0.7] with M = 10 whatever float arithmetic produced it
    (``0.1 * 7`` is 0.7000000000000001). Discrete confidences (Likert steps, 0/0.25/.../1,
    verbalised percentages) therefore bin the same way on every machine.
``strategy="quantile"`` (equal mass)
    Edges are the ``k/M`` quantiles of the confidences (``numpy.quantile``, linear
    interpolation); bins are right-closed as above. Tied values always share a bin, so with
    heavy ties some bins are empty and fewer than M are used; empty bins carry no weight.

Empty bins never contribute to ECE or MCE.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from .._validation import (
    as_float_1d,
    as_labels,
    as_prob_matrix,
    as_unit_interval,
    check_positive_int,
    same_length,
)

EDGE_TOL = 1e-9
STRATEGIES = ("uniform", "quantile")

__all__ = [
    "EDGE_TOL",
    "calibration_error_float32_left_closed",
    "HistogramBinning",
    "ReliabilityDiagram",
    "bin_edges",
    "bin_indices",
    "brier_score",
    "classwise_calibration_error",
    "expected_calibration_error",
    "maximum_calibration_error",
    "multiclass_brier_score",
    "reliability_diagram",
    "top_label",
    "top_label_calibration_error",
]


def uniform_bin_indices(confidence: np.ndarray, n_bins: int) -> np.ndarray:
    """0-based equal-width bin index of each confidence in [0, 1] (right-closed bins)."""
    scaled = confidence * n_bins
    nearest_edge = np.round(scaled)
    on_edge = np.abs(confidence - nearest_edge / n_bins) <= EDGE_TOL
    scaled = np.where(on_edge, nearest_edge, scaled)
    return np.clip(np.ceil(scaled).astype(np.int64) - 1, 0, n_bins - 1)


def bin_edges(confidence: ArrayLike, n_bins: int = 15, strategy: str = "uniform") -> np.ndarray:
    """Return the ``n_bins + 1`` bin edges used by ``strategy`` (see module docstring)."""
    n_bins = check_positive_int(n_bins, "n_bins")
    _check_strategy(strategy)
    if strategy == "uniform":
        return np.linspace(0.0, 1.0, n_bins + 1)
    conf = as_float_1d(confidence, "confidence")
    if conf.size == 0:
        raise ValueError("confidence is empty")
    return np.quantile(conf, np.linspace(0.0, 1.0, n_bins + 1))


def bin_indices(confidence: ArrayLike, n_bins: int = 15, strategy: str = "uniform") -> np.ndarray:
    """0-based bin index of every confidence under the documented bin convention.

    Examples
    --------
    >>> bin_indices([0.0, 0.1, 0.7, 0.7000000000000001, 0.71, 1.0], n_bins=10).tolist()
    [0, 0, 6, 6, 7, 9]
    """
    n_bins = check_positive_int(n_bins, "n_bins")
    _check_strategy(strategy)
    if strategy == "uniform":
        return uniform_bin_indices(as_unit_interval(confidence, "confidence"), n_bins)
    conf = as_float_1d(confidence, "confidence")
    edges = bin_edges(conf, n_bins, "quantile")
    # side="left": a value equal to an inner edge goes to the lower bin (right-closed bins).
    return np.searchsorted(edges[1:-1], conf, side="left").astype(np.int64)


def _check_strategy(strategy: str) -> None:
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {STRATEGIES}, got {strategy!r}")


def bin_gap_sums(bins: np.ndarray, gap: np.ndarray, n_bins: int) -> np.ndarray:
    """Per row, each bin's sum of the items' gaps (correctness minus confidence): ``bins`` and
    ``gap`` of shape (rows, n) give (rows, n_bins) — one ``bincount`` over all rows."""
    rows = bins.shape[0]
    flat = (bins + n_bins * np.arange(rows)[:, None]).ravel()
    return np.bincount(flat, weights=gap.ravel(), minlength=rows * n_bins).reshape(rows, n_bins)


def ece_from_bin_sums(gap_sums: np.ndarray, total: np.ndarray | float) -> np.ndarray:
    r"""The ECE kernel, the one formula every form of the ECE computes (a record set's, the
    bootstrap's rows, a weighted resample's, a comparison's): from each bin's summed gap
    :math:`\sum_{i \in B_m} w_i (y_i - c_i)` and the total weight :math:`\sum_i w_i`,
    :math:`\sum_m |\cdot| / \sum_i w_i` — which is
    :math:`\sum_m \frac{|B_m|}{n} |\mathrm{acc}(B_m) - \mathrm{conf}(B_m)|`.
    ``gap_sums`` is (rows, n_bins); the result (rows,)."""
    return np.abs(gap_sums).sum(axis=-1) / total


def _binned_sums(confidence, target, idx, n_bins):
    counts = np.bincount(idx, minlength=n_bins).astype(np.float64)
    conf_sum = np.bincount(idx, weights=confidence, minlength=n_bins)
    target_sum = np.bincount(idx, weights=target, minlength=n_bins)
    return counts, conf_sum, target_sum


def _prepare(confidence, correct, strategy):
    conf = (as_unit_interval(confidence, "confidence") if strategy == "uniform"
            else as_float_1d(confidence, "confidence"))
    target = as_unit_interval(correct, "correct")
    n = same_length(confidence=conf, correct=target)
    if n == 0:
        raise ValueError("calibration metrics need at least one sample")
    return conf, target


def expected_calibration_error(confidence: ArrayLike, correct: ArrayLike, *, n_bins: int = 15,
                               strategy: str = "uniform") -> float:
    r"""Expected calibration error (ECE) of confidences against correctness.

    .. math:: \mathrm{ECE} = \sum_{m=1}^{M} \frac{|B_m|}{n}\,
              \bigl|\mathrm{acc}(B_m) - \mathrm{conf}(B_m)\bigr|

    Parameters
    ----------
    confidence : array of shape (n,)
        Confidence that the prediction is correct, in [0, 1] (any real with ``"quantile"``).
    correct : array of shape (n,)
        1 if the prediction was correct, 0 if not; soft correctness in [0, 1] is accepted.
    n_bins : int, default 15
    strategy : {"uniform", "quantile"}
        Equal-width or equal-mass bins; see the module docstring for edges and ties.

    Returns
    -------
    float in [0, 1]

    References
    ----------
    Naeini, Cooper and Hauskrecht (2015), "Obtaining well calibrated probabilities using
    Bayesian binning", AAAI. Guo et al. (2017), "On calibration of modern neural networks", ICML.

    Examples
    --------
    >>> round(expected_calibration_error([0.9, 0.9, 0.6, 0.6], [1, 0, 1, 0], n_bins=10), 12)
    0.25
    """
    conf, target = _prepare(confidence, correct, strategy)
    return ece_of_bins(conf, target, bin_indices(conf, n_bins, strategy), n_bins)


def ece_of_bins(conf: np.ndarray, target: np.ndarray, idx: np.ndarray, n_bins: int) -> float:
    """:func:`expected_calibration_error` of validated arrays given each row's bin ``idx``
    (:func:`bin_indices`): one binning shared by the ECE, MCE and reliability data of an
    evaluation."""
    return float(ece_from_bin_sums(bin_gap_sums(idx[None], (target - conf)[None], n_bins),
                                   conf.size)[0])


def maximum_calibration_error(confidence: ArrayLike, correct: ArrayLike, *, n_bins: int = 15,
                              strategy: str = "uniform") -> float:
    """Maximum calibration error: the largest |acc - conf| gap over non-empty bins.

    Same inputs and bins as :func:`expected_calibration_error`.

    Examples
    --------
    >>> round(maximum_calibration_error([0.9, 0.9, 0.6, 0.6], [1, 0, 1, 0], n_bins=10), 12)
    0.4
    """
    conf, target = _prepare(confidence, correct, strategy)
    return mce_of_bins(conf, target, bin_indices(conf, n_bins, strategy), n_bins)


def mce_of_bins(conf: np.ndarray, target: np.ndarray, idx: np.ndarray, n_bins: int) -> float:
    """:func:`maximum_calibration_error` given each row's bin (as :func:`ece_of_bins`)."""
    counts, conf_sum, target_sum = _binned_sums(conf, target, idx, n_bins)
    filled = counts > 0
    return float(np.max(np.abs(target_sum[filled] - conf_sum[filled]) / counts[filled]))


def torch_linspace_float32(steps: int) -> np.ndarray:
    """``torch.linspace(0, 1, steps, dtype=torch.float32)`` reproduced bit for bit without
    torch.

    torch's CPU kernel computes ``step = (end - start) / (steps - 1)`` in float32, then the
    first half of the points as ``start + step * i`` and the second half as
    ``end - step * (steps - 1 - i)``, each with one rounding (a fused multiply-add). For
    ``steps`` up to 2**20 every intermediate below is exact in float64, so casting once to
    float32 is that single rounding. Tested equal to torch for 2 to 300 points.

    Examples
    --------
    >>> e, numpy_edges = torch_linspace_float32(16), np.linspace(0, 1, 16, dtype=np.float32)
    >>> np.flatnonzero(e != numpy_edges).tolist()  # one ulp apart there
    [3, 6, 7, 8, 9, 10]
    """
    steps = check_positive_int(steps, "steps")
    if steps == 1:
        return np.zeros(1, np.float32)
    if steps > 2**20:
        raise ValueError(f"steps must be at most 2**20, got {steps}")
    step = np.float64(np.float32(1) / np.float32(steps - 1))
    i = np.arange(steps, dtype=np.float64)
    exact = np.where(i < steps // 2, step * i, 1.0 - step * (steps - 1 - i))
    return exact.astype(np.float32)


def calibration_error_float32_left_closed(confidence: ArrayLike, correct: ArrayLike, *,
                                          n_bins: int = 15, norm: str = "l1") -> float:
    """ECE (``norm="l1"``) or MCE (``norm="max"``) with the binning of torchmetrics, in float32.

    For reproducing numbers published with ``torchmetrics`` (e.g. the VLM uncertainty
    benchmark): edges bit-identical to ``torch.linspace(0, 1, M + 1)`` in float32
    (:func:`torch_linspace_float32`; numpy's float32 linspace differs by one ulp at some
    edges, which moves a confidence lying exactly on such an edge), **left-closed** bins
    [e_k, e_{k+1}), a confidence of exactly 1 in a bin of its own, and sums accumulated in
    float32 in input order. Tested against torchmetrics' ``binary_calibration_error``.
    confeval's own convention (right-closed, edge tolerance, float64; see the module
    docstring) is what :func:`expected_calibration_error` uses.
    """
    n_bins = check_positive_int(n_bins, "n_bins")
    conf = np.asarray(confidence, dtype=np.float32)
    acc = np.asarray(correct, dtype=np.float32)
    same_length(confidence=conf, correct=acc)
    edges = torch_linspace_float32(n_bins + 1)
    idx = np.searchsorted(edges, conf, side="right") - 1
    count = np.zeros(n_bins + 1, np.float32)
    conf_sum = np.zeros(n_bins + 1, np.float32)
    acc_sum = np.zeros(n_bins + 1, np.float32)
    np.add.at(count, idx, np.float32(1))
    np.add.at(conf_sum, idx, conf)
    np.add.at(acc_sum, idx, acc)
    with np.errstate(invalid="ignore", divide="ignore"):
        gap = np.abs(np.nan_to_num(acc_sum / count) - np.nan_to_num(conf_sum / count))
    if norm == "l1":
        return float(np.sum(gap * (count / count.sum()), dtype=np.float32))
    if norm == "max":
        return float(gap.max())
    raise ValueError(f"norm must be 'l1' or 'max', got {norm!r}")


def top_label(probs: ArrayLike, labels: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Top-label confidence and correctness from class probabilities.

    The prediction is the arg-max class; ties go to the lowest class index (as ``argmax``).

    Returns
    -------
    confidence, correct : arrays of shape (n,)
    """
    p = as_prob_matrix(probs, "probs")
    y = as_labels(labels, "labels", p.shape[1])
    same_length(probs=p, labels=y)
    pred = p.argmax(axis=1)
    return p[np.arange(p.shape[0]), pred], (pred == y).astype(np.float64)


def top_label_calibration_error(probs: ArrayLike, labels: ArrayLike, *, n_bins: int = 15,
                                strategy: str = "uniform", norm: str = "ece") -> float:
    """Top-label ECE (``norm="ece"``) or MCE (``norm="mce"``) from class probabilities."""
    conf, correct = top_label(probs, labels)
    fn = {"ece": expected_calibration_error, "mce": maximum_calibration_error}.get(norm)
    if fn is None:
        raise ValueError(f"norm must be 'ece' or 'mce', got {norm!r}")
    return fn(conf, correct, n_bins=n_bins, strategy=strategy)


def classwise_calibration_error(probs: ArrayLike, labels: ArrayLike, *, n_bins: int = 15,
                                strategy: str = "uniform") -> float:
    """Class-wise ECE: the mean over classes k of ECE(p[:, k], 1[y = k]).

    References
    ----------
    Kull et al. (2019), "Beyond temperature scaling: obtaining well-calibrated multi-class
    probabilities with Dirichlet calibration", NeurIPS.
    """
    p = as_prob_matrix(probs, "probs")
    y = as_labels(labels, "labels", p.shape[1])
    same_length(probs=p, labels=y)
    onehot = np.zeros_like(p)
    onehot[np.arange(p.shape[0]), y] = 1.0
    return float(np.mean([
        expected_calibration_error(p[:, k], onehot[:, k], n_bins=n_bins, strategy=strategy)
        for k in range(p.shape[1])
    ]))


def brier_score(confidence: ArrayLike, correct: ArrayLike) -> float:
    """Binary Brier score: mean squared difference between confidence and correctness.

    Identical to ``sklearn.metrics.brier_score_loss(correct, confidence)``.

    Examples
    --------
    >>> brier_score([1.0, 0.5], [1, 0])
    0.125
    """
    conf = as_unit_interval(confidence, "confidence")
    target = as_unit_interval(correct, "correct")
    same_length(confidence=conf, correct=target)
    return float(np.mean((conf - target) ** 2))


def multiclass_brier_score(probs: ArrayLike, labels: ArrayLike) -> float:
    """Multi-class Brier score: mean over samples of sum_k (p_k - 1[y = k])^2 (range [0, 2])."""
    p = as_prob_matrix(probs, "probs")
    y = as_labels(labels, "labels", p.shape[1])
    same_length(probs=p, labels=y)
    sq = (p ** 2).sum(axis=1) - 2 * p[np.arange(p.shape[0]), y] + 1.0
    return float(sq.mean())


@dataclass(frozen=True)
class ReliabilityDiagram:
    """Per-bin data of a reliability diagram. Empty bins have NaN means and count 0."""

    edges: np.ndarray
    counts: np.ndarray
    mean_confidence: np.ndarray
    accuracy: np.ndarray

    def to_dict(self) -> dict:
        return {k: getattr(self, k).tolist() for k in ("edges", "counts", "mean_confidence",
                                                        "accuracy")}


def reliability_diagram(confidence: ArrayLike, correct: ArrayLike, *, n_bins: int = 15,
                        strategy: str = "uniform") -> ReliabilityDiagram:
    """Bin edges, counts, mean confidence and accuracy per bin (the data behind the plot)."""
    conf, target = _prepare(confidence, correct, strategy)
    return reliability_of_bins(conf, target, bin_edges(conf, n_bins, strategy),
                               bin_indices(conf, n_bins, strategy), n_bins)


def reliability_of_bins(conf: np.ndarray, target: np.ndarray, edges: np.ndarray,
                        idx: np.ndarray, n_bins: int) -> ReliabilityDiagram:
    """:func:`reliability_diagram` given the edges and each row's bin (as :func:`ece_of_bins`)."""
    counts, conf_sum, target_sum = _binned_sums(conf, target, idx, n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_conf = np.where(counts > 0, conf_sum / np.maximum(counts, 1), np.nan)
        acc = np.where(counts > 0, target_sum / np.maximum(counts, 1), np.nan)
    return ReliabilityDiagram(edges, counts.astype(np.int64), mean_conf, acc)


class HistogramBinning:
    """Histogram-binning recalibration (Zadrozny and Elkan, 2001).

    ``fit`` learns the mean correctness of every bin; ``transform`` maps a confidence to the
    value of its bin. Works for any real-valued confidence measure with ``strategy="quantile"``
    (the default; this is how MCQA-Eval puts uncalibrated measures on a probability scale).

    Parameters
    ----------
    n_bins : int, default 15
    strategy : {"quantile", "uniform"}
        Bins as in :func:`bin_indices`. Values outside the fitted range fall in the end bins.

    Notes
    -----
    A bin that received no calibration sample (only possible with ``"uniform"``) maps to the
    overall calibration accuracy: without evidence, the base rate is the honest estimate.

    Examples
    --------
    >>> hb = HistogramBinning(n_bins=2, strategy="uniform").fit([0.2, 0.3, 0.8, 0.9], [0, 1, 1, 1])
    >>> hb.transform([0.1, 0.95]).tolist()
    [0.5, 1.0]
    """

    def __init__(self, n_bins: int = 15, strategy: str = "quantile") -> None:
        self.n_bins = check_positive_int(n_bins, "n_bins")
        _check_strategy(strategy)
        self.strategy = strategy

    def fit(self, confidence: ArrayLike, correct: ArrayLike) -> HistogramBinning:
        conf, target = _prepare(confidence, correct, self.strategy)
        self.edges_ = bin_edges(conf, self.n_bins, self.strategy)
        idx = self._indices(conf)
        counts, _, target_sum = _binned_sums(conf, target, idx, self.n_bins)
        base_rate = target.mean()
        self.bin_values_ = np.where(counts > 0, target_sum / np.maximum(counts, 1), base_rate)
        return self

    def _indices(self, conf: np.ndarray) -> np.ndarray:
        if self.strategy == "uniform":
            return uniform_bin_indices(np.clip(conf, 0.0, 1.0), self.n_bins)
        return np.searchsorted(self.edges_[1:-1], conf, side="left").astype(np.int64)

    def transform(self, confidence: ArrayLike) -> np.ndarray:
        if not hasattr(self, "bin_values_"):
            raise RuntimeError("HistogramBinning is not fitted; call fit() first")
        conf = as_float_1d(confidence, "confidence")
        return self.bin_values_[self._indices(conf)]

    def fit_transform(self, confidence: ArrayLike, correct: ArrayLike) -> np.ndarray:
        return self.fit(confidence, correct).transform(confidence)
