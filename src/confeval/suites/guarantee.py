"""``confeval guarantee``: a certified threshold on one input's confidence — answer when the
confidence is at least t, with the selective error at most ``--target`` with probability at
least ``1 - --delta`` (:func:`confeval.guarantee.ltt_threshold`).

The input is read as ``confeval score`` reads it (confeval's own columns, or another tool's
file through :mod:`confeval.ingest`). The whole input calibrates, unless ``--split-seed`` asks
for a 50/50 calibration/test split (``train_test_split``, as the conformal suites split), in
which case the threshold's selective error and answer rate on the test half are reported too.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from .options import IngestOptions, option

__all__ = ["DECISIONS", "GUARANTEE_METHODS", "GuaranteeOptions", "guarantee_file"]

_SCORE = ("score",)
GUARANTEE_METHODS = ("ltt",)
DECISIONS = ("score", "sets")
"""Suites whose natural decision ``confeval guarantee`` certifies so far."""
"""Methods so far (conformal risk control and SGR: the guarantee issue's next slices)."""


@dataclasses.dataclass(frozen=True)
class GuaranteeOptions(IngestOptions):
    """Options of ``confeval guarantee``."""

    target: float = option(dataclasses.MISSING, "The selective error promised (errors among "
                           "the answered items), in (0, 1).", stages=_SCORE)
    confidence_col: str | None = option(None, "Column with the confidence (higher = more "
                                        "confident; any scale).", stages=_SCORE, short="-c")
    correct_col: str | None = option(None, "Column with correctness (0/1 or [0, 1]).",
                                     stages=_SCORE, short="-y")
    delta: float = option(0.1, "The probability the promise may fail (over the calibration "
                          "draw).", stages=_SCORE)
    method: str = option("ltt", "ltt (Learn then Test).", stages=_SCORE)
    fwer: str = option("fixed-sequence", "fixed-sequence, bonferroni or holm.", stages=_SCORE)
    split_seed: int | None = option(None, "Split 50/50 into calibration and test with this "
                                    "seed (default: all items calibrate).", stages=_SCORE)
    suite: str = option("score", "Whose decision: score (a confidence and a correctness "
                        "column) or sets (answer the top option: its probability and whether "
                        "it is the gold one, from option logits as sets score reads them).",
                        stages=_SCORE)

    def __post_init__(self) -> None:
        from ..guarantee import FWER_METHODS

        if not 0 < self.target < 1:
            raise ValueError(f"--target must be in (0, 1), got {self.target}")
        if not 0 < self.delta < 1:
            raise ValueError(f"--delta must be in (0, 1), got {self.delta}")
        if self.method not in GUARANTEE_METHODS:
            raise ValueError(f"--method {self.method!r}: so far {', '.join(GUARANTEE_METHODS)}")
        if self.fwer not in FWER_METHODS:
            raise ValueError(f"--fwer {self.fwer!r}: choose from {', '.join(FWER_METHODS)}")
        if self.suite not in DECISIONS:
            raise ValueError(f"--suite {self.suite!r}: so far {', '.join(DECISIONS)}")


def guarantee_file(path: str | Path, options: GuaranteeOptions) -> dict:
    """The certified threshold of one input, in the command's JSON contract:
    ``{"threshold", "answer_if", "bound", "method", "fwer", "target", "delta",
    "n_calibration", "calibration", "test", "best_achievable_bound", "guarantee", ...}``."""
    from ..guarantee import ltt_threshold

    rs, conf, correct = _decisions(path, options)
    cal = test = np.arange(conf.size)
    if options.split_seed is not None:
        from sklearn.model_selection import train_test_split

        cal, test = train_test_split(cal, train_size=0.5, random_state=options.split_seed)
    res = ltt_threshold(conf[cal], correct[cal], target=options.target, delta=options.delta,
                        fwer=options.fwer)
    out = {**res.to_dict(), "method": options.method, "fwer": options.fwer,
           "target": options.target, "delta": options.delta, "n_calibration": int(cal.size),
           "test": None, **{k: v for k, v in rs.summary().items()
                            if k in ("n_read", "n_used", "excluded")}}
    if options.split_seed is not None:
        out["split_seed"] = options.split_seed
        if res.threshold is not None:
            answered = conf[test] >= res.threshold
            out["test"] = {"n": int(test.size), "coverage": float(answered.mean()),
                           "risk": float(1 - correct[test][answered].mean())
                           if answered.any() else None}
    out["guarantee"] = _sentence(out)
    return out


def _decisions(path: str | Path, options: GuaranteeOptions):
    """(records, confidence, correctness) of the suite's natural decision on one input."""
    if options.suite == "sets":
        from ..ingest import read_input
        from .sets.inputs import read_sets_records

        rs = read_input(path, "sets", options)
        data = read_sets_records(rs)
        conf = data.probs.max(axis=1).astype(np.float64)
        correct = (data.probs.argmax(axis=1) == data.labels).astype(np.float64)
        return rs, conf, correct
    from ..evaluate import read_confidence_records
    from .generic import ConfidenceOptions, read_confidence_input

    read_as = ConfidenceOptions(confidence_col=options.confidence_col,
                                correct_col=options.correct_col,
                                from_format=options.from_format, normalise=options.normalise,
                                data_file=options.data_file)
    rs, conf_col, correct_col = read_confidence_input(path, read_as)
    conf, correct = read_confidence_records(rs, conf_col, correct_col, any_confidence=True)
    return rs, conf, correct


def _sentence(result: dict) -> str:
    """The guarantee in words (or why there is none)."""
    if result["threshold"] is None:
        return (f"No threshold is certified: at n = {result['n_calibration']} and "
                f"delta = {result['delta']:g}, the best selective error this data can certify "
                f"is {result['best_achievable_bound']:.3f} (target {result['target']:g}).")
    return (f"Answer when the confidence is at least {result['threshold']:.6g}: with "
            f"probability at least {1 - result['delta']:g} over the calibration draw, the "
            f"error rate among answered items is at most {result['target']:g} (certified bound "
            f"{result['bound']:.4f}; {result['calibration']['answered']} of "
            f"{result['n_calibration']} calibration items answered).")
