"""The intervals suite: conformal intervals and rating sets for a judge's 1-K scores from its
rating-token log-probabilities (the VLM-judge paper's nine methods plus rating sets).

``score_intervals(features, truth, ...)`` scores arrays, ``score_intervals_records(rs,
IntervalsOptions(...))`` a record set and ``score_intervals_file`` a record file or run folder
(the path a live run scores itself by); ``SUITE`` runs a judge live (``confeval intervals
run``).
"""

from __future__ import annotations

from ..._lazy import lazy_attributes
from .options import DEFAULT_METHODS, LIVE_METHODS, IntervalsOptions

__all__ = ["DEFAULT_METHODS", "LIVE_METHODS", "PAPER_DIFFICULTY", "PAPER_PROTOCOL",
           "IntervalsInputs", "IntervalsOptions", "join_records", "load_judge_items",
           "read_intervals_records", "score_intervals", "score_intervals_file",
           "score_intervals_records", "score_separately"]

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
