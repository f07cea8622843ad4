"""Metrics: pure numpy/scipy functions, validated inputs, documented conventions.

- :mod:`~confeval.metrics.calibration` — ECE, MCE, class-wise ECE, Brier, reliability data,
  histogram binning.
- :mod:`~confeval.metrics.selective` — AUROC, accuracy-rejection / risk-coverage, AUARC, AURC,
  PRR, rank-calibration error.
- :mod:`~confeval.metrics.agreement` — correlations and error measures for scored judgments.
- :mod:`~confeval.metrics.classification` — accuracy, per-class and macro F1.
- :mod:`~confeval.metrics.bootstrap` — seeded, vectorised bootstrap intervals.
- :mod:`~confeval.metrics.steps` — process-judge step confidence: CRS, CSS, CCS.
"""

from .agreement import (
    bias_by_level,
    confusion_matrix,
    exact_accuracy,
    kendall,
    mean_absolute_error,
    mean_bias,
    overconfidence_rate,
    pearson,
    spearman,
    within_k_accuracy,
)
from .bootstrap import (
    BootstrapDiff,
    BootstrapResult,
    bootstrap_ci,
    paired_bootstrap,
    percentile_interval,
    resample_counts,
)
from .calibration import (
    HistogramBinning,
    ReliabilityDiagram,
    bin_edges,
    bin_indices,
    brier_score,
    calibration_error_float32_left_closed,
    classwise_calibration_error,
    expected_calibration_error,
    maximum_calibration_error,
    multiclass_brier_score,
    reliability_diagram,
    top_label,
    top_label_calibration_error,
)
from .classification import accuracy, cohen_kappa, f1_per_class, macro_f1, proportion_ci
from .selective import (
    Ranking,
    RCEOverOrders,
    UndefinedMetricWarning,
    accuracy_rejection_curve,
    auarc,
    aurc,
    auroc,
    prediction_rejection_ratio,
    rank_calibration_diagram,
    rank_calibration_error,
    rank_calibration_error_orders,
    risk_coverage_curve,
)
from .steps import (
    confidence_calibration,
    confidence_robustness,
    confidence_sensitivity,
    step_confidence,
)

__all__ = [
    "BootstrapDiff", "BootstrapResult", "HistogramBinning", "ReliabilityDiagram",
    "UndefinedMetricWarning", "accuracy", "accuracy_rejection_curve", "auarc", "auroc", "aurc",
    "bias_by_level", "bin_edges", "bin_indices", "bootstrap_ci", "brier_score",
    "calibration_error_float32_left_closed",
    "classwise_calibration_error", "cohen_kappa", "confidence_calibration", "confidence_robustness",
    "confidence_sensitivity", "confusion_matrix", "exact_accuracy",
    "expected_calibration_error", "f1_per_class", "kendall", "macro_f1",
    "maximum_calibration_error", "mean_absolute_error", "mean_bias", "multiclass_brier_score",
    "overconfidence_rate", "paired_bootstrap", "pearson", "percentile_interval",
    "prediction_rejection_ratio", "proportion_ci", "Ranking", "RCEOverOrders",
    "rank_calibration_diagram", "rank_calibration_error",
    "rank_calibration_error_orders",
    "reliability_diagram", "resample_counts", "risk_coverage_curve", "spearman",
    "step_confidence",
    "top_label", "top_label_calibration_error", "within_k_accuracy",
]
