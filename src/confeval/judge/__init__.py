"""What a judge's scores say about the human scores they stand in for: the mean human score of
all items from the judge's scores on every item and human scores on a labelled few, corrected
for the judge's error (:mod:`.ppi`: the classical estimate, PPI and PPI++, per group, and the
labels a target interval width needs).

A numpy functional core, like :mod:`confeval.metrics`: arrays in, numbers out. Reading files
(a judge column, a human column, empty human cells for the unlabelled items) is
:mod:`confeval.verbs.judge`'s; the command is ``confeval judge mean``.
"""

from __future__ import annotations

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

__all__ = ["METHODS", "CorrectedMean", "LabelPlan", "MeanEstimate", "classical_mean",
           "corrected_mean", "corrected_mean_by_group", "labels_needed", "planned_width",
           "power_tuned_lambda", "ppi_mean", "z_quantile"]
