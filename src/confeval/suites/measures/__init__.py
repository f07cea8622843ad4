"""The measures suite (MCQA-Eval): which confidence measure of an LLM ranks the gold option of
a multiple-choice question above the others? ``score_measures`` scores measures users bring;
the measures themselves are in :mod:`confeval.measures`; :mod:`.live` runs MCQA-Eval on a model
and :mod:`.studies` holds the paper's studies of threshold-based evaluation."""

from .._multiple_choice import load_mc_items
from .inputs import MeasureInputs, option_rows, read_measure_records
from .options import MEASURE_NAMES, MeasuresOptions
from .scoring import score_measure_rows, score_measures, score_measures_file

__all__ = ["load_mc_items", "MEASURE_NAMES", "MeasureInputs", "MeasuresOptions", "option_rows",
           "read_measure_records", "score_measure_rows", "score_measures",
           "score_measures_file"]
