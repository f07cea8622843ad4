"""The intervals suite: conformal intervals and rating sets for a judge's 1-K scores from its
rating-token log-probabilities (the VLM-judge paper's nine methods plus rating sets).

``score_intervals(features, truth, ...)`` scores arrays, ``score_intervals_file(path,
IntervalsConfig(...))`` a record file; ``SUITE`` runs a judge live (``confeval intervals run``).
"""

from .inputs import (
    PAPER_DIFFICULTY,
    IntervalsInputs,
    join_records,
    load_judge_items,
    read_intervals_records,
)
from .scoring import (
    DEFAULT_METHODS,
    PAPER_PROTOCOL,
    IntervalsConfig,
    score_intervals,
    score_intervals_file,
    score_separately,
)

__all__ = ["DEFAULT_METHODS", "PAPER_DIFFICULTY", "PAPER_PROTOCOL", "IntervalsConfig",
           "IntervalsInputs", "join_records", "load_judge_items", "read_intervals_records",
           "score_intervals", "score_intervals_file", "score_separately"]
