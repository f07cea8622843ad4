"""The measures suite (MCQA-Eval): which confidence measure of an LLM ranks the gold option of
a multiple-choice question above the others? ``score_measures`` scores measures users bring;
the measures themselves are in :mod:`confeval.measures`; :mod:`.live` runs MCQA-Eval on a model
and :mod:`.studies` holds the paper's studies of threshold-based evaluation."""

from .inputs import MeasureInputs, load_mcq_items, option_rows, read_measure_records
from .scoring import MeasuresConfig, score_measures, score_measures_file

__all__ = ["MeasureInputs", "MeasuresConfig", "load_mcq_items", "option_rows",
           "read_measure_records", "score_measures", "score_measures_file"]
