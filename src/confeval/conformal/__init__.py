"""Conformal prediction: split conformal sets (LAC, APS, RAPS, margin), Mondrian groups, and
their metrics."""

from .metrics import set_metrics, uncertainty_aware_accuracy
from .sets import (
    SCORES,
    SmallCalibrationWarning,
    calibrate_and_predict,
    conformal_quantile,
    label_scores,
    mondrian_quantiles,
    prediction_sets,
    softmax,
    to_probabilities,
)

__all__ = ["SCORES", "SmallCalibrationWarning", "calibrate_and_predict", "conformal_quantile",
           "label_scores", "mondrian_quantiles", "prediction_sets", "set_metrics", "softmax",
           "to_probabilities", "uncertainty_aware_accuracy"]
