"""``confeval compare`` of judges by their conformal intervals and rating sets: one
calibration/test split of the shared items (the first of ``--seeds``), the same for every
judge."""

from __future__ import annotations

import warnings

import numpy as np

from ..._numeric import softmax
from ...conformal import (
    INTERVAL_METHODS,
    SmallCalibrationWarning,
    adjust_to_labels,
    calibrate_and_predict,
    make_method,
    shared_base_models,
)
from ...conformal.interval_metrics import EDGE_TOL
from ...records import RecordSet
from ..base import Comparison
from .inputs import read_intervals
from .options import IntervalsOptions
from .scoring import PAPER_PROTOCOL, _split

__all__ = ["COMPARISON", "compare_intervals_metrics"]

def _read_for_compare(rs: RecordSet, options: IntervalsOptions) -> dict:
    data = read_intervals(rs, options)
    out = {"features": data.features, "truth": data.truth, "levels": tuple(data.levels)}
    if data.groups is not None:
        out["groups"] = np.asarray(data.groups).astype(str)
    return out


def _split_predictions(name: str, X: np.ndarray, y: np.ndarray, split: tuple, levels,
                       options: IntervalsOptions, seed: int, groups) -> dict[str, np.ndarray]:
    """Per test item of one split, as ``_job`` builds them: an interval method's coverage and
    width raw and boundary-adjusted, or a rating-set method's coverage and set size."""
    cal, test, g_cal, g_test = split
    y_test = y[test]
    if name in INTERVAL_METHODS:
        kw = dict((PAPER_PROTOCOL if options.paper_protocol else {}).get(name, {}))
        if options.base is not None:
            kw.setdefault("base", options.base)
        method = make_method(name, alpha=options.alpha, seed=seed, low=levels[0],
                             high=levels[-1], **kw)
        INTERVAL_METHODS[name].fit_many([method], [X[cal]], [y[cal]],
                                        [g_cal] if options.mondrian else None)
        lo, hi = method.predict(X[test], groups=g_test)
        out = {}
        for kind, (a, b) in (("raw", (lo, hi)), ("adj", adjust_to_labels(lo, hi))):
            a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
            out[f"coverage_{kind}"] = ((y_test >= a - EDGE_TOL) & (y_test <= b + EDGE_TOL)
                                       ).astype(np.float64)
            out[f"width_{kind}"] = b - a
        return out
    probs = softmax(X[:, :len(levels)])
    labels = np.searchsorted(levels, y)
    member, _ = calibrate_and_predict(probs[cal], labels[cal], probs[test], name,
                                      options.alpha, seed=seed, groups_cal=g_cal,
                                      groups_test=g_test)
    return {"coverage": member[np.arange(test.size), labels[test]].astype(np.float64),
            "set_size": member.sum(axis=1).astype(np.float64)}


def compare_intervals_metrics(aligned: dict[str, dict], options: IntervalsOptions) -> dict:
    """Every method's metrics of every model on one calibration/test split of the shared items
    (the first of ``options.seeds``), the same for every model: interval methods'
    ``<method>_coverage_raw|adj`` (exact McNemar; closest to 1 - alpha is best) and
    ``<method>_width_raw|adj`` (lower is better), rating-set methods' ``<method>_coverage``
    and ``<method>_set_size``; each value
    the one ``intervals score --seeds <seed>`` reports. The bootstrap resamples the test items
    given the calibration."""
    from ...metrics.compare import PairedMetric

    first = next(iter(aligned.values()))
    n, seed = len(first["truth"]), options.seeds[0]
    levels = {tuple(a["levels"]) for a in aligned.values()}
    if len(levels) > 1:
        raise ValueError(f"the models rate on different scales: {sorted(levels)}")
    lv = np.asarray(next(iter(levels)), dtype=np.float64)
    if n < 4:
        raise ValueError("need at least 4 shared items for a calibration/test split")
    groups = first.get("groups") if options.mondrian else None
    if options.mondrian and groups is None:
        raise ValueError("--mondrian needs --group-col")
    split = _split(n, seed, groups, options.cal_fraction)
    table: dict[str, dict[str, list]] = {}
    with warnings.catch_warnings(), shared_base_models():
        warnings.simplefilter("ignore", SmallCalibrationWarning)
        for model, a in aligned.items():
            for name in options.methods:
                got = _split_predictions(name, a["features"], a["truth"], split, lv, options,
                                         seed, groups)
                for key, values in got.items():
                    table.setdefault(f"{name}_{key}", {})[model] = [values]
    # a coverage is promised at 1 - alpha: closest to it is best (the widest interval covers
    # everything); a width or set size is better lower
    return {metric: PairedMetric(
        np.mean, arrays, None if "coverage" in metric else False,
        test="mcnemar_exact" if "coverage" in metric else "paired_bootstrap",
        target=1 - options.alpha if "coverage" in metric else None)
        for metric, arrays in table.items()}


COMPARISON = Comparison(_read_for_compare, compare_intervals_metrics)
"""``confeval compare --suite intervals``."""
