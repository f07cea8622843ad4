"""The ``score`` suite: any confidence against correctness (``confeval score``) — calibration
(ECE, MCE, Brier) and ranking (AUROC, AUARC, PRR, RCE) with bootstrap intervals, on
confeval's own records or the files lm-eval, Inspect and OpenAI-compatible servers wrote."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..base import Suite
from .options import ConfidenceOptions

if TYPE_CHECKING:
    from ...ingest import Layout
    from ...records import RecordSet
    from ..base import Comparison, Decision

__all__ = ["SUITE", "ConfidenceOptions", "ScoreSuite", "score_confidence_file"]


class ScoreSuite(Suite):
    """A confidence and a correctness per answer."""

    name = "score"
    title = "Confidence vs correctness"
    Options = ConfidenceOptions
    kind = "confidence"
    top_level = True
    progress = True
    score_help = ("Score a confidence column against correctness: ECE, MCE, Brier, AUROC, "
                  "AUARC, PRR, RCE.")

    def layout(self) -> Layout:
        from .ingest import LAYOUT

        return LAYOUT

    def score(self, rs: RecordSet, options: ConfidenceOptions, *,
              progress: Callable[[int, int], None] | None = None) -> dict:
        from .scoring import score_confidence

        return score_confidence(rs, options, progress=progress)

    not_compared = ("bootstrap", "seed", "rce_bins")
    card_aspects = (("calibration", "ece"), ("discrimination", "auroc"), ("accuracy", "accuracy"))

    def comparison(self) -> Comparison:
        from .compare import COMPARISON

        return COMPARISON

    def decision(self) -> Decision:
        from .decision import DECISION

        return DECISION


SUITE = ScoreSuite()


def score_confidence_file(path: str | Path, options: ConfidenceOptions, *,
                          progress: Callable[[int, int], None] | None = None) -> dict:
    """``confeval score`` on one record file, run folder or another tool's file: the suite's
    loader, then its scoring."""
    return SUITE.score(SUITE.load(path, options), options, progress=progress)
