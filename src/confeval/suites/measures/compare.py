"""``confeval compare`` of models by their confidence measures (MCQA-Eval): every measure's
AUROC and AUARC per model, the bootstrap resampling whole questions; and the measures
themselves compared over every model at once."""

from __future__ import annotations

import numpy as np

from ... import metrics as M
from ...records import RecordSet
from ..base import Comparison
from .options import MeasuresOptions
from .scoring import _auarc_with

__all__ = ["COMPARISON", "compare_measures_metrics"]

def _read_for_compare(rs: RecordSet, options: MeasuresOptions) -> dict:
    """Each usable (question, option) row's measures, correctness and question; its item id
    is the question and the option (the ``option`` column, else the row's place within its
    question), so models are aligned row by row and resampled question by question."""
    from .inputs import read_measure_records

    data = read_measure_records(rs, measure_cols=options.measure_cols,
                                uncertainty_cols=options.uncertainty_cols,
                                correct_col=options.correct_col, group_col=options.group_col)
    frame = rs.frame.loc[rs.mask]
    questions = data.questions.astype(str)
    if "option" in frame.columns:
        option = frame["option"].astype(str).to_numpy()
    else:
        option = frame.groupby(options.group_col, sort=False).cumcount().astype(str).to_numpy()
    return {"values": data.values, "correct": data.correct, "question": questions,
            "item_id": np.char.add(np.char.add(questions, "\x1f"), option.astype(str)),
            "names": list(data.names)}


def _shared_measures(aligned: dict[str, dict]) -> list[str]:
    names = [list(a["names"]) for a in aligned.values()]
    shared = [n for n in names[0] if all(n in other for other in names[1:])]
    if not shared:
        raise ValueError("the models share no measure: "
                         + "; ".join(f"{m}: {', '.join(a['names'])}" for m, a in aligned.items()))
    return shared


def _measure_arrays(aligned: dict[str, dict], measure: str) -> dict[str, list[np.ndarray]]:
    return {model: [a["values"][:, list(a["names"]).index(measure)], a["correct"]]
            for model, a in aligned.items()}


def compare_measures_metrics(aligned: dict[str, dict], options: MeasuresOptions) -> dict:
    """For every measure all models share: ``<measure>_auroc`` and ``<measure>_auarc`` of each
    model, pooled over the (question, option) rows as ``measures score`` reports them, the
    bootstrap resampling whole questions (the same for every model; DeLong and McNemar
    assume independent rows, so every pair is tested by the paired question bootstrap)."""
    from ...metrics.compare import PairedMetric

    clusters = next(iter(aligned.values()))["question"]
    metrics = {}
    for measure in _shared_measures(aligned):
        arrays = _measure_arrays(aligned, measure)
        metrics[f"{measure}_auroc"] = PairedMetric(M.auroc, arrays, True, clusters=clusters)
        metrics[f"{measure}_auarc"] = PairedMetric(_auarc_with(options.ties), arrays, True,
                                                   clusters=clusters,
                                                   batched=_auarc_rows_with(options.ties))
    return metrics


def _auarc_rows_with(ties: str):
    from ...metrics.bootstrap import BATCHED

    return BATCHED[M.auarc] if ties == "average" else None


def _mean_auroc(*pairs: np.ndarray) -> float:
    """The AUROC of a measure averaged over models: ``pairs`` is (values, correct) of each
    model in turn."""
    return float(np.mean([M.auroc(pairs[i], pairs[i + 1]) for i in range(0, len(pairs), 2)]))


def _mean_auroc_rows(*pairs: np.ndarray) -> np.ndarray:
    from ...metrics.bootstrap import BATCHED

    rows = BATCHED[M.auroc]
    return np.mean([rows(pairs[i], pairs[i + 1]) for i in range(0, len(pairs), 2)], axis=0)


def compare_measures_across_models(aligned: dict[str, dict], options: MeasuresOptions
                                   ) -> tuple[str, dict]:
    """The measures themselves compared over every model at once: each measure's AUROC
    averaged over the models, its interval, rank and rank interval from the same question
    resamples, and every pair of measures tested (paired question bootstrap)."""
    from ...metrics.compare import PairedMetric

    clusters = next(iter(aligned.values()))["question"]
    arrays = {}
    for measure in _shared_measures(aligned):
        arrays[measure] = [x for pair in _measure_arrays(aligned, measure).values()
                           for x in pair]
    if len(arrays) < 2:
        return "measures_across_models", {}
    return "measures_across_models", {"mean_auroc": PairedMetric(
        _mean_auroc, arrays, True, clusters=clusters, batched=_mean_auroc_rows)}


COMPARISON = Comparison(_read_for_compare, compare_measures_metrics,
                        compare_measures_across_models)
"""``confeval compare --suite measures``."""
