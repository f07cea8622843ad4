"""Split-conformal evaluation of prediction sets over options: one calibration/test split (or
several), the sets of every score calibrated on one half, their coverage, size and UAcc, and
the calibration of the top option on the other — the array-level protocol of ``confeval sets
score`` (and of the diagnose suite's sets over error types).

Protocols
---------
``exact`` (default)
    The exact finite-sample quantile (the k-th smallest calibration score); ECE/MCE on the
    test half with confeval's bin convention (right-closed, 15 bins by default).
``vlm-bench``
    The protocol of the VLM uncertainty benchmark (Kostumov et al., 2024; the conformal-lens
    study uses the same LAC/APS recipe): ``numpy.quantile(..., method="higher")`` for q_hat,
    APS ties in numpy's sort order as their code had them, and ECE/MCE over *all* rows with
    torchmetrics' binning in float32. With
    ``--split-seed 42`` it reproduces the published tables (see benchmarks/).

Both compute the softmax in float32 (``precision``), as the published numbers were, and
split 50/50 with ``sklearn.model_selection.train_test_split(train_size=0.5,
random_state=seed)``. Accuracy, coverage and set size are measured on the test half.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

import numpy as np
from sklearn.model_selection import train_test_split

from .._numeric import mean_std
from ..measures import predictive_entropy
from ..metrics import (
    calibration_error_float32_left_closed,
    expected_calibration_error,
    maximum_calibration_error,
)
from .names import DEFAULT_SCORES, PROTOCOLS
from .quantile import SmallCalibrationWarning
from .set_metrics import set_metrics
from .sets import calibrate_and_predict

__all__ = ["N_BINS", "aggregate_seeds", "calibration_inputs", "calibration_split",
           "score_sets", "score_split", "split_sets"]

_SEED_KEYS = ("coverage", "set_size", "uacc", "singleton_rate", "singleton_hit_rate",
              "empty_rate")


def calibration_split(n: int, seed: int, cal_fraction: float = 0.5
                      ) -> tuple[np.ndarray, np.ndarray]:
    """(calibration, test) positions of n rows: ``train_test_split(train_size=cal_fraction,
    random_state=seed)`` as the published benchmark split."""
    return train_test_split(np.arange(n), train_size=cal_fraction, random_state=seed)


def split_sets(probs: np.ndarray, labels: np.ndarray, cal: np.ndarray, test: np.ndarray, *,
               seed: int, alpha: float, scores: Sequence[str], protocol: str,
               groups: np.ndarray | None = None, lam: float = 0.01, k_reg: int = 1,
               allow_empty: bool = False) -> dict[str, tuple[np.ndarray, float | dict]]:
    """Each score's (test-set membership (n_test, K), q_hat) calibrated on ``cal``: the one
    construction behind :func:`score_split` and the comparison of models."""
    method = "higher" if protocol == "vlm-bench" else "exact"
    group_cal = None if groups is None else groups[cal]
    group_test = None if groups is None else groups[test]
    return {name: calibrate_and_predict(
        probs[cal], labels[cal], probs[test], name, alpha, method=method,
        groups_cal=group_cal, groups_test=group_test, seed=seed * 1000 + offset, lam=lam,
        k_reg=k_reg, allow_empty=allow_empty,
        ties="numpy" if protocol == "vlm-bench" else "inclusive")
        for offset, name in enumerate(scores)}


def calibration_inputs(probs: np.ndarray, labels: np.ndarray, test: np.ndarray, protocol: str
                       ) -> tuple[Callable, Callable, np.ndarray, np.ndarray]:
    """(ECE, MCE, top-label confidence, correctness) as ``protocol`` measures calibration:
    ``exact`` on the test half in float64 with confeval's bins; ``vlm-bench`` on all rows in
    float32 with torchmetrics' bins (the published benchmark's)."""
    if protocol == "vlm-bench":
        return (calibration_error_float32_left_closed, _mce_float32, probs.max(axis=1),
                probs.argmax(axis=1) == labels)
    p_test = probs[test]
    conf = np.clip(p_test.max(axis=1).astype(np.float64), 0.0, 1.0)
    right = (p_test.argmax(axis=1) == labels[test]).astype(np.float64)
    return expected_calibration_error, maximum_calibration_error, conf, right


def _mce_float32(conf: np.ndarray, right: np.ndarray, n_bins: int = 15) -> float:
    return calibration_error_float32_left_closed(conf, right, n_bins=n_bins, norm="max")


N_BINS = 15


def score_split(probs: np.ndarray, labels: np.ndarray, *, seed: int, alpha: float = 0.1,
                scores: Sequence[str] = DEFAULT_SCORES, protocol: str = "exact",
                groups: np.ndarray | None = None, cal_fraction: float = 0.5,
                n_bins: int = 15, lam: float = 0.01, k_reg: int = 1,
                allow_empty: bool = False) -> dict:
    """All metrics of one calibration/test split."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {PROTOCOLS}, got {protocol!r}")
    cal, test = calibration_split(labels.size, seed, cal_fraction)
    p_test, y_test = probs[test], labels[test]
    right_test = (p_test.argmax(axis=1) == y_test).astype(np.float64)
    ece_fn, mce_fn, conf, right = calibration_inputs(probs, labels, test, protocol)
    ece, mce = ece_fn(conf, right, n_bins=n_bins), mce_fn(conf, right, n_bins=n_bins)
    result: dict = {"n_cal": int(cal.size), "n_test": int(test.size),
                    "accuracy": float(right_test.mean()), "ece": ece, "mce": mce,
                    "entropy": float(predictive_entropy(p_test).mean()), "scores": {}}
    group_test = None if groups is None else groups[test]
    per_group: dict = {}
    built = split_sets(probs, labels, cal, test, seed=seed, alpha=alpha, scores=scores,
                       protocol=protocol, groups=groups, lam=lam, k_reg=k_reg,
                       allow_empty=allow_empty)
    for name, (member, qhat) in built.items():
        metrics = set_metrics(member, y_test, p_test)
        metrics["qhat"] = qhat
        result["scores"][name] = metrics
        if groups is not None:
            for g in np.unique(group_test).tolist():
                rows = group_test == g
                gm = set_metrics(member[rows], y_test[rows], p_test[rows])
                entry = per_group.setdefault(str(g), {
                    "n_test": int(rows.sum()), "accuracy": float(right_test[rows].mean()),
                    "scores": {}})
                entry["scores"][name] = {k: gm[k] for k in ("coverage", "set_size")}
    if groups is not None:
        result["groups"] = per_group
    return result


def aggregate_seeds(results: Sequence[dict]) -> dict:
    """Mean and sample std (``ddof=1``, see :mod:`confeval.suites._seeds`) over splits of
    every scalar metric."""
    def stat(values):
        return mean_std(values, ddof=1)

    first = results[0]
    out: dict = {"n_cal": first["n_cal"], "n_test": first["n_test"], "n_splits": len(results)}
    for key in ("accuracy", "ece", "mce", "entropy"):
        out[key] = stat([r[key] for r in results])
    out["scores"] = {name: {k: stat([r["scores"][name][k] for r in results])
                            for k in _SEED_KEYS}
                     for name in first["scores"]}
    if "groups" in first:
        groups = set().union(*(r.get("groups", {}).keys() for r in results))
        out["groups"] = {}
        for g in sorted(groups):
            present = [r["groups"][g] for r in results if g in r.get("groups", {})]
            out["groups"][g] = {
                "n_test": stat([p["n_test"] for p in present]),
                "accuracy": stat([p["accuracy"] for p in present]),
                "scores": {name: {k: stat([p["scores"][name][k] for p in present])
                                  for k in ("coverage", "set_size")}
                           for name in first["scores"]}}
    return out


def score_sets(probs: np.ndarray, labels: np.ndarray, *, alpha: float = 0.1,
               split_seed: int | None = 42, seeds: Sequence[int] | None = None,
               scores: Sequence[str] = DEFAULT_SCORES, protocol: str = "exact",
               groups: np.ndarray | None = None, **options) -> dict:
    """One split (``split_seed``) or several (``seeds``; numbers become ``{mean, std}``)."""
    if labels.size < 4:
        raise ValueError("need at least 4 rows to split into calibration and test halves")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SmallCalibrationWarning)
        if seeds:
            result = aggregate_seeds([
                score_split(probs, labels, seed=s, alpha=alpha, scores=scores,
                            protocol=protocol, groups=groups, **options) for s in seeds])
            result["seeds"] = list(seeds)
        else:
            result = score_split(probs, labels, seed=split_seed, alpha=alpha, scores=scores,
                                 protocol=protocol, groups=groups, **options)
            result["split_seed"] = split_seed
    notes = sorted({str(w.message) for w in caught
                    if issubclass(w.category, SmallCalibrationWarning)})
    if notes:
        result["warnings"] = notes
    result.update(alpha=alpha, coverage_target=1 - alpha, protocol=protocol)
    return result


