"""The sets suite: conformal prediction sets for multiple-choice answers (LAC, APS, RAPS,
margin; Mondrian groups) from option logits, log-probabilities or probabilities.

``score_sets(probs, labels, ...)`` scores arrays, ``score_sets_records(rs, SetsOptions(...))``
a record set, ``score_sets_file(path, ...)`` a record file or run folder (the same path a live
run scores itself by); ``SUITE`` runs a model live (``confeval sets run``).
"""

from __future__ import annotations

from ..._lazy import lazy_attributes
from .options import DEFAULT_SCORES, PROTOCOLS, SetsOptions

__all__ = ["load_mc_items", "DEFAULT_SCORES", "PROTOCOLS", "SetsInputs", "SetsOptions",
           "read_sets_records", "score_sets", "score_sets_file", "score_sets_records"]

# the heavy parts (scoring: scipy, pandas) load when first used; the options, which
# the command line needs for its flags, are light
__getattr__ = lazy_attributes(__name__, {
    ".._multiple_choice": ("load_mc_items",),
    ".inputs": ("SetsInputs", "read_sets_records"),
    ".scoring": ("score_sets", "score_sets_file", "score_sets_records"),
})
