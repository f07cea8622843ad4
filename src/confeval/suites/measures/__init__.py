"""The measures suite (MCQA-Eval): which confidence measure of an LLM ranks the gold option of
a multiple-choice question above the others? ``score_measures`` scores measures users bring;
the measures themselves are in :mod:`confeval.measures`; :mod:`.live` runs MCQA-Eval on a model
and :mod:`.studies` holds the paper's studies of threshold-based evaluation."""

from .inputs import MeasureInputs, load_mcq_items, option_rows, read_measure_records
from .options import MEASURE_NAMES, MeasuresOptions
from .scoring import score_measure_rows, score_measures, score_measures_file

__all__ = ["MEASURE_NAMES", "MeasureInputs", "MeasuresOptions", "load_mcq_items", "option_rows",
           "read_measure_records", "score_measure_rows", "score_measures",
           "score_measures_file"]
