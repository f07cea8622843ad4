"""``confeval guarantee`` on diagnoses: accept the diagnosed error type, with a confidence
column (``-c``, default ``confidence``: a live run's probability of the type it named), right
when the type is the gold one. Diagnoses are read as ``diagnose score`` reads them (a live
run's excluded rows left out, the authors' column names accepted); an unparseable diagnosis
has no confidence and is excluded as such."""

from __future__ import annotations

import numpy as np

from ...records import RecordSet
from ..base import Decided, Decision
from .inputs import read_diagnoses
from .options import DiagnoseOptions, DiagnosisChoice

__all__ = ["DECISION"]


def _confidence(rs: RecordSet, choice: DiagnosisChoice) -> np.ndarray:
    if choice.column not in rs.frame.columns:
        raise ValueError(f"{rs.source}: no confidence column {choice.column!r} (a live run "
                         "records one with --answer scored; parsed replies have none): name "
                         "the column with -c")
    return rs.numeric([choice.column], what="confidence")[:, 0]


def calibrate(rs: RecordSet, options: DiagnoseOptions, choice: DiagnosisChoice) -> Decided:
    conf = _confidence(rs, choice)
    read = read_diagnoses(rs, options)
    unparsed = np.zeros(len(rs.frame), bool)
    unparsed[np.flatnonzero(rs.mask)[read.pred == None]] = True  # noqa: E711
    rs.exclude(unparsed, "unparseable_diagnosis")
    parsed = read.pred != None  # noqa: E711
    return Decided(rs, conf[rs.mask],
                   (read.pred[parsed] == read.gold[parsed]).astype(np.float64))


def confidence(rs: RecordSet, options: DiagnoseOptions, choice: DiagnosisChoice
               ) -> np.ndarray:
    return _confidence(rs, choice)


def words(options: DiagnoseOptions, choice: DiagnosisChoice) -> dict[str, str]:
    return {"act": "Accept the diagnosed error type", "item": "accepted diagnoses",
            "error": "wrong"}


def applies_to(options: DiagnoseOptions, choice: DiagnosisChoice) -> dict:
    return {"confidence": choice.column}


DECISION = Decision(calibrate, confidence, words, applies_to)
