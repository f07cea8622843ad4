"""One-call evaluations built from the metrics: the result dictionaries that the CLI prints,
``metrics.json`` stores and the report renders.

* :func:`evaluate_confidence` — any confidence against (binary or graded) correctness:
  calibration, selective prediction and rank calibration, with bootstrap intervals and the data
  of the reliability diagram and risk-coverage curve.
* :func:`evaluate_agreement` — a judge's scores against ground-truth scores, optionally with
  the judge's score probabilities.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from . import metrics as M
from ._threads import parallel_map
from ._validation import as_float_1d, as_prob_matrix, as_unit_interval, same_length
from .metrics import calibration as C
from .metrics.bootstrap import _interval
from .metrics.weighted import FAST_BOOTSTRAP_ROWS, SortedSample, bootstrap_metrics
from .records import RecordSet

__all__ = ["compare_confidence", "confidence_metrics", "evaluate_agreement",
           "evaluate_confidence", "read_confidence_records", "score_confidence_records"]


def _quiet(fn: Callable, *args, **kwargs) -> Any:
    """Run a metric whose undefined case returns NaN; the NaN itself is the report."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", M.UndefinedMetricWarning)
        return fn(*args, **kwargs)


def _curve(x: np.ndarray, y: np.ndarray, points: int) -> dict[str, list[float]]:
    """Thin a curve to at most ``points`` evenly spaced samples (the end point always kept)."""
    if x.size > points:
        keep = np.unique(np.linspace(0, x.size - 1, points).round().astype(np.int64))
        x, y = x[keep], y[keep]
    return {"coverage": x.tolist(), "risk": y.tolist()}


def _counted_intervals(conf, target, n_bins, binary, point, n_resamples, seed, progress,
                       ranking=None, bins=None) -> dict[str, dict]:
    """Bootstrap intervals from count-weighted resamples over one sort
    (:mod:`confeval.metrics.weighted`): the ordinary bootstrap, drawn as counts of the sorted
    rows, a few passes over each chunk of them per block of resamples, the blocks shared
    between the cores (each with its own stream: the same numbers for any thread count)."""
    sample = SortedSample(conf, target, n_bins, ranking=ranking, bins=bins)
    reps: dict[str, list] = {}
    for _, found in bootstrap_metrics(sample, n_resamples, seed, parallel_map, progress):
        if not binary:
            found.pop("auroc", None)
        for name, values in found.items():
            reps.setdefault(name, []).append(values)
    out = {}
    for name, parts in reps.items():
        lo, hi, se = _interval(point.get(name, np.nan), np.concatenate(parts), 0.95,
                               "percentile")
        out[name] = {"low": lo, "high": hi, "std_error": se}
    return out


def _intervals(specs: dict[str, tuple], n_resamples: int, seed: int) -> dict[str, dict]:
    out = {}
    for offset, (name, (fn, arrays, kwargs)) in enumerate(specs.items()):
        res = M.bootstrap_ci(fn, *arrays, n_resamples=n_resamples, seed=seed + offset, **kwargs)
        out[name] = {"low": res.low, "high": res.high, "std_error": res.std_error}
    return out


def evaluate_confidence(confidence: ArrayLike, correct: ArrayLike, *, n_bins: int = 15,
                        rce_bins: int = 20, n_resamples: int = 1000, seed: int = 0,
                        progress: Callable[[int, int], None] | None = None,
                        probability_scale: bool = True, curve_points: int = 201) -> dict:
    """Evaluate a confidence measure against correctness.

    Parameters
    ----------
    confidence : array of shape (n,)
        In [0, 1] when ``probability_scale``; any real-valued measure otherwise (then the
        calibration metrics, which need probabilities, are ``None``).
    correct : array of shape (n,)
        0/1 correctness, or graded correctness in [0, 1] (AUROC then needs it binary and is
        ``None`` otherwise).
    n_bins : int, default 15
        Equal-width bins for ECE/MCE and the reliability diagram (right-closed, see
        :mod:`confeval.metrics.calibration`).
    rce_bins : int, default 20
        Equal-mass bins of the rank-calibration error.
    n_resamples : int, default 1000
        Bootstrap resamples for the 95% intervals in ``ci`` (0 to skip): percentile intervals
        for every metric, AUROC's included (DeLong's variance is not used). From
        :data:`~confeval.metrics.weighted.FAST_BOOTSTRAP_ROWS` (50) rows on, resamples are
        drawn as multinomial counts over one sort (:mod:`confeval.metrics.weighted`: the
        ordinary bootstrap, a few passes per block of resamples instead of a sort each, blocks
        shared between the cores; every metric from the same resamples); below, each metric is
        bootstrapped on its own (:func:`~confeval.metrics.bootstrap_ci`, seed + its position).
    seed : int, default 0
    progress : callable(done, total), optional
        Called after each block of resamples.

    Returns
    -------
    dict
        ``n, accuracy, mean_confidence, ece, mce, brier, auroc, auarc, aurc, prr, rce``, the
        intervals ``ci``, and curve data ``reliability`` and ``risk_coverage``.
    """
    conf = (as_unit_interval(confidence, "confidence") if probability_scale
            else as_float_1d(confidence, "confidence"))
    target = as_unit_interval(correct, "correct")
    n = same_length(confidence=conf, correct=target)
    if n < 2:
        raise ValueError("evaluate_confidence needs at least two samples")
    binary = bool(np.isin(target, (0.0, 1.0)).all())
    result: dict = {"n": n, "accuracy": float(target.mean()),
                    "mean_confidence": float(conf.mean())}
    if n_bins > max(n, MIN_BOUNDED_BINS):
        # more bins than rows leaves nearly all of them empty and costs memory in n_bins
        # (10^7 bins once took 5.6 GB): bounded by the rows, with a warning and the count used
        warnings.warn(f"{n_bins} ECE bins for {n} rows; using {n}", stacklevel=2)
        n_bins = n
        result["n_bins"] = n_bins
    bins = None
    if probability_scale:   # one binning for the ECE, MCE, reliability data and bootstrap
        bins = C.bin_indices(conf, n_bins)
        result.update(ece=C.ece_of_bins(conf, target, bins, n_bins),
                      mce=C.mce_of_bins(conf, target, bins, n_bins),
                      brier=M.brier_score(conf, target))
    else:
        result.update(ece=None, mce=None, brier=None)
    # one sort of the confidences for every ranking metric and the bootstrap's sorted sample
    ranking = M.Ranking(conf, target)
    result.update(
        auroc=_quiet(ranking.auroc) if binary else None,
        auarc=ranking.auarc(),
        aurc=ranking.aurc(),
        prr=_quiet(ranking.prediction_rejection_ratio),
        rce=_quiet(ranking.rank_calibration_error, rce_bins),
    )
    if n_resamples and n >= FAST_BOOTSTRAP_ROWS:
        result["ci"] = _counted_intervals(conf, target, n_bins if probability_scale else None,
                                          binary, result, n_resamples, seed, progress, ranking,
                                          bins)
    elif n_resamples:   # a few dozen rows: the index route, no slower there
        specs: dict[str, tuple] = {"accuracy": (np.mean, (target,), {})}
        if probability_scale:
            specs["ece"] = (M.expected_calibration_error, (conf, target), {"n_bins": n_bins})
            specs["brier"] = (M.brier_score, (conf, target), {})
        if binary:
            specs["auroc"] = (M.auroc, (conf, target), {})
        specs["auarc"] = (M.auarc, (conf, target), {})
        # an undefined metric (AUROC of one class) is NaN with its interval: said by the
        # NaN, as the estimate above, not by a warning per resample
        result["ci"] = _quiet(_intervals, specs, n_resamples, seed)
    if probability_scale:
        result["reliability"] = C.reliability_of_bins(conf, target, C.bin_edges(conf, n_bins),
                                                      bins, n_bins).to_dict()
    coverage, risk = ranking.risk_coverage_curve()
    result["risk_coverage"] = _curve(coverage, risk, curve_points)
    return result


MIN_BOUNDED_BINS = 100
"""ECE bins are bounded by the number of rows only above this many bins."""

MAX_CONFUSION_LEVELS = 50
"""Without a scale, a confusion matrix is drawn only when the scores take at most this many
distinct values (a judge's continuous scores would make it n x n)."""


def read_confidence_records(rs: RecordSet, confidence_col: str, correct_col: str, *,
                            any_confidence: bool = False, confidence_scale: float = 1.0
                            ) -> tuple[np.ndarray, np.ndarray]:
    """(confidence, correct) of the usable rows of ``rs``.

    The confidence is the column divided by ``confidence_scale`` (100: percentages); rows
    without a usable one (missing, not a number, outside [0, 1] unless ``any_confidence``) or
    without a usable correctness (a number in [0, 1], or a word of
    :data:`~confeval.records.CORRECTNESS_WORDS`: yes/no, true/false, correct/incorrect, ...)
    are excluded and counted in ``rs``.

    Raises
    ------
    ValueError
        Naming the source, when fewer than two rows are usable, when the confidence looks like
        percentages read on the [0, 1] scale (every value in [0, 100], most above 1: the
        message names ``--confidence-scale 100``), or when ``confidence_scale`` is given for
        a confidence already in [0, 1]. The message lists every problem of each column with
        two example values, not only the first reason that excluded a row.
    """
    from .records import CORRECTNESS_WORDS

    before = rs.mask.copy()
    hint = _scale_hint(rs, confidence_col, before, confidence_scale, any_confidence)
    conf = rs.numeric([confidence_col], what="confidence",
                      lo=None if any_confidence else 0.0,
                      hi=None if any_confidence else confidence_scale)[:, 0]
    correct = rs.numeric([correct_col], lo=0.0, hi=1.0, what="correct",
                         words=CORRECTNESS_WORDS)[:, 0]
    keep = rs.mask
    if keep.sum() < 2 or hint:
        raise ValueError(_unusable(rs, before, (confidence_col, correct_col), hint,
                                   any_confidence, confidence_scale))
    return conf[keep] / confidence_scale, correct[keep]


def _finite_values(rs: RecordSet, column: str, rows: np.ndarray) -> np.ndarray:
    """The finite numbers of one column in ``rows`` (text and missing cells left out)."""
    import pandas as pd

    values = pd.to_numeric(rs.frame[column][rows], errors="coerce").to_numpy(np.float64)
    return values[np.isfinite(values)]


def _scale_hint(rs: RecordSet, column: str, rows: np.ndarray, scale: float,
                any_confidence: bool) -> str:
    """What to change when the confidence's scale is not the one read: a 0-100 column read on
    [0, 1] (every value in [0, 100], more than half above 1: percentages, not a few typos), or
    a scale given for a column already in [0, 1], or a column most of whose values lie outside
    the scale (no probability: another column, a log-likelihood); "" when the scale fits."""
    if column not in rs.frame.columns:
        return ""   # the read names the missing column
    values = _finite_values(rs, column, rows)
    if not values.size:
        return ""
    if scale > 1 and values.max() <= 1:
        return (f"--confidence-scale {scale:g} was given, but every confidence is in [0, 1] "
                "already: leave it out")
    if scale == 1 and not any_confidence and values.min() >= 0 and values.max() <= 100 \
            and (values > 1).mean() > 0.5:
        return ("looks like percentages: --confidence-scale 100 reads it as value / 100 "
                "(--any-confidence ranks by it as it is)")
    outside = (values < 0) | (values > scale)
    if not any_confidence and outside.mean() > 0.5:
        # not a few typos: another column, or a log-likelihood or score (scoring the few
        # rows inside would answer a question nobody asked)
        return (f"{outside.sum():,} of {values.size:,} values lie outside [0, {scale:g}]: "
                "no probability (another column?); --any-confidence ranks by it as it is")
    return ""


def _unusable(rs: RecordSet, before: np.ndarray, columns: tuple[str, str], hint: str,
              any_confidence: bool, scale: float) -> str:
    """The one message of a confidence read that cannot be scored: the rows excluded by
    reason (each counted once, under its first), then every problem of each column on the
    rows read, with two example values each, and the scale hint."""
    from .records import CORRECTNESS_WORDS, describe_problems

    confidence_col, correct_col = columns
    conf_problems = rs.problems_of(confidence_col, before,
                                   lo=None if any_confidence else 0.0,
                                   hi=None if any_confidence else scale)
    parts = [describe_problems(confidence_col, conf_problems)] if conf_problems else []
    if hint:
        parts = [(parts[0] + " — " if parts else f"{confidence_col}: ") + hint]
    correct_problems = rs.problems_of(correct_col, before, lo=0.0, hi=1.0,
                                      words=CORRECTNESS_WORDS)
    if correct_problems:
        parts.append(describe_problems(correct_col, correct_problems))
    head = (f"fewer than two usable rows of {rs.n_read:,}" if rs.mask.sum() < 2
            else "the confidence is not on the scale read")
    return f"{rs.source}: {head} (excluded: {rs.excluded or 'none'})" + \
        (": " + "; ".join(parts) if parts else "")


def score_confidence_records(rs: RecordSet, confidence_col: str, correct_col: str, *,
                             any_confidence: bool = False, confidence_scale: float = 1.0,
                             n_bins: int = 15, rce_bins: int = 20, n_resamples: int = 1000,
                             seed: int = 0,
                             progress: Callable[[int, int], None] | None = None) -> dict:
    """:func:`evaluate_confidence` on the usable rows of a record set — the one path of
    ``confeval score`` and of every live run's confidence section — with its row counts.

    Rows are read by :func:`read_confidence_records` (the confidence divided by
    ``confidence_scale``; unusable rows excluded and counted in ``rs``; fewer than two usable
    rows, or a confidence on another scale, is a :class:`ValueError` naming the source)."""
    conf, correct = read_confidence_records(rs, confidence_col, correct_col,
                                            any_confidence=any_confidence,
                                            confidence_scale=confidence_scale)
    res = evaluate_confidence(conf, correct, n_bins=n_bins, rce_bins=rce_bins,
                              n_resamples=n_resamples, seed=seed,
                              probability_scale=not any_confidence, progress=progress)
    return {**rs.summary(), **res}


def _confusion_on(p: np.ndarray, t: np.ndarray, levels: np.ndarray | None) -> dict:
    matrix, labels = M.confusion_matrix(p, t, labels=levels) if levels is not None else \
        M.confusion_matrix(p, t)
    return {"labels": labels.tolist(), "matrix": matrix.tolist()}


def evaluate_agreement(pred: ArrayLike, truth: ArrayLike, probs: ArrayLike | None = None, *,
                       levels: ArrayLike | None = None, n_bins: int = 15,
                       n_resamples: int = 1000, seed: int = 0,
                       overconfidence_thresholds: tuple[float, ...] = (0.99, 0.999)) -> dict:
    """Evaluate a judge's scores against ground-truth scores.

    Parameters
    ----------
    pred, truth : arrays of shape (n,)
        The judge's score and the reference (e.g. human) score on the same scale.
    probs : array of shape (n, K), optional
        The judge's probabilities over the K scale points. Adds the top-label calibration of
        the judge (confidence = top probability, correct = the top score equals the truth) and
        the overconfidence rates.
    levels : array of shape (K,), optional
        The scale: the score each column of ``probs`` stands for (default 1..K), and the
        labels of the confusion matrix. Every score must be on it (exclude others first).
        Without it the confusion matrix is over the distinct values, when there are at most
        :data:`MAX_CONFUSION_LEVELS` of them (else ``None``).

    Returns
    -------
    dict
        ``n, pearson, spearman, kendall, accuracy, within1, mae, bias, bias_by_level,
        confusion`` and, with ``probs``, ``top_prob_ece``, ``overconfidence`` and
        ``reliability``; ``ci`` holds bootstrap intervals.
    """
    p = as_float_1d(pred, "pred")
    t = as_float_1d(truth, "truth")
    n = same_length(pred=p, truth=t)
    if n < 2:
        raise ValueError("evaluate_agreement needs at least two items")
    if levels is not None:
        scale_points = as_float_1d(levels, "levels")
        if probs is not None and np.shape(probs)[-1] != scale_points.size:
            raise ValueError(f"levels has {scale_points.size} values but probs has "
                             f"{np.shape(probs)[-1]} columns")
        off = ~np.isin(p, scale_points) | ~np.isin(t, scale_points)
        if off.any():
            raise ValueError(f"{int(off.sum())} score(s) are not on the scale "
                             f"{scale_points.tolist()}; exclude them first")
        confusion = _confusion_on(p, t, scale_points)
    elif np.unique(np.r_[p, t]).size <= MAX_CONFUSION_LEVELS:
        confusion = _confusion_on(p, t, None)
    else:  # continuous scores: a confusion matrix over every distinct value means nothing
        confusion = None
    result: dict = {
        "n": n,
        "pearson": _quiet(M.pearson, p, t),
        "spearman": _quiet(M.spearman, p, t),
        "kendall": _quiet(M.kendall, p, t),
        "accuracy": M.exact_accuracy(p, t),
        "within1": M.within_k_accuracy(p, t, 1),
        "mae": M.mean_absolute_error(p, t),
        "bias": M.mean_bias(p, t),
        "bias_by_level": {str(k): v for k, v in M.bias_by_level(p, t).items()},
        "confusion": confusion,
    }
    if probs is not None:
        prob = as_prob_matrix(probs, "probs")
        same_length(pred=p, probs=prob)
        scale = (np.arange(1, prob.shape[1] + 1, dtype=np.float64) if levels is None
                 else as_float_1d(levels, "levels"))
        if scale.size != prob.shape[1]:
            raise ValueError(f"levels has {scale.size} values but probs has "
                             f"{prob.shape[1]} columns")
        top = prob.max(axis=1)
        top_is_right = (scale[prob.argmax(axis=1)] == t).astype(np.float64)
        result["top_prob_ece"] = M.expected_calibration_error(top, top_is_right, n_bins=n_bins)
        result["overconfidence"] = {str(th): M.overconfidence_rate(top, th)
                                    for th in overconfidence_thresholds}
        result["reliability"] = M.reliability_diagram(top, top_is_right, n_bins=n_bins).to_dict()
    if n_resamples:
        result["ci"] = _intervals({
            "spearman": (M.spearman, (p, t), {}),
            "pearson": (M.pearson, (p, t), {}),
            "accuracy": (M.exact_accuracy, (p, t), {}),
            "mae": (M.mean_absolute_error, (p, t), {}),
        }, n_resamples, seed)
    return result


COMPARED_CONFIDENCE_METRICS = {
    # name: (metric, arrays it reads, higher is better)
    "accuracy": (np.mean, ("correct",), True),
    "auroc": (M.auroc, ("confidence", "correct"), True),
    "auarc": (M.auarc, ("confidence", "correct"), True),
    "ece": (M.expected_calibration_error, ("confidence", "correct"), False),
    "brier": (M.brier_score, ("confidence", "correct"), False),
}
"""The metrics :func:`compare_confidence` compares, with their direction."""


def compare_confidence(models: dict[str, tuple[ArrayLike, ArrayLike]], *, n_bins: int = 15,
                       n_resamples: int = 1000, seed: int = 0, alpha: float = 0.05) -> dict:
    """Several models' confidences against their correctness on the same items, compared:
    ``models[name] = (confidence, correct)``, every model over the same n items in the same
    order. For each metric of :data:`COMPARED_CONFIDENCE_METRICS`: each model's value (the
    metric :func:`evaluate_confidence` reports), its 95% percentile interval and rank interval
    from paired bootstrap resamples of the items (the same resamples for every model), every
    pair's difference and p-value — the exact McNemar test for accuracy, DeLong's test for
    AUROC when the two models share their correctness labels (a paired bootstrap when they do
    not: DeLong compares ROC curves of the same cases), the paired bootstrap otherwise — Holm
    adjusted within the metric, and significance groups at ``alpha``
    (:func:`~confeval.metrics.compare.compare_models`)."""
    from .metrics import compare as C

    if len(models) < 2:
        raise ValueError("compare needs at least two models")
    data = {}
    for name, (confidence, correct) in models.items():
        conf = as_unit_interval(confidence, f"{name}: confidence")
        target = as_unit_interval(correct, f"{name}: correct")
        same_length(confidence=conf, correct=target)
        data[name] = (conf, target)
    sizes = {name: d[1].size for name, d in data.items()}
    if len(set(sizes.values())) > 1:
        raise ValueError(f"every model must cover the same items; sizes {sizes}")
    tables = C.compare_models(confidence_metrics(data, n_bins=n_bins),
                              n_resamples=n_resamples, seed=seed, alpha=alpha)
    first = next(iter(tables.values()))
    return {"n_items": next(iter(sizes.values())), "models": first["ranked"],
            "metrics": tables}


def confidence_metrics(models: dict[str, tuple[np.ndarray, np.ndarray]], *, n_bins: int = 15,
                       probability_scale: bool = True) -> dict:
    """Every metric of :data:`COMPARED_CONFIDENCE_METRICS` as a
    :class:`~confeval.metrics.compare.PairedMetric` over validated, aligned arrays
    (``models[name] = (confidence, correct)``): AUROC only when every correctness is 0/1, ECE
    and Brier only on the probability scale. Each value is the one :func:`evaluate_confidence`
    reports."""
    from .metrics.compare import PairedMetric

    data = {name: {"confidence": c, "correct": y} for name, (c, y) in models.items()}
    binary = all(np.isin(d["correct"], (0.0, 1.0)).all() for d in data.values())
    metrics = {}
    for metric_name, (fn, reads, higher) in COMPARED_CONFIDENCE_METRICS.items():
        if (metric_name == "auroc" and not binary) or (
                metric_name in ("ece", "brier") and not probability_scale):
            continue
        kwargs = {"n_bins": n_bins} if metric_name == "ece" else {}
        arrays = {name: [d[r] for r in reads] for name, d in data.items()}
        metrics[metric_name] = PairedMetric(
            fn, arrays, higher, kwargs, test=_PAIR_TESTS.get(metric_name, "paired_bootstrap"),
            values={name: _quiet(fn, *a, **kwargs) for name, a in arrays.items()})
    return metrics


_PAIR_TESTS = {"accuracy": "mcnemar_exact", "auroc": "delong"}
