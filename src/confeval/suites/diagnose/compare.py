"""``confeval compare`` of models diagnosing errors: strict accuracy, parse rate and macro F1
on the shared items, each as ``diagnose score`` reports it."""

from __future__ import annotations

import numpy as np

from ...records import RecordSet
from ..base import Comparison
from .inputs import read_diagnoses
from .options import PROTOCOL_TYPES, DiagnoseOptions

__all__ = ["COMPARISON", "compare_diagnosis_metrics"]

def _read_for_compare(rs: RecordSet, options: DiagnoseOptions) -> dict:
    """Each usable item's gold type and prediction as codes (``types`` in order, then the
    unparseable code), scored as ``diagnose score`` reads them."""
    data = read_diagnoses(rs, options)
    types = list(PROTOCOL_TYPES[options.protocol])
    bad = sorted(set(data.gold.tolist()) - set(types))
    if bad:
        raise ValueError(f"{rs.source}: gold types {bad} are not answers of protocol "
                         f"{options.protocol!r}")
    code = {t: i for i, t in enumerate(types)}
    gold = np.array([code[g] for g in data.gold], dtype=np.int64)
    pred = np.array([code.get(p, len(types)) if p is not None else len(types)
                     for p in data.pred], dtype=np.int64)
    return {"gold": gold, "pred": pred, "parsed": np.array([p is not None for p in data.pred],
                                                          dtype=np.float64),
            "n_types": len(types)}


def _macro_f1_rows(gold: np.ndarray, pred: np.ndarray, n_types: int) -> np.ndarray:
    """Macro F1 over the types present in gold or predictions of each row (as
    :func:`score_diagnosis`: 2 hits / (n gold + n predicted) per type)."""
    total = np.zeros(gold.shape[0])
    present = np.zeros(gold.shape[0])
    for t in range(n_types):
        g, p = gold == t, pred == t
        size = g.sum(axis=1) + p.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            f1 = np.where(size > 0, 2 * (g & p).sum(axis=1) / size, 0.0)
        total += f1
        present += size > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        return total / present


def _macro_f1(gold: np.ndarray, pred: np.ndarray, n_types: int) -> float:
    return float(_macro_f1_rows(gold[None], pred[None], n_types)[0])


def compare_diagnosis_metrics(aligned: dict[str, dict], options: DiagnoseOptions) -> dict:
    """Every model's ``accuracy_strict`` (an unparseable reply wrong; exact McNemar),
    ``parse_rate`` (exact McNemar) and ``macro_f1`` (paired bootstrap) on the shared items,
    each as ``diagnose score`` reports it."""
    from ...metrics.compare import PairedMetric

    correct = {m: [(a["gold"] == a["pred"]).astype(np.float64)] for m, a in aligned.items()}
    n_types = next(iter(aligned.values()))["n_types"]
    return {
        "accuracy_strict": PairedMetric(np.mean, correct, True, test="mcnemar_exact"),
        "parse_rate": PairedMetric(np.mean, {m: [a["parsed"]] for m, a in aligned.items()},
                                   True, test="mcnemar_exact"),
        "macro_f1": PairedMetric(_macro_f1, {m: [a["gold"], a["pred"]]
                                             for m, a in aligned.items()}, True,
                                 {"n_types": n_types}, batched=_macro_f1_rows),
    }


COMPARISON = Comparison(_read_for_compare, compare_diagnosis_metrics)
"""``confeval compare --suite diagnose``."""
