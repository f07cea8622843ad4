"""What a judge's scores say about the human scores they stand in for: the mean human score of
all items from the judge's scores on every item and human scores on a labelled few, corrected
for the judge's error (:mod:`.ppi`: the classical estimate, PPI and PPI++, per group, and the
labels a target interval width needs); how much its scores change when it is asked again
(:mod:`.reruns`: flip rates, Krippendorff's alpha, rerun agreement as a confidence); and
whether it prefers the answer shown first or the longer one (:mod:`.bias`).

A numpy functional core, like :mod:`confeval.metrics`: arrays in, numbers out. Reading files
(a judge column, a human column, empty human cells for the unlabelled items) is
:mod:`confeval.verbs.judge`'s and :mod:`confeval.verbs.judge_tests`'; the commands are
``confeval judge mean``, ``judge reruns``, ``judge position`` and ``judge length``.

Every result of :mod:`.reruns` and :mod:`.bias` is a plain dict of JSON values with stable
keys (documented in each function), for other tools to build on.
"""

from __future__ import annotations

from .bias import length_bias, position_bias, slot_confidence_test
from .ppi import (
    METHODS,
    CorrectedMean,
    LabelPlan,
    MeanEstimate,
    classical_mean,
    corrected_mean,
    corrected_mean_by_group,
    labels_needed,
    planned_width,
    power_tuned_lambda,
    ppi_mean,
    z_quantile,
)
from .reruns import (
    exact_interval,
    judge_answers,
    krippendorff_alpha,
    rerun_confidence,
    rerun_variability,
    score_confidence,
)

__all__ = ["METHODS", "CorrectedMean", "LabelPlan", "MeanEstimate", "classical_mean",
           "corrected_mean", "corrected_mean_by_group", "exact_interval", "judge_answers",
           "krippendorff_alpha", "labels_needed", "length_bias", "planned_width",
           "position_bias", "power_tuned_lambda", "ppi_mean", "rerun_confidence",
           "rerun_variability", "score_confidence", "slot_confidence_test", "z_quantile"]
