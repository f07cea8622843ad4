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
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from sklearn.model_selection import train_test_split

from ...conformal import SmallCalibrationWarning, calibrate_and_predict, set_metrics
from ...measures import predictive_entropy
from ...metrics import (
    calibration_error_float32_left_closed,
    expected_calibration_error,
    maximum_calibration_error,
)
from ...records import RecordSet
from .._seeds import mean_std
from .options import DEFAULT_SCORES, PROTOCOLS, SetsOptions

__all__ = ["aggregate_seeds", "score_sets", "score_sets_file", "score_sets_records",
           "score_split"]

_SEED_KEYS = ("coverage", "set_size", "uacc", "singleton_rate", "singleton_hit_rate",
              "empty_rate")


def score_split(probs: np.ndarray, labels: np.ndarray, *, seed: int, alpha: float = 0.1,
                scores: Sequence[str] = DEFAULT_SCORES, protocol: str = "exact",
                groups: np.ndarray | None = None, cal_fraction: float = 0.5,
                n_bins: int = 15, lam: float = 0.01, k_reg: int = 1,
                allow_empty: bool = False) -> dict:
    """All metrics of one calibration/test split."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {PROTOCOLS}, got {protocol!r}")
    n = labels.size
    cal, test = train_test_split(np.arange(n), train_size=cal_fraction, random_state=seed)
    p_test, y_test = probs[test], labels[test]
    conf_test = p_test.max(axis=1)
    right_test = (p_test.argmax(axis=1) == y_test).astype(np.float64)
    if protocol == "vlm-bench":
        conf_all = probs.max(axis=1)
        right_all = (probs.argmax(axis=1) == labels)
        ece = calibration_error_float32_left_closed(conf_all, right_all, n_bins=n_bins)
        mce = calibration_error_float32_left_closed(conf_all, right_all, n_bins=n_bins,
                                                    norm="max")
    else:
        c64 = np.clip(conf_test.astype(np.float64), 0.0, 1.0)
        ece = expected_calibration_error(c64, right_test, n_bins=n_bins)
        mce = maximum_calibration_error(c64, right_test, n_bins=n_bins)
    result: dict = {"n_cal": int(cal.size), "n_test": int(test.size),
                    "accuracy": float(right_test.mean()), "ece": ece, "mce": mce,
                    "entropy": float(predictive_entropy(p_test).mean()), "scores": {}}
    method = "higher" if protocol == "vlm-bench" else "exact"
    group_cal = None if groups is None else groups[cal]
    group_test = None if groups is None else groups[test]
    per_group: dict = {}
    for offset, name in enumerate(scores):
        member, qhat = calibrate_and_predict(
            probs[cal], labels[cal], p_test, name, alpha, method=method,
            groups_cal=group_cal, groups_test=group_test, seed=seed * 1000 + offset,
            lam=lam, k_reg=k_reg, allow_empty=allow_empty,
            ties="numpy" if protocol == "vlm-bench" else "inclusive")
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
    from .inputs import read_sets_records

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
    return score_sets_records(RecordSet.read(Path(path)), options)
