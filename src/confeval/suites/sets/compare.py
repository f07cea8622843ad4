"""``confeval compare`` of multiple-choice models by their conformal sets: one
calibration/test split of the shared items, the same for every model."""

from __future__ import annotations

import numpy as np

from ...conformal.protocol import N_BINS, calibration_inputs, calibration_split, split_sets
from ...conformal.set_metrics import uncertainty_aware_accuracy
from ...metrics.calibration import (
    bin_gap_sums,
    ece_from_bin_sums,
    torch_linspace_float32,
    uniform_bin_indices,
)
from ...records import RecordSet
from ..base import Comparison
from .inputs import read_sets
from .options import SetsOptions
from .scoring import tied_top_warning

__all__ = ["COMPARISON", "compare_sets_metrics"]


def _read_for_compare(rs: RecordSet, options: SetsOptions) -> dict[str, np.ndarray]:
    data = read_sets(rs, options)
    out = {"probs": data.probs, "labels": data.labels}
    if data.groups is not None:
        out["groups"] = data.groups
    return out


def _uacc(correct: np.ndarray, size: np.ndarray, n_labels: int) -> float:
    # as set_metrics: UAcc of the mean accuracy and the mean set size
    return uncertainty_aware_accuracy(float(np.mean(correct)), float(np.mean(size)), n_labels)


def _uacc_rows(correct: np.ndarray, size: np.ndarray, n_labels: int) -> np.ndarray:
    return correct.mean(axis=1) * np.sqrt(n_labels) / size.mean(axis=1)


def _binned_ece(bins: np.ndarray, gap: np.ndarray, n_bins: int) -> float:
    """ECE from each item's bin and its correctness minus confidence: sum over bins of
    |sum of gaps| / n — what both protocols' ECE is once the bins are fixed."""
    return float(_binned_ece_rows(bins[None], gap[None], n_bins)[0])


def _binned_ece_rows(bins: np.ndarray, gap: np.ndarray, n_bins: int) -> np.ndarray:
    return ece_from_bin_sums(bin_gap_sums(bins, gap, n_bins), bins.shape[1])


def _ece_bins(conf: np.ndarray, protocol: str, n_bins: int) -> tuple[np.ndarray, int]:
    """Each confidence's bin as ``protocol``'s ECE bins it (its own bin count: torchmetrics'
    binning has a bin of its own for exactly 1): binned once, so that resampling items
    resamples their bins."""
    if protocol == "vlm-bench":
        edges = torch_linspace_float32(n_bins + 1)
        return np.searchsorted(edges, conf.astype(np.float32), side="right") - 1, n_bins + 1
    return uniform_bin_indices(conf, n_bins), n_bins


def compare_sets_metrics(aligned: dict[str, dict[str, np.ndarray]], options: SetsOptions
                         ) -> dict:
    """The sets suite's metrics of every model on the shared items, as paired metrics: one
    calibration/test split of the shared item positions (``options.split_seed``), the same for
    every model, and on it each model's ``accuracy`` (test half, exact McNemar), ``ece`` (as the
    protocol measures it: :func:`calibration_inputs`), and per set score ``<score>_coverage``
    (exact McNemar on the items covered; closest to 1 - alpha is best),
    ``<score>_set_size`` (lower is better) and
    ``<score>_uacc``. The bootstrap resamples the test items given the calibration (the sets
    are those one calibration built: intervals are conditional on it). Every value is the one
    :func:`score_split` reports for that model on those items."""
    from ...metrics.compare import PairedMetric

    n = len(next(iter(aligned.values()))["labels"])
    if n < 4:
        raise ValueError("need at least 4 shared items to split into calibration and test "
                         "halves")
    cal, test = calibration_split(n, options.split_seed)
    table: dict[str, dict[str, list]] = {}

    def add(metric, name, arrays):
        table.setdefault(metric, {})[name] = arrays

    ece_values: dict[str, float] = {}
    ece_bins = N_BINS
    for name, a in aligned.items():
        probs, labels = a["probs"], a["labels"]
        ece_fn, _, conf, right = calibration_inputs(probs, labels, test, options.protocol)
        correct = (probs[test].argmax(axis=1) == labels[test]).astype(np.float64)
        add("accuracy", name, [correct])
        bins, ece_bins = _ece_bins(conf, options.protocol, N_BINS)
        add("ece", name, [bins, right.astype(np.float64) - conf.astype(np.float64)])
        ece_values[name] = ece_fn(conf, right, n_bins=N_BINS)
        built = split_sets(probs, labels, cal, test, seed=options.split_seed,
                           alpha=options.alpha, scores=options.scores,
                           protocol=options.protocol, groups=a.get("groups"),
                           lam=options.lam, k_reg=options.k_reg,
                           allow_empty=options.allow_empty)
        for score, (member, _) in built.items():
            covered = member[np.arange(test.size), labels[test]].astype(np.float64)
            size = member.sum(axis=1).astype(np.float64)
            add(f"{score}_coverage", name, [covered])
            add(f"{score}_set_size", name, [size])
            add(f"{score}_uacc", name, [correct, size])
    k = {name: a["probs"].shape[1] for name, a in aligned.items()}
    metrics = {
        "accuracy": PairedMetric(np.mean, table["accuracy"], True, test="mcnemar_exact"),
        # the value as the protocol computes it (float32 sums for vlm-bench); the resamples
        # from the items' fixed bins in float64 (they differ from it by rounding only)
        "ece": PairedMetric(_binned_ece, table["ece"], False, {"n_bins": ece_bins},
                            values=ece_values, batched=_binned_ece_rows),
    }
    for score in options.scores:
        # a coverage is promised at 1 - alpha: closest to it is best, not highest (the full
        # option set covers every item)
        metrics[f"{score}_coverage"] = PairedMetric(np.mean, table[f"{score}_coverage"], None,
                                                    test="mcnemar_exact",
                                                    target=1 - options.alpha)
        metrics[f"{score}_set_size"] = PairedMetric(np.mean, table[f"{score}_set_size"], False)
        if len(set(k.values())) == 1:   # UAcc's sqrt(|Y|): one option count for all
            metrics[f"{score}_uacc"] = PairedMetric(
                _uacc, table[f"{score}_uacc"], True, {"n_labels": next(iter(k.values()))},
                batched=_uacc_rows)
    return metrics


def _tied_top_options(aligned: dict[str, dict[str, np.ndarray]], options: SetsOptions
                      ) -> list[str]:
    """One sentence for every model with shared items whose top option is tied (what
    ``sets score`` says per file, :func:`tied_top_warning`), the most first: 26 VLMs all have
    some, and one line each would bury the tables."""
    counts = {name: tied_top_warning(a["probs"])[0] for name, a in aligned.items()}
    tied = sorted(((c, name) for name, c in counts.items() if c), key=lambda x: -x[0])
    if not tied:
        return []
    n = len(next(iter(aligned.values()))["labels"])
    return [f"shared items with a tied top option, whose prediction is the first tied option "
            f"in column order (as argmax takes it), of {n:,}: "
            + ", ".join(f"{name} {c:,}" for c, name in tied)]


COMPARISON = Comparison(_read_for_compare, compare_sets_metrics, warnings=_tied_top_options)
"""``confeval compare --suite sets``."""
