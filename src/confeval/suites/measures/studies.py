"""MCQA-Eval's studies of threshold-based evaluation (Sec. 3): how much the ranking of confidence
measures depends on the correctness threshold and on noise in the correctness score, and how it
compares with MCQA-Eval's threshold-free ranking on the same items.

Threshold-based evaluation labels a free-form answer correct when its correctness score f (a
similarity to the reference, a judge's probability, ...) exceeds a threshold: correct = f > tau
(strict, Eq. 6). Measures are ranked by AUROC against those labels.

* :func:`threshold_sensitivity` — the ranking at each tau, and Kendall's tau-b between the
  rankings of every pair of thresholds.
* :func:`label_noise` — Eq. 7, f~ = sigmoid(logit(f) + e), e ~ N(0, sigma^2), before the
  threshold. With a binary f, logit(f) is infinite and noise changes nothing (the paper's
  equation only makes sense on a continuous score), so f is first clipped to
  [eps, 1 - eps]. For each sigma and seed, Kendall's tau-b between the clean and the noisy
  ranking; mean and population std over seeds.
* :func:`compare_rankings` — Kendall's tau-b between two rankings of the same measures (e.g.
  MCQA-Eval's on options against a threshold-based one on sampled answers).

Rankings order measures by AUROC, highest first; Kendall's tau-b is computed on the AUROC
values themselves (scipy), so tied AUROCs are ties, not an arbitrary order.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from scipy import stats

from ... import metrics as M
from ...records import RecordSet
from .inputs import read_measure_records, read_study_records
from .options import CompareOptions, NoiseOptions, StudyOptions, ThresholdsOptions

__all__ = ["compare_files", "compare_rankings", "label_noise", "label_noise_file", "ranking",
           "threshold_sensitivity", "threshold_sensitivity_file"]


def ranking(values: np.ndarray, names: Sequence[str], correct: np.ndarray) -> dict:
    """AUROC of each measure column against ``correct`` and the names in descending order
    (``None`` AUROC when ``correct`` has one class only)."""
    correct = np.asarray(correct, dtype=np.float64)
    if np.unique(correct).size < 2:
        return {"auroc": dict.fromkeys(names), "order": [], "base_rate": float(correct.mean())}
    aurocs = {name: M.auroc(values[:, j], correct) for j, name in enumerate(names)}
    order = sorted(names, key=lambda n: -aurocs[n])
    return {"auroc": aurocs, "order": order, "base_rate": float(correct.mean())}


def _kendall(a: dict, b: dict) -> float | None:
    common = [n for n in a if a[n] is not None and b.get(n) is not None]
    if len(common) < 2:
        return None
    tau = stats.kendalltau([a[n] for n in common], [b[n] for n in common]).statistic
    return None if np.isnan(tau) else float(tau)


def shared_questions(first: np.ndarray, second: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row masks of the questions both row sets hold: two rankings compared "on the same
    items" are computed on the same questions only; none in common is a
    :class:`ValueError` (a Kendall tau of unrelated rows would read as agreement)."""
    a, b = np.asarray(first).astype(str), np.asarray(second).astype(str)
    common = np.intersect1d(a, b)
    if common.size == 0:
        raise ValueError("no question is in both files: nothing to compare on the same items "
                         "(check --group-col)")
    return np.isin(a, common), np.isin(b, common)


def compare_rankings(first: dict, second: dict) -> float | None:
    """Kendall's tau-b between two ``{measure: AUROC}`` maps over their common measures.

    Examples
    --------
    >>> compare_rankings({"a": 0.9, "b": 0.7, "c": 0.6}, {"a": 0.8, "b": 0.75, "c": 0.5})
    1.0
    """
    return _kendall(first, second)


def _validated(values, names, score) -> tuple[np.ndarray, np.ndarray]:
    values = np.asarray(values, dtype=np.float64)
    score = np.asarray(score, dtype=np.float64)
    if values.ndim != 2 or values.shape != (score.size, len(names)):
        raise ValueError("values must be (n, k): one row per score, one column per name")
    if not np.isfinite(score).all():
        raise ValueError("correctness scores must be finite")
    return values, score


def threshold_sensitivity(values, names: Sequence[str], score, thresholds: Sequence[float]
                          ) -> dict:
    """Rankings of the measures at each threshold of the correctness score (module docstring).

    Examples
    --------
    >>> score = np.array([0.2, 0.6, 0.8, 0.95])
    >>> res = threshold_sensitivity(np.c_[score, -score], ["good", "bad"], score, [0.5, 0.9])
    >>> res["by_threshold"]["0.5"]["order"], res["kendall"]["0.5|0.9"]
    (['good', 'bad'], 1.0)
    """
    values, score = _validated(values, names, score)
    if not thresholds:
        raise ValueError("give at least one threshold")
    by = {f"{t:g}": ranking(values, names, score > t) for t in thresholds}
    keys = list(by)
    kendall = {f"{a}|{b}": _kendall(by[a]["auroc"], by[b]["auroc"])
               for i, a in enumerate(keys) for b in keys[i + 1:]}
    return {"by_threshold": by, "kendall": kendall}


def label_noise(values, names: Sequence[str], score, *, threshold: float,
                sigmas: Sequence[float], seeds: Sequence[int], eps: float = 1e-3) -> dict:
    """Kendall's tau-b between the clean ranking and rankings under Eq. 7 noise, per sigma
    (module docstring); the noise of each seed comes from its own generator.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> f = rng.uniform(size=300)
    >>> x = np.c_[f + rng.normal(0, .1, 300), f + rng.normal(0, .5, 300), rng.normal(size=300)]
    >>> res = label_noise(x, ["a", "b", "c"], f, threshold=0.5, sigmas=[0.0], seeds=[1, 2])
    >>> res["by_sigma"]["0"]["kendall_mean"]
    1.0
    """
    values, score = _validated(values, names, score)
    if not 0 < eps < 0.5:
        raise ValueError("eps must be in (0, 0.5)")
    if any(s < 0 for s in sigmas) or not sigmas or not seeds:
        raise ValueError("give sigmas >= 0 and at least one seed")
    clean = ranking(values, names, score > threshold)
    clipped = np.clip(score, eps, 1 - eps)
    logit = np.log(clipped) - np.log1p(-clipped)
    by_sigma = {}
    for sigma in sigmas:
        taus, flipped = [], []
        for seed in seeds:
            noise = np.random.default_rng(seed).normal(0.0, sigma, size=score.size)
            noisy = 1.0 / (1.0 + np.exp(-(logit + noise))) > threshold
            taus.append(_kendall(clean["auroc"], ranking(values, names, noisy)["auroc"]))
            flipped.append(float(np.mean(noisy != (score > threshold))))
        valid = [t for t in taus if t is not None]
        by_sigma[f"{sigma:g}"] = {
            "kendall": taus,
            "kendall_mean": float(np.mean(valid)) if valid else None,
            "kendall_std": float(np.std(valid)) if valid else None,
            "labels_flipped": float(np.mean(flipped))}
    return {"threshold": threshold, "eps": eps, "seeds": list(seeds), "clean": clean,
            "by_sigma": by_sigma}


# ------------------------------------------------------------------ the studies' record files
def _study_inputs(path: str | Path, options: StudyOptions):
    rs = RecordSet.read(Path(path))
    data = read_study_records(rs, measure_cols=options.measure_cols,
                              uncertainty_cols=options.uncertainty_cols,
                              score_col=options.score_col)
    return data, {"n_read": rs.summary()["n_read"], "n_used": int(data.score.size),
                  "excluded": rs.excluded}


def threshold_sensitivity_file(path: str | Path, options: ThresholdsOptions) -> dict:
    """``confeval measures thresholds`` on one file of sampled answers."""
    data, counts = _study_inputs(path, options)
    return {**counts, **threshold_sensitivity(data.values, data.names, data.score,
                                              list(options.thresholds))}


def label_noise_file(path: str | Path, options: NoiseOptions) -> dict:
    """``confeval measures noise`` on one file of sampled answers (no seeds: seed 0)."""
    data, counts = _study_inputs(path, options)
    return {**counts, **label_noise(data.values, data.names, data.score,
                                    threshold=options.threshold, sigmas=list(options.sigmas),
                                    seeds=list(options.seeds or (0,)), eps=options.eps)}


def compare_files(options_path: str | Path, samples_path: str | Path,
                  options: CompareOptions) -> dict:
    """``confeval measures compare``: MCQA-Eval's ranking on the (question, option) rows of
    ``options_path`` against the threshold-based ranking on the sampled answers of
    ``samples_path``, both on the questions the two files share (the others counted per file
    as ``not_shared``), and Kendall's tau-b between them."""
    rs = RecordSet.read(Path(options_path))
    mc = read_measure_records(rs, measure_cols=options.measure_cols,
                              uncertainty_cols=options.uncertainty_cols,
                              correct_col=options.correct_col, group_col=options.group_col)
    data, counts = _study_inputs(samples_path, options)
    sample_questions = data.records.groups(options.group_col, what="question")[
        data.records.mask]
    in_mc, in_samples = shared_questions(mc.questions, sample_questions)
    mcqa = ranking(mc.values[in_mc], mc.names, mc.correct[in_mc])
    threshold_based = ranking(data.values[in_samples], data.names,
                              data.score[in_samples] > options.threshold)
    return {"mcqa_eval": {"n_used": int(in_mc.sum()), "excluded": rs.excluded,
                          "not_shared": int((~in_mc).sum()), **mcqa},
            "threshold_based": {**counts, "n_used": int(in_samples.sum()),
                                "not_shared": int((~in_samples).sum()),
                                "threshold": options.threshold, **threshold_based},
            "kendall": compare_rankings(mcqa["auroc"], threshold_based["auroc"])}
