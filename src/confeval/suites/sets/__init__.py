"""The sets suite: conformal prediction sets for multiple-choice answers (LAC, APS, RAPS,
margin; Mondrian groups) from option logits, log-probabilities or probabilities.

``score_sets(probs, labels, ...)`` scores arrays, ``score_sets_records(rs, SetsOptions(...))``
a record set, ``score_sets_file(path, ...)`` a record file or run folder (the same path a live
run scores itself by); ``SUITE`` runs a model live (``confeval sets run``).
"""

from .._multiple_choice import load_mc_items
from .inputs import SetsInputs, read_sets_records
from .options import DEFAULT_SCORES, PROTOCOLS, SetsOptions
from .scoring import score_sets, score_sets_file, score_sets_records

__all__ = ["load_mc_items", "DEFAULT_SCORES", "PROTOCOLS", "SetsInputs", "SetsOptions",
           "read_sets_records", "score_sets", "score_sets_file", "score_sets_records"]
