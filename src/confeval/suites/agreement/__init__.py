"""The ``agreement`` suite: a judge's scores against reference (human) scores (``confeval
agreement``) — correlations, accuracy, bias, and the calibration of its score
distribution."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .._judge import JudgeChoice
from ..base import Suite
from .options import AgreementOptions

if TYPE_CHECKING:
    from ...ingest import Layout
    from ...records import RecordSet
    from ..base import Decision

__all__ = ["SUITE", "AgreementOptions", "AgreementSuite", "score_agreement_file"]


class AgreementSuite(Suite):
    """A judge's score and a human's per item."""

    name = "agreement"
    title = "Judge vs reference scores"
    Options = AgreementOptions
    top_level = True
    choice = JudgeChoice
    score_help = ("Agreement of a judge's scores with reference scores (correlations, "
                  "accuracy, bias).")

    def layout(self) -> Layout:
        from .._judge import LAYOUT

        return LAYOUT

    def score(self, rs: RecordSet, options: AgreementOptions, **_) -> dict:
        from .scoring import score_agreement

        return score_agreement(rs, options)

    def decision(self) -> Decision:
        from .._judge import judge_decision
        from .scoring import read_judge_scores

        return judge_decision(lambda rs, options, truth: read_judge_scores(
            rs, options, with_truth=truth))


SUITE = AgreementSuite()


def score_agreement_file(path: str | Path, options: AgreementOptions) -> dict:
    """``confeval agreement`` on one record file or another tool's file: the suite's loader,
    then its scoring."""
    return SUITE.score(SUITE.load(path, options), options)
