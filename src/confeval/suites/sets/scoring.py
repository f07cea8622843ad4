"""Scoring of multiple-choice records with conformal prediction sets (``confeval sets score``).

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
from pathlib import Path

import numpy as np
from sklearn.model_selection import train_test_split

from ...conformal import SmallCalibrationWarning, calibrate_and_predict, set_metrics
from ...conformal.set_metrics import uncertainty_aware_accuracy
from ...measures import predictive_entropy
from ...metrics import (
    calibration_error_float32_left_closed,
    expected_calibration_error,
    maximum_calibration_error,
)
from ...metrics.calibration import torch_linspace_float32, uniform_bin_indices
from ...records import RecordSet
from .._seeds import mean_std
from ..compare import Comparison
from .inputs import read_sets_records
from .options import DEFAULT_SCORES, PROTOCOLS, SetsOptions

__all__ = ["aggregate_seeds", "score_sets", "score_sets_file", "score_sets_records",
           "score_split"]

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


_N_BINS = 15


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


def score_sets_records(rs: RecordSet, options: SetsOptions | None = None) -> dict:
    """:func:`score_sets` on a record set (see :mod:`.inputs`) — the one path of ``confeval
    sets score`` on files and run folders and of a live run's sets section — with its row
    counts (``n_read``, ``n_used``, ``excluded``), its option letters and, where the records
    have it, the mean probability mass a model put outside the option letters."""
    options = options or SetsOptions()
    data = read_sets_records(rs, label_col=options.label_col, logit_cols=options.logit_cols,
                             input_kind=options.input, precision=options.precision,
                             group_col=options.group_col)
    try:
        res = score_sets(data.probs, data.labels, alpha=options.alpha,
                         split_seed=options.split_seed, seeds=options.seeds,
                         scores=options.scores, protocol=options.protocol, groups=data.groups,
                         lam=options.lam, k_reg=options.k_reg, allow_empty=options.allow_empty)
    except ValueError as exc:
        raise ValueError(f"{rs.source}: {exc} (excluded: {rs.excluded or 'none'})") from None
    out = {**rs.summary(), "options": data.letters, **res}
    if "mass_outside" in rs.frame.columns:
        outside = rs.numeric(["mass_outside"], what="mass_outside", allow_missing=True)[:, 0]
        used = outside[rs.mask]
        used = used[np.isfinite(used)]
        out["mean_mass_outside"] = float(used.mean()) if used.size else None
    return out


def score_sets_file(path: str | Path, options: SetsOptions | None = None) -> dict:
    """:func:`score_sets_records` on one record file or run folder.

    Examples
    --------
    >>> import pandas as pd, tempfile, os
    >>> from confeval.simulate import simulate
    >>> path = os.path.join(tempfile.mkdtemp(), "mcq.csv")
    >>> simulate("mcq", 400, seed=1).to_csv(path, index=False)
    >>> res = score_sets_file(path, SetsOptions(alpha=0.1, scores=("lac",)))
    >>> res["n_used"], res["scores"]["lac"]["coverage"] >= 0.85
    (400, True)
    """
    from ...ingest import read_input

    return score_sets_records(read_input(path, "sets", options or SetsOptions()), options)


# ----------------------------------------------------------------------- comparing models
def _read_for_compare(rs: RecordSet, options: SetsOptions) -> dict[str, np.ndarray]:
    data = read_sets_records(rs, label_col=options.label_col, logit_cols=options.logit_cols,
                             input_kind=options.input, precision=options.precision,
                             group_col=options.group_col)
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
    rows, n = bins.shape
    flat = (bins + n_bins * np.arange(rows)[:, None]).ravel()
    sums = np.bincount(flat, weights=gap.ravel(), minlength=rows * n_bins)
    return np.abs(sums.reshape(rows, n_bins)).sum(axis=1) / n


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
    (exact McNemar on the items covered), ``<score>_set_size`` (lower is better) and
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
    ece_bins = _N_BINS
    for name, a in aligned.items():
        probs, labels = a["probs"], a["labels"]
        ece_fn, _, conf, right = calibration_inputs(probs, labels, test, options.protocol)
        correct = (probs[test].argmax(axis=1) == labels[test]).astype(np.float64)
        add("accuracy", name, [correct])
        bins, ece_bins = _ece_bins(conf, options.protocol, _N_BINS)
        add("ece", name, [bins, right.astype(np.float64) - conf.astype(np.float64)])
        ece_values[name] = ece_fn(conf, right, n_bins=_N_BINS)
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
        metrics[f"{score}_coverage"] = PairedMetric(np.mean, table[f"{score}_coverage"], True,
                                                    test="mcnemar_exact")
        metrics[f"{score}_set_size"] = PairedMetric(np.mean, table[f"{score}_set_size"], False)
        if len(set(k.values())) == 1:   # UAcc's sqrt(|Y|): one option count for all
            metrics[f"{score}_uacc"] = PairedMetric(
                _uacc, table[f"{score}_uacc"], True, {"n_labels": next(iter(k.values()))},
                batched=_uacc_rows)
    return metrics


SETS_COMPARISON = Comparison(_read_for_compare, compare_sets_metrics)
"""``confeval compare --suite sets``."""
