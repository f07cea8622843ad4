"""The sets suite: conformal prediction sets for multiple-choice answers (LAC, APS, RAPS,
margin; Mondrian groups) from option logits, log-probabilities or probabilities.

``score_sets(probs, labels, ...)`` scores arrays, ``score_sets_file(path, SetsConfig(...))`` a
record file; ``SUITE`` runs a model live (``confeval sets run``).
"""

from .inputs import SetsInputs, load_mc_items, read_sets_records
from .scoring import DEFAULT_SCORES, PROTOCOLS, SetsConfig, score_sets, score_sets_file

__all__ = ["DEFAULT_SCORES", "PROTOCOLS", "SetsConfig", "SetsInputs", "load_mc_items",
           "read_sets_records", "score_sets", "score_sets_file"]
