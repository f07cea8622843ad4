"""Conformal prediction: the exact quantile, prediction sets for classification (LAC, APS, RAPS,
margin) and intervals for ordinal scores (nine methods), each with Mondrian groups, and their
metrics.

Modules: :mod:`.quantile` (the one conformal quantile), :mod:`.sets` (set scores and sets),
:mod:`.set_metrics` (coverage, size, UAcc), :mod:`.regression` (the interval methods,
``INTERVAL_METHODS``), :mod:`.interval_metrics` (clipping, adjustment, coverage by level and by
error, informativeness, ranking-scoring gap).
"""

from .._numeric import softmax
from ._interval_base import BASE_MODELS, IntervalMethod, shared_base_models
from .interval_metrics import (
    adjust_to_labels,
    clip_intervals,
    coverage_by_level,
    error_bin_coverage,
    informativeness_bands,
    interval_label_sets,
    interval_metrics,
    ranking_scoring_gap,
)
from .quantile import (
    SmallCalibrationWarning,
    conformal_quantile,
    mondrian_quantiles,
    row_thresholds,
)
from .regression import INTERVAL_METHODS, get_interval_method, make_method
from .set_metrics import set_metrics, uncertainty_aware_accuracy
from .sets import (
    SCORES,
    SET_SCORES,
    calibrate_and_predict,
    get_set_score,
    label_scores,
    prediction_sets,
    to_probabilities,
)

__all__ = ["BASE_MODELS", "INTERVAL_METHODS", "SCORES", "SET_SCORES", "IntervalMethod",
           "SmallCalibrationWarning", "adjust_to_labels", "calibrate_and_predict",
           "clip_intervals", "conformal_quantile", "coverage_by_level", "error_bin_coverage",
           "get_interval_method", "get_set_score", "informativeness_bands",
           "interval_label_sets", "interval_metrics", "label_scores", "make_method",
           "mondrian_quantiles", "prediction_sets", "ranking_scoring_gap", "row_thresholds",
           "set_metrics", "shared_base_models", "softmax", "to_probabilities",
           "uncertainty_aware_accuracy"]
