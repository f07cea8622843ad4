"""The measures suite (MCQA-Eval): which confidence measure of an LLM ranks the gold option of
a multiple-choice question above the others? ``score_measures`` scores measures users bring;
the measures themselves are in :mod:`confeval.measures`; :mod:`.live` runs MCQA-Eval on a model
and :mod:`.studies` holds the paper's studies of threshold-based evaluation."""

from __future__ import annotations

from ..._lazy import lazy_attributes
from .options import MEASURE_NAMES, MeasuresOptions

__all__ = ["load_mc_items", "MEASURE_NAMES", "MeasureInputs", "MeasuresOptions", "option_rows",
           "read_measure_records", "score_measure_rows", "score_measures",
           "score_measures_file"]

# the heavy parts (scoring: scipy, pandas) load when first used; the options, which
# the command line needs for its flags, are light
__getattr__ = lazy_attributes(__name__, {
    ".._multiple_choice": ("load_mc_items",),
    ".inputs": ("MeasureInputs", "option_rows", "read_measure_records"),
    ".scoring": ("score_measure_rows", "score_measures", "score_measures_file"),
})
