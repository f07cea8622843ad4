"""confeval inside other tools: an Inspect extension and an lm-evaluation-harness plugin.

* :mod:`.inspect_registry` — the module Inspect imports through the ``inspect_ai`` entry point
  (``pip install 'confeval[inspect]'``): the metrics ``confeval/ece``, ``confeval/brier``,
  ``confeval/auroc``, ``confeval/auarc``, ``confeval/prr``, the scorer
  ``confeval/confidence`` and the task-end hook ``confeval/report``. The work is done by
  :mod:`.inspect_scores` (scores -> confeval's numbers), :mod:`.inspect_confidence` (a
  sample's confidence from its output) and :mod:`.inspect_report` (the report beside a log),
  which import Inspect only where they touch its objects.
* :mod:`.lm_eval_plugin` — aggregations for an lm-eval task's ``metric_list``
  (``confeval_ece``, ``confeval_auroc``, ``confeval_brier_top``), registered when the module is
  imported.

Nothing here is imported by confeval's command line: Inspect and lm-eval are optional, and
each module names the one it needs when it is first used.
"""
