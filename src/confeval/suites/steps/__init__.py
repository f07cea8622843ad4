"""The steps suite: confidence of process judges (ConfProBench's CRS, CSS, CCS), from step
records, raw judge replies or a live judge.

``score_steps(frame, ...)`` scores a step frame, ``score_steps_file(path, StepsOptions(...))``
a step record file or a run folder (the path a live run scores itself by),
``parse_step_replies`` turns raw replies into step records; ``SUITE`` runs a judge live
(``confeval steps run``).
"""

from .inputs import load_step_items, parse_step_replies, step_frame, verdict_records
from .options import StepsOptions
from .scoring import (
    generator_consistency,
    score_generator_consistency,
    score_steps,
    score_steps_file,
)

__all__ = ["StepsOptions", "generator_consistency", "load_step_items", "parse_step_replies",
           "score_generator_consistency", "score_steps", "score_steps_file", "step_frame",
           "verdict_records"]
