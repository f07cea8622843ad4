"""``confeval score``: a confidence column against a correctness column of one input."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...records import RecordSet
    from .options import ConfidenceOptions

__all__ = ["columns", "score_confidence"]


def columns(rs: RecordSet, options: ConfidenceOptions) -> tuple[str, str]:
    """(confidence column, correctness column) of one input: those named, else for another
    tool's file its ``confidence`` and ``correct`` (checked to be there, naming the flag and
    the numeric columns when not); confeval's own records need both named."""
    if rs.fmt is None:
        if options.confidence_col is None or options.correct_col is None:
            raise ValueError(f"{rs.source}: name the columns with -c/--confidence-col and "
                             "-y/--correct-col (a file of a known format needs none: --from)")
        return options.confidence_col, options.correct_col
    found = (options.confidence_col or "confidence", options.correct_col or "correct")
    _check_ingested_columns(rs, found)
    return found


def _check_ingested_columns(rs: RecordSet, columns: tuple[str, str]) -> None:
    """Another tool's file without the confidence or correctness ``score`` needs (lm-eval
    logs no confidence for a generation task): name the flag and the numeric columns."""
    import pandas as pd

    from ...records import ROW_COLUMN

    if len(rs.frame) and not rs.mask.any():
        reasons = ", ".join(f"{k} {v}" for k, v in rs.excluded.items())
        raise ValueError(f"{rs.source}: no usable record: all {rs.n_read} were excluded "
                         f"({reasons})")
    confidence, correct = columns
    missing = [(flag, col) for flag, col in (("-c/--confidence-col", confidence),
                                             ("-y/--correct-col", correct))
               if col not in rs.frame.columns]
    if not missing:
        return
    numeric = [c for c in rs.frame.columns if c != ROW_COLUMN
               and pd.api.types.is_numeric_dtype(rs.frame[c]) and rs.frame[c].notna().any()]
    flag, col = missing[0]
    raise ValueError(f"{rs.source}: its records have no {col!r} column: name the column "
                     f"holding one with {flag} (numeric columns: {', '.join(numeric) or 'none'})")


def tool_accuracy(rs: RecordSet, correct_col: str) -> dict | None:
    """The accuracy the tool itself reports for another tool's file, over every row with a
    verdict (those a confidence is missing for included): lm-eval's mean of the per-sample
    metric, Inspect's mean over samples of the mean over their epochs (its default reducer;
    an unscored epoch left out, as Inspect leaves it out). None for confeval's own records."""
    import numpy as np
    import pandas as pd

    if rs.fmt is None or correct_col not in rs.frame.columns:
        return None
    values = pd.to_numeric(rs.frame[correct_col], errors="coerce").to_numpy(np.float64)
    keep = rs.mask & np.isfinite(values)
    if not keep.any():
        return None
    if "epoch" in rs.frame.columns and "doc_id" in rs.frame.columns:
        per_sample = pd.Series(values[keep]).groupby(
            rs.frame["doc_id"].astype(str).to_numpy()[keep]).mean()
        return {"value": float(per_sample.mean()), "n_samples": int(per_sample.size),
                "n_verdicts": int(keep.sum())}
    return {"value": float(values[keep].mean()), "n_samples": int(keep.sum()),
            "n_verdicts": int(keep.sum())}


def score_confidence(rs: RecordSet, options: ConfidenceOptions, *,
                     progress: Callable[[int, int], None] | None = None) -> dict:
    """``confeval score`` on one input's records:
    :func:`~confeval.evaluate.score_confidence_records` with the options; for another tool's
    file, with ``tool_accuracy`` (:func:`tool_accuracy`) and the confidence read named
    (``confidence_column``). A warning of the metrics (an AUROC undefined) names the input."""
    import warnings

    from ...evaluate import score_confidence_records

    confidence_col, correct_col = columns(rs, options)
    told = tool_accuracy(rs, correct_col)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = score_confidence_records(
            rs, confidence_col, correct_col, any_confidence=options.any_confidence,
            confidence_scale=options.confidence_scale, n_bins=options.n_bins,
            rce_bins=options.rce_bins, n_resamples=options.bootstrap, seed=options.seed,
            progress=progress)
    for message in dict.fromkeys((str(w.message), w.category) for w in caught):
        warnings.warn(f"{rs.source}: {message[0]}", message[1], stacklevel=2)
    if told is not None:
        result["tool_accuracy"] = told
    if rs.fmt is not None:
        result["confidence_column"] = confidence_col
    return result
