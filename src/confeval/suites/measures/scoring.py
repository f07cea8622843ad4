"""Scoring confidence measures on multiple-choice options (MCQA-Eval, Sec. 3-4): which measure
ranks the gold option above the others?

Per measure, pooled over all (question, option) rows as the paper does: AUROC (primary), AUARC
and the rank-calibration error of the raw measure (rank-based: any monotone scale gives the
same numbers), and the ECE of the measure after histogram binning. The paper fits the binning
on the rows it evaluates, which makes ECE 0 by construction up to bin effects; here the binning
(equal-mass bins) is fitted on a seeded half of the *questions* and the ECE measured on the
other half. 95% intervals resample questions, not rows (a question's options are not
independent). The measures are ranked by AUROC, with a paired bootstrap p-value for each
measure against the next one (the same resamples of questions).

Ties: the metrics keep the package's order-free rule (a tie counts one half in AUROC; AUARC is
the expectation over the orders of tied rows; RCE the tie-block rule).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ... import metrics as M
from ...records import RecordSet

__all__ = ["MeasuresConfig", "score_measures", "score_measures_file"]


@dataclass(frozen=True)
class MeasuresConfig:
    """Scoring options, validated once: histogram-binning ``hb_bins`` and the share of
    questions ``calibration_share`` it is fitted on, ``ece_bins`` of the ECE, ``rce_bins``,
    ``bootstrap`` resamples of questions and the ``seed`` of the split and the resamples;
    ``ties="input-order"`` breaks AUARC ties by row order like UQ-NLG (for reproducing such
    tools only; the default averages over the orders of tied rows)."""

    hb_bins: int = 10
    calibration_share: float = 0.5
    ece_bins: int = 15
    rce_bins: int = 20
    bootstrap: int = 1000
    seed: int = 0
    ties: str = "average"

    def __post_init__(self) -> None:
        if self.ties not in ("average", "input-order"):
            raise ValueError(f"--ties must be average or input-order, got {self.ties!r}")
        for name in ("hb_bins", "ece_bins", "rce_bins"):
            if getattr(self, name) < 1:
                raise ValueError(f"--{name.replace('_', '-')} must be at least 1")
        if not 0 < self.calibration_share < 1:
            raise ValueError("--calibration-share must be in (0, 1)")
        if self.bootstrap < 0:
            raise ValueError("--bootstrap must be 0 or more")


def _auarc_with(ties: str):
    """AUARC with a tie rule, as a plain metric the bootstrap can resample."""
    if ties == "average":
        return M.auarc

    def auarc(conf, correct):
        return M.auarc(conf, correct, ties=ties)
    return auarc


def _calibrated_ece(conf, correct, questions, config: MeasuresConfig) -> float | None:
    unique = np.unique(questions)
    rng = np.random.default_rng(config.seed)
    n_cal = max(1, round(unique.size * config.calibration_share))
    cal_questions = rng.choice(unique, size=n_cal, replace=False)
    cal = np.isin(questions, cal_questions)
    if cal.all() or not cal.any():
        return None
    binning = M.HistogramBinning(n_bins=config.hb_bins).fit(conf[cal], correct[cal])
    return M.expected_calibration_error(binning.transform(conf[~cal]), correct[~cal],
                                        n_bins=config.ece_bins)


def _thin(x: np.ndarray, y: np.ndarray, points: int = 200) -> tuple[list, list]:
    """At most ``points`` evenly spaced points of a curve, the ends kept."""
    if x.size > points:
        keep = np.unique(np.linspace(0, x.size - 1, points).round().astype(np.int64))
        x, y = x[keep], y[keep]
    return x.tolist(), y.tolist()


def rank_calibration_diagram(conf: np.ndarray, correct: np.ndarray, n_bins: int = 20) -> dict:
    """Equal-mass bins of the confidence: each bin's relative rank (its centre, 0-1) against the
    relative rank of its mean correctness among the bins (tied means share their mean rank).
    A rank-calibrated measure lies on the diagonal (Huang et al., 2024, Fig. 1)."""
    from scipy.stats import rankdata

    order = np.argsort(conf, kind="stable")
    bins = np.array_split(order, min(n_bins, conf.size))
    means = np.array([correct[b].mean() for b in bins])
    k = len(bins)
    x = (np.arange(k) + 0.5) / k
    y = (rankdata(means) - 0.5) / k
    return {"confidence_rank": x.tolist(), "correctness_rank": y.tolist(),
            "mean_correctness": means.tolist()}


def _curves(conf: np.ndarray, correct: np.ndarray, rce_bins: int) -> dict:
    """Report data: ROC curve (scikit-learn), risk-coverage curve, rank-calibration diagram."""
    from sklearn.metrics import roc_curve

    fpr, tpr, _ = roc_curve(correct, conf)
    fpr, tpr = _thin(fpr, tpr)
    coverage, risk = _thin(*M.risk_coverage_curve(conf, 1.0 - correct))
    return {"roc": {"fpr": fpr, "tpr": tpr},
            "risk_coverage": {"coverage": coverage, "risk": risk},
            "rank_calibration": rank_calibration_diagram(conf, correct, rce_bins)}


def score_measures(values: np.ndarray, names: list[str], correct: np.ndarray,
                   questions: np.ndarray, config: MeasuresConfig = MeasuresConfig()) -> dict:
    """Every measure's AUROC, AUARC, RCE, calibrated ECE and question-bootstrap intervals, and
    the ranking (module docstring). ``values`` is (n, k), higher = more confident.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> q = np.repeat(np.arange(100), 4); y = (np.arange(400) % 4 == 0).astype(float)
    >>> good, noise = y + rng.normal(0, 0.5, 400), rng.normal(0, 1, 400)
    >>> res = score_measures(np.c_[good, noise], ["good", "noise"], y, q,
    ...                      MeasuresConfig(bootstrap=50))
    >>> [r["measure"] for r in res["ranking"]]
    ['good', 'noise']
    """
    values = np.asarray(values, dtype=np.float64)
    correct = np.asarray(correct, dtype=np.float64)
    questions = np.asarray(questions)
    if values.ndim != 2 or values.shape != (correct.size, len(names)):
        raise ValueError("values must be (n, k) with one column per name")
    if correct.size < 2 or np.unique(correct).size < 2:
        raise ValueError("need gold and non-gold options (both classes) to score measures")
    measures, curves = {}, {}
    for j, name in enumerate(names):
        conf = values[:, j]
        entry = {"auroc": M.auroc(conf, correct),
                 "auarc": M.auarc(conf, correct, ties=config.ties),
                 "rce": M.rank_calibration_error(conf, correct, n_bins=config.rce_bins),
                 "ece": _calibrated_ece(conf, correct, questions, config)}
        curves[name] = _curves(conf, correct, config.rce_bins)
        if config.bootstrap:
            entry["ci"] = {
                key: M.bootstrap_ci(fn, conf, correct, n_resamples=config.bootstrap,
                                    seed=config.seed, clusters=questions).to_dict()
                for key, fn in (("auroc", M.auroc), ("auarc", _auarc_with(config.ties)))}
            for ci in entry["ci"].values():
                for drop in ("estimate", "confidence_level", "n_resamples"):
                    ci.pop(drop)
        measures[name] = entry
    order = sorted(names, key=lambda n: -measures[n]["auroc"])
    ranking = []
    for rank, name in enumerate(order, start=1):
        row = {"rank": rank, "measure": name, "auroc": measures[name]["auroc"]}
        if config.bootstrap and rank < len(order):
            nxt = order[rank]
            diff = M.paired_bootstrap(M.auroc, (values[:, names.index(name)], correct),
                                      (values[:, names.index(nxt)], correct),
                                      n_resamples=config.bootstrap, seed=config.seed,
                                      clusters=questions)
            row["vs_next"] = {"measure": nxt, "difference": diff.estimate,
                              "p_value": diff.p_value}
        ranking.append(row)
    return {"n_rows": int(correct.size), "n_questions": int(np.unique(questions).size),
            "base_rate": float(correct.mean()), "measures": measures, "ranking": ranking,
            "curves": curves}


def score_measures_file(path: str | Path, config: MeasuresConfig = MeasuresConfig(), *,
                        measure_cols: str | None = None, uncertainty_cols: str | None = None,
                        correct_col: str = "correct", group_col: str = "question_id") -> dict:
    """:func:`score_measures` on one record file (:mod:`.inputs`), with its row counts."""
    from .inputs import read_measure_records

    rs = RecordSet.read(Path(path))
    data = read_measure_records(rs, measure_cols=measure_cols, uncertainty_cols=uncertainty_cols,
                                correct_col=correct_col, group_col=group_col)
    try:
        res = score_measures(data.values, data.names, data.correct, data.questions, config)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc} (excluded: {rs.excluded or 'none'})") from None
    summary = rs.summary()
    return {"n_read": summary["n_read"], "n_used": summary["n_used"],
            "excluded": summary["excluded"], "flagged": summary["flagged"],
            "negated": data.negated, **res}
