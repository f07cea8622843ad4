"""The steps suite: confidence of process judges (ConfProBench's CRS, CSS, CCS), from step
records, raw judge replies or a live judge.

``score_steps(frame, ...)`` scores a step frame, ``score_steps_file(path, StepsOptions(...))``
a step record file or a run folder (the path a live run scores itself by),
``parse_step_replies`` turns raw replies into step records; ``SUITE`` runs a judge live
(``confeval steps run``).
"""

from __future__ import annotations

from ..._lazy import lazy_attributes
from .options import StepsOptions

__all__ = ["StepsOptions", "generator_consistency", "load_step_items", "parse_step_replies",
           "score_generator_consistency", "score_steps", "score_steps_file", "step_frame",
           "verdict_records"]

# the heavy parts (scoring: scipy, pandas) load when first used; the options, which
# the command line needs for its flags, are light
__getattr__ = lazy_attributes(__name__, {
    ".inputs": ("load_step_items", "parse_step_replies", "step_frame", "verdict_records"),
    ".scoring": (
        "generator_consistency", "score_generator_consistency", "score_steps", "score_steps_file"),
})
