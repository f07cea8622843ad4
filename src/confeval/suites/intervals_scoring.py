"""Scoring judge records with conformal intervals and label sets (``confeval intervals score``).

Input: per item, the judge's log-probabilities of the K rating tokens (the features), the
human score, and optionally the judge's parsed score. Protocol of the VLM-judge paper: for
each seed, a 50/50 calibration/test split (``train_test_split(test_size=0.5,
random_state=seed)``); every interval method fits and calibrates on the calibration half
(see :mod:`confeval.conformal.regression`) and is measured on the test half, raw and after
boundary adjustment. Label-set methods (``lac``, ``aps``, ``raps_randomized``, ...) calibrate
conformal sets of ratings on the judge's renormalised rating distribution. Numbers over seeds
are ``{mean, std}`` with the population std (ddof=0), as the paper reports them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from joblib import Parallel, delayed
from scipy.special import softmax
from sklearn.model_selection import train_test_split

from ..conformal import SCORES, calibrate_and_predict, set_metrics
from ..conformal.intervals import adjust_to_labels, interval_metrics
from ..conformal.regression import INTERVAL_METHODS, make_method
from ..evaluate import evaluate_agreement

__all__ = ["DEFAULT_METHODS", "score_intervals"]

DEFAULT_METHODS = ("naive", "cqr", "asym_cqr", "lvd", "r2ccp", "ordinal_aps", "lac", "aps",
                   "raps_randomized")


def _one(name: str, X, y, levels, seed: int, alpha: float, base: str) -> tuple[str, dict]:
    cal, test = train_test_split(np.arange(y.size), test_size=0.5, random_state=seed)
    if name in INTERVAL_METHODS:
        lo, hi = make_method(name, alpha=alpha, seed=seed, low=levels[0], high=levels[-1],
                             base=base).fit(X[cal], y[cal]).predict(X[test])
        raw = interval_metrics(lo, hi, y[test])
        adj = interval_metrics(*adjust_to_labels(lo, hi), y[test])
        return name, {"coverage_raw": raw["coverage"], "width_raw": raw["width"],
                      "coverage_adj": adj["coverage"], "width_adj": adj["width"]}
    probs = softmax(X, axis=1)
    labels = np.searchsorted(levels, y)
    member, _ = calibrate_and_predict(probs[cal], labels[cal], probs[test], name, alpha,
                                      seed=seed)
    m = set_metrics(member, labels[test], probs[test])
    return name, {"coverage": m["coverage"], "set_size": m["set_size"]}


def score_intervals(features: np.ndarray, truth: np.ndarray, *, parsed: np.ndarray | None = None,
                    levels: Sequence[float] = (1, 2, 3, 4, 5), alpha: float = 0.1,
                    seeds: Sequence[int] = range(1, 11),
                    methods: Sequence[str] = DEFAULT_METHODS, base: str = "gbr",
                    n_jobs: int = -1) -> dict:
    """Point metrics of the judge and every method's coverage and width over seeds."""
    unknown = [m for m in methods if m not in INTERVAL_METHODS and m not in SCORES]
    if unknown:
        raise ValueError(f"unknown method(s) {unknown}; interval methods: "
                         f"{', '.join(INTERVAL_METHODS)}; label-set methods: {', '.join(SCORES)}")
    X = np.asarray(features, dtype=np.float64)
    y = np.asarray(truth, dtype=np.float64)
    lv = np.asarray(levels, dtype=np.float64)
    if not np.isin(y, lv).all():
        raise ValueError("every ground-truth score must be one of the levels")
    runs = Parallel(n_jobs=n_jobs)(delayed(_one)(name, X, y, lv, seed, alpha, base)
                                   for name in methods for seed in seeds)
    out: dict = {"n": int(y.size), "alpha": alpha, "seeds": list(seeds), "methods": {}}
    for name in methods:
        per_seed = [r for n, r in runs if n == name]
        out["methods"][name] = {
            key: {"mean": float(np.mean([r[key] for r in per_seed])),
                  "std": float(np.std([r[key] for r in per_seed]))}
            for key in per_seed[0]}
    if parsed is not None:
        p = np.asarray(parsed, dtype=np.float64)
        ok = np.isin(p, lv)
        point = evaluate_agreement(p[ok], y[ok], levels=lv, n_resamples=0)
        out["point"] = {k: point[k] for k in ("pearson", "spearman", "kendall", "accuracy",
                                              "within1", "mae", "bias")}
        out["point"]["n_parsed"] = int(ok.sum())
    return out
