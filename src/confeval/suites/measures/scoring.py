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

import warnings
from pathlib import Path

import numpy as np

from ... import measures as MS
from ... import metrics as M
from ...records import RecordSet
from .options import MeasuresOptions

__all__ = ["score_measure_rows", "score_measures", "score_measures_file"]


def _auarc_with(ties: str):
    """AUARC with a tie rule, as a plain metric the bootstrap can resample."""
    if ties == "average":
        return M.auarc

    def auarc(conf, correct):
        return M.auarc(conf, correct, ties=ties)
    return auarc


def _rce(conf: np.ndarray, correct: np.ndarray, n_bins: int) -> float:
    """RCE, NaN where it is undefined (a measure constant over the options ranks nothing):
    the NaN, shown as "-", is the report, not a warning on the terminal."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", M.UndefinedMetricWarning)
        return M.rank_calibration_error(conf, correct, n_bins=n_bins)


def _calibrated_ece(conf, correct, questions, config: MeasuresOptions
                    ) -> tuple[float | None, int | None]:
    """ECE after histogram binning fitted on a seeded share of the questions, measured on
    the others, and how many distinct calibrated values those rows got: 1 means the
    measure barely varies (every row in one bin, calibrated to the base rate): an ECE near
    0 that says the measure is constant, not that it is well calibrated."""
    unique = np.unique(questions)
    rng = np.random.default_rng(config.seed)
    n_cal = max(1, round(unique.size * config.calibration_share))
    cal_questions = rng.choice(unique, size=n_cal, replace=False)
    cal = np.isin(questions, cal_questions)
    if cal.all() or not cal.any():
        return None, None
    binning = M.HistogramBinning(n_bins=config.hb_bins).fit(conf[cal], correct[cal])
    calibrated = binning.transform(conf[~cal])
    return (M.expected_calibration_error(calibrated, correct[~cal], n_bins=config.ece_bins),
            int(np.unique(calibrated).size))


def _thin(x: np.ndarray, y: np.ndarray, points: int = 200) -> tuple[list, list]:
    """At most ``points`` evenly spaced points of a curve, the ends kept."""
    if x.size > points:
        keep = np.unique(np.linspace(0, x.size - 1, points).round().astype(np.int64))
        x, y = x[keep], y[keep]
    return x.tolist(), y.tolist()


def _curves(conf: np.ndarray, correct: np.ndarray, rce_bins: int) -> dict:
    """Report data: ROC curve (scikit-learn), risk-coverage curve, rank-calibration diagram."""
    from sklearn.metrics import roc_curve

    fpr, tpr, _ = roc_curve(correct, conf)
    fpr, tpr = _thin(fpr, tpr)
    coverage, risk = _thin(*M.risk_coverage_curve(conf, 1.0 - correct))
    return {"roc": {"fpr": fpr, "tpr": tpr},
            "risk_coverage": {"coverage": coverage, "risk": risk},
            "rank_calibration": M.rank_calibration_diagram(conf, correct, rce_bins)}


def score_measures(values: np.ndarray, names: list[str], correct: np.ndarray,
                   questions: np.ndarray, config: MeasuresOptions | None = None) -> dict:
    """Every measure's AUROC, AUARC, RCE, calibrated ECE and question-bootstrap intervals, and
    the ranking (module docstring). ``values`` is (n, k), higher = more confident.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> q = np.repeat(np.arange(100), 4); y = (np.arange(400) % 4 == 0).astype(float)
    >>> good, noise = y + rng.normal(0, 0.5, 400), rng.normal(0, 1, 400)
    >>> res = score_measures(np.c_[good, noise], ["good", "noise"], y, q,
    ...                      MeasuresOptions(bootstrap=50))
    >>> [r["measure"] for r in res["ranking"]]
    ['good', 'noise']
    """
    config = config or MeasuresOptions()
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
        ece, levels = _calibrated_ece(conf, correct, questions, config)
        entry = {"auroc": M.auroc(conf, correct),
                 "auarc": M.auarc(conf, correct, ties=config.ties),
                 "rce": _rce(conf, correct, config.rce_bins),
                 "ece": ece, "ece_levels": levels}
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


def _select_heads(rs: RecordSet, questions: np.ndarray, options: MeasuresOptions):
    """All rows and no head choice, or (rows of the questions not used to choose heads, the
    top-k heads chosen on the others) when ``options.csl_heads`` and the rows carry per-head
    CSL values (``csl_heads``)."""
    keep = np.ones(questions.size, dtype=bool)
    if not options.csl_heads or "csl_heads" not in rs.frame:
        return keep, None, None
    per_head_rows = rs.frame.loc[rs.mask, "csl_heads"].tolist()
    if not all(isinstance(h, list) and h for h in per_head_rows):
        return keep, None, None
    unique = np.unique(questions)
    rng = np.random.default_rng(options.seed + 1)
    chosen = rng.choice(unique, size=max(1, round(unique.size * options.head_share)),
                        replace=False)
    cal = np.isin(questions, chosen)
    per_head = np.array(per_head_rows, dtype=np.float64)
    correct = rs.frame.loc[rs.mask, options.correct_col].to_numpy(np.float64)
    k = min(options.csl_heads, per_head.shape[1])
    heads = MS.select_heads(per_head[cal], correct[cal], k)
    return ~cal, heads, per_head[:, heads].mean(axis=1)


def score_measure_rows(rs: RecordSet, options: MeasuresOptions | None = None) -> dict:
    """:func:`score_measures` on (question, option) rows (:mod:`.inputs`) — the one path of
    ``confeval measures score`` on files and run folders and of a live run — with the rows'
    counts, the measures some rows lack (``incomplete``), what could not be measured at all
    (``unavailable``, from the rows of a run) and the CSL head choice."""
    from .inputs import read_measure_records

    options = options or MeasuresOptions()
    data = read_measure_records(rs, measure_cols=options.measure_cols,
                                uncertainty_cols=options.uncertainty_cols,
                                correct_col=options.correct_col, group_col=options.group_col)
    keep, heads, csl_k = _select_heads(rs, data.questions, options)
    values, names = data.values, list(data.names)
    if heads is not None:
        values, names = np.c_[values, csl_k], [*names, f"CSL@{heads.size}"]
    try:
        res = score_measures(values[keep], names, data.correct[keep], data.questions[keep],
                             options)
    except ValueError as exc:
        raise ValueError(f"{rs.source}: {exc} (excluded: {rs.excluded or 'none'})") from None
    summary = rs.summary()
    out = {"n_read": summary["n_read"], "n_used": summary["n_used"],
           "excluded": summary["excluded"], "flagged": summary["flagged"],
           "negated": data.negated, **res}
    out["incomplete"] = data.incomplete
    if data.infinite:
        out["infinite_values"] = data.infinite
    if "unavailable" in rs.frame:
        merged: dict = {}
        for value in rs.frame["unavailable"]:
            merged.update(value if isinstance(value, dict) else {})
        out["unavailable"] = merged
    out["head_selection"] = None if heads is None else {
        "k": options.csl_heads, "heads": heads.tolist(),
        "n_questions_used": int(np.unique(data.questions[~keep]).size)}
    return out


def score_measures_file(path: str | Path, options: MeasuresOptions | None = None) -> dict:
    """:func:`score_measure_rows` on one record file, run folder or another tool's file
    (the suite's loader)."""
    from . import SUITE

    options = options or MeasuresOptions()
    return score_measure_rows(SUITE.load(path, options), options)
