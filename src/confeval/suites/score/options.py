"""Options of ``confeval score``: a confidence against correctness."""

from __future__ import annotations

import dataclasses
import math

from ..options import MAX_BOOTSTRAP, IngestOptions, option

__all__ = ["ConfidenceOptions"]

_SCORE = ("score",)


@dataclasses.dataclass(frozen=True)
class ConfidenceOptions(IngestOptions):
    """Options of ``confeval score``: the two columns (needed for confeval's own records; a
    file of another tool's format brings ``confidence`` and ``correct``)."""

    confidence_col: str | None = option(None, "Column with the confidence (default for "
                                        "another tool's file: its confidence).",
                                        stages=_SCORE, short="-c")
    correct_col: str | None = option(None, "Column with correctness (0/1 or [0, 1]).",
                                     stages=_SCORE, short="-y")
    confidence_scale: float = option(1.0, "The confidence column's scale: 100 reads a 0-100 "
                                     "confidence (a percentage) as value / 100.",
                                     stages=_SCORE)
    any_confidence: bool = option(False, "The confidence is any real-valued measure, not a "
                                  "probability: skip ECE/MCE/Brier, keep ranking metrics.",
                                  stages=_SCORE, flag="--any-confidence")
    n_bins: int = option(15, "ECE bins (equal width).", stages=_SCORE, minimum=1)
    rce_bins: int = option(20, "Rank-calibration bins (equal mass).", stages=_SCORE,
                           minimum=1)
    bootstrap: int = option(1000, "Bootstrap resamples for 95% intervals (0: none).",
                            stages=_SCORE, minimum=0, maximum=MAX_BOOTSTRAP)
    seed: int = option(0, "Seed of the bootstrap.", stages=_SCORE)

    def __post_init__(self) -> None:
        super().__post_init__()
        if isinstance(self.confidence_scale, bool) or not isinstance(
                self.confidence_scale, (int, float)) or not (
                math.isfinite(self.confidence_scale) and self.confidence_scale > 0):
            raise ValueError("--confidence-scale must be a positive number, got "
                             f"{self.confidence_scale!r}")
