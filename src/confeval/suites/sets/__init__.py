"""The sets suite: conformal prediction sets for multiple-choice answers (LAC, APS, RAPS,
margin; Mondrian groups) from option logits, log-probabilities or probabilities.

``score_sets(probs, labels, ...)`` scores arrays, ``score_sets_records(rs, SetsOptions(...))``
a record set, ``score_sets_file(path, ...)`` a record file or run folder (the same path a live
run scores itself by); ``SUITE`` is the suite as every command sees it (``confeval sets score``,
``confeval sets run``, compare, guarantee).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy_attributes
from ..base import DemoEntry, Suite
from .options import DEFAULT_SCORES, PROTOCOLS, SetsOptions

if TYPE_CHECKING:
    from ...ingest import Layout
    from ...records import RecordSet
    from ..base import Comparison, ConformalStep, Decision, LiveSuite

__all__ = ["DEFAULT_SCORES", "PROTOCOLS", "SUITE", "SetsInputs", "SetsOptions", "SetsSuite",
           "load_mc_items", "read_sets_records", "score_sets", "score_sets_file",
           "score_sets_records"]

# the heavy parts (scoring: scipy, pandas) load when first used; the options, which
# the command line needs for its flags, are light
__getattr__ = lazy_attributes(__name__, {
    ".._multiple_choice": ("load_mc_items",),
    ".inputs": ("SetsInputs", "read_sets_records"),
    ".scoring": ("score_sets", "score_sets_file", "score_sets_records"),
})


class SetsSuite(Suite):
    """Multiple-choice answers with a probability per option."""

    name = "sets"
    title = "Conformal prediction sets"
    Options = SetsOptions
    help = "Conformal prediction sets for multiple-choice answers."
    score_help = ("Prediction sets with a coverage guarantee from option logits/log-probs/"
                  "probabilities (a run folder of `confeval sets run` is scored with its own "
                  "options unless overridden).")
    run_help = ("Ask a model multiple-choice questions live and score its option distribution "
                "(prompts -> model -> records.jsonl -> metrics.json + report.html; "
                "resumable).")
    demo = DemoEntry(
        "builtin:arith-mc", None, {},
        "answers generated arithmetic and unit-conversion questions with 4–6 options; option "
        "probabilities are exact continuation scores of the letters, renormalised",
        "chance accuracy about 1/5 (4–6 options)")

    def layout(self) -> Layout:
        from .ingest import LAYOUT

        return LAYOUT

    def score(self, rs: RecordSet, options: SetsOptions) -> dict:
        from .scoring import score_sets_records

        return score_sets_records(rs, options)

    not_compared = ("seeds",)
    card_aspects = (("calibration", "ece"), ("coverage", "*_coverage"), ("set size", "*_set_size"),
                    ("accuracy", "accuracy"))

    def comparison(self) -> Comparison:
        from .compare import COMPARISON

        return COMPARISON

    def decision(self) -> Decision:
        from .decision import DECISION

        return DECISION

    def conformal(self) -> ConformalStep:
        from .conformal import STEP

        return STEP

    def live(self) -> LiveSuite:
        from .live import LIVE

        return LIVE


SUITE = SetsSuite()
