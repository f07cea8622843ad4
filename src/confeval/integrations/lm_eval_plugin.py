"""confeval's aggregations registered in lm-evaluation-harness (:mod:`.lm_eval_aggregations`).

Importing this module registers, with lm-eval's own ``register_aggregation``,
``confeval_ece``, ``confeval_ece_low``, ``confeval_ece_high``, ``confeval_auroc`` and
``confeval_brier_top``; it also exposes them as functions (``ece``, ``ece_low``, ``ece_high``,
``auroc``, ``brier_top``) for a task YAML's ``!function``.

What lm-eval 0.4.13 offers a plugin (read in its installed source): no entry-point groups
(nothing in it calls ``importlib.metadata.entry_points``) and no ``--plugins`` option, so the
module must be imported before the task is built. From the command line that is done by the
task's own folder: a one-line module beside the YAML (``confeval_lm_eval.py``:
``from confeval.integrations.lm_eval_plugin import *``) named by ``!function``::

    metric_list:
      - metric: acc
      - metric: brier_score          # items (gold, probabilities): the table shows ECE
        aggregation: !function confeval_lm_eval.ece
        higher_is_better: false
      - metric: likelihood           # items (gold, log-likelihoods): the table shows AUROC
        aggregation: !function confeval_lm_eval.auroc
        higher_is_better: true

From Python, ``import confeval.integrations.lm_eval_plugin`` before ``simple_evaluate`` lets a
YAML name them as strings (``aggregation: confeval_ece``).
"""

from __future__ import annotations

from .lm_eval_aggregations import AGGREGATIONS, auroc, brier_top, ece, ece_high, ece_low

__all__ = ["auroc", "brier_top", "ece", "ece_high", "ece_low", "register"]


def register() -> None:
    """Register the aggregations (again: a no-op) in lm-eval's registry."""
    # lm-eval fills its built-in aggregations on the first lookup of an empty registry: load
    # them first, or registering ours would leave "mean" and the others unregistered
    import lm_eval.api.metrics  # noqa: F401
    from lm_eval.api.registry import aggregation_registry, register_aggregation

    for name, fn in AGGREGATIONS.items():
        if aggregation_registry.get(name, None) is not fn:
            register_aggregation(name)(fn)


register()
