"""The intervals suite: conformal intervals and rating sets for a judge's 1-K scores from its
rating-token log-probabilities (the VLM-judge paper's nine methods plus rating sets).

``score_intervals(features, truth, ...)`` scores arrays, ``score_intervals_records(rs,
IntervalsOptions(...))`` a record set and ``score_intervals_file`` a record file or run folder
(the path a live run scores itself by); ``SUITE`` is the suite as every command sees it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy_attributes
from .._judge import JudgeChoice
from ..base import DemoEntry, Suite
from .options import DEFAULT_METHODS, LIVE_METHODS, IntervalsOptions

if TYPE_CHECKING:
    from ...ingest import Layout
    from ...records import RecordSet
    from ..base import Comparison, ConformalStep, Decision, LiveSuite

__all__ = ["DEFAULT_METHODS", "LIVE_METHODS", "PAPER_DIFFICULTY", "PAPER_PROTOCOL", "SUITE",
           "IntervalsInputs", "IntervalsOptions", "IntervalsSuite", "join_records",
           "load_judge_items", "read_intervals_records", "score_intervals",
           "score_intervals_file", "score_intervals_records", "score_separately"]

# the heavy parts (scoring: scipy, pandas) load when first used; the options, which
# the command line needs for its flags, are light
__getattr__ = lazy_attributes(__name__, {
    ".inputs": (
        "PAPER_DIFFICULTY", "IntervalsInputs", "join_records", "load_judge_items",
        "read_intervals_records"),
    ".scoring": (
        "PAPER_PROTOCOL", "score_intervals", "score_intervals_file", "score_intervals_records",
        "score_separately"),
})


class IntervalsSuite(Suite):
    """A judge's rating distribution over a 1-K scale, and a human score per item."""

    name = "intervals"
    title = "Conformal intervals for judge scores"
    Options = IntervalsOptions
    choice = JudgeChoice
    help = "Conformal intervals and label sets for judge scores."
    score_help = ("Conformal intervals (the VLM-judge paper's nine methods) and rating sets "
                  "for judge scores, with coverage, width and diagnostics over seeds (a run "
                  "folder of `confeval intervals run` is scored with its own options unless "
                  "overridden).")
    run_help = ("Ask a judge to grade answers 1-5 live and score conformal intervals on its "
                "rating distribution (resumable, cached).")
    demo = DemoEntry(
        "builtin:arith-judge", 20, {},
        "grades answers to arithmetic questions on a 1–5 scale; the rating distribution is "
        "the exact score of each rating after the rubric",
        "a judge that ignores the answer has Pearson 0 with the reference grades")

    def layout(self) -> Layout:
        from .._judge import LAYOUT

        return LAYOUT

    def score(self, rs: RecordSet, options: IntervalsOptions) -> dict:
        from .scoring import score_intervals_records

        return score_intervals_records(rs, options)

    not_compared = ("bootstrap", "seed", "seed_sweep", "separately", "pred_col")
    card_aspects = (("coverage", "*_coverage_raw"), ("interval width", "*_width_raw"))

    def comparison(self) -> Comparison:
        from .compare import COMPARISON

        return COMPARISON

    def conformal(self) -> ConformalStep:
        from .conformal import STEP

        return STEP

    def decision(self) -> Decision:
        from .decision import DECISION

        return DECISION

    def live(self) -> LiveSuite:
        from .live import LIVE

        return LIVE


SUITE = IntervalsSuite()
