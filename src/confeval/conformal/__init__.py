"""Conformal prediction: the exact quantile, prediction sets for classification (LAC, APS, RAPS,
margin) and intervals for ordinal scores (nine methods), each with Mondrian groups, and their
metrics.

Modules: :mod:`.quantile` (the one conformal quantile), :mod:`.sets` (set scores and sets),
:mod:`.set_metrics` (coverage, size, UAcc), :mod:`.regression` (the interval methods,
``INTERVAL_METHODS``), :mod:`.interval_metrics` (clipping, adjustment, coverage by level and by
error, informativeness, ranking-scoring gap).
"""

from __future__ import annotations

from .._lazy import lazy_attributes
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
from .names import BASE_MODELS, INTERVAL_METHOD_NAMES, SCORES
from .set_metrics import set_metrics, uncertainty_aware_accuracy

__all__ = ["BASE_MODELS", "INTERVAL_METHODS", "INTERVAL_METHOD_NAMES", "SCORES", "SET_SCORES",
           "IntervalMethod",
           "SmallCalibrationWarning", "adjust_to_labels", "calibrate_and_predict",
           "clip_intervals", "conformal_quantile", "coverage_by_level", "error_bin_coverage",
           "get_interval_method", "get_set_score", "informativeness_bands",
           "interval_label_sets", "interval_metrics", "label_scores", "make_method",
           "mondrian_quantiles", "prediction_sets", "ranking_scoring_gap", "row_thresholds",
           "set_metrics", "shared_base_models", "softmax", "to_probabilities",
           "uncertainty_aware_accuracy"]

# the methods load scikit-learn and scipy when first used; their names and the metrics
# (numpy only, and named like their modules: imported here so that the name is always the
# function) do not
__getattr__ = lazy_attributes(__name__, {
    ".._numeric": ("softmax",),
    "._interval_base": ("IntervalMethod", "shared_base_models"),
    ".quantile": ("SmallCalibrationWarning", "conformal_quantile", "mondrian_quantiles",
                  "row_thresholds"),
    ".regression": ("INTERVAL_METHODS", "get_interval_method", "make_method"),
    ".sets": ("SET_SCORES", "calibrate_and_predict", "get_set_score", "label_scores",
              "prediction_sets", "to_probabilities"),
})
