"""The steps suite: confidence of process judges (ConfProBench's CRS, CSS, CCS), from step
records, raw judge replies or a live judge.

``score_steps(frame, ...)`` scores a step frame, ``score_steps_file(path, StepsOptions(...))``
a step record file or a run folder (the path a live run scores itself by),
``parse_step_replies`` turns raw replies into step records; ``SUITE`` is the suite as every
command sees it (``confeval steps score|run|consistency``, compare, guarantee).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..._lazy import lazy_attributes
from ..base import DemoEntry, ScoringCommand, Suite
from ..options import Options, option
from .options import StepsOptions

if TYPE_CHECKING:
    from ...records import RecordSet
    from ..base import Comparison, Decision, LiveSuite

__all__ = ["SUITE", "ConsistencyOptions", "StepsOptions", "StepsSuite",
           "generator_consistency", "load_step_items", "parse_step_replies",
           "score_generator_consistency", "score_steps", "score_steps_file", "step_frame",
           "verdict_records"]

# the heavy parts (scoring: scipy, pandas) load when first used; the options, which
# the command line needs for its flags, are light
__getattr__ = lazy_attributes(__name__, {
    ".inputs": ("load_step_items", "parse_step_replies", "step_frame", "verdict_records"),
    ".scoring": (
        "generator_consistency", "score_generator_consistency", "score_steps", "score_steps_file"),
})


@dataclasses.dataclass(frozen=True)
class ConsistencyOptions(Options):
    """``confeval steps consistency``: each judge's pair of step record files, on the dataset
    perturbed by generator A and by generator B."""

    pairs: tuple[str, ...] = option((), "JUDGE=RECORDS_A,RECORDS_B: one judge's step records "
                                    "on the dataset perturbed by generator A and by generator "
                                    "B (repeat, >= 3 judges).", stages=("score",),
                                    flag="--pair", multiple=True)

    def inputs(self) -> list[list[Path]]:
        """The pairs' files, in order (each pair one input of the command)."""
        out = []
        for spec in self.pairs:
            judge, sep, files = spec.partition("=")
            paths = files.split(",")
            if not sep or len(paths) != 2 or not judge:
                raise ValueError(f"--pair {spec!r}: use JUDGE=RECORDS_A,RECORDS_B")
            out.append([Path(p) for p in paths])
        return out


def _consistency(inputs: Sequence[Sequence[Path]], options: ConsistencyOptions) -> dict:
    """The pairs' judges with the files as found (a rerun: where its ``cwd`` put them)."""
    from .scoring import score_generator_consistency

    judges = [spec.partition("=")[0] for spec in options.pairs]
    if len(inputs) != len(judges):
        raise ValueError(f"{len(judges)} pairs for {len(inputs)} inputs")
    return score_generator_consistency([f"{judge}={a},{b}" for judge, (a, b)
                                        in zip(judges, inputs)])


CONSISTENCY = ScoringCommand(
    "steps consistency", ConsistencyOptions, _consistency, "steps_consistency",
    "Do two perturbation generators rank process judges alike?", suite="steps", n_files=2,
    together="generators A vs B")


class StepsSuite(Suite):
    """A process judge's P(step correct) per step, on original and perturbed chains."""

    name = "steps"
    title = "Process-judge step confidence (ConfProBench)"
    Options = StepsOptions
    images = True
    help = "Confidence of process judges (ConfProBench: CRS, CSS, CCS)."
    score_help = ("CRS (robustness to perturbations), CSS (sensitivity to each error type), "
                  "CCS (calibration), macro F1 and their average from step records or `steps "
                  "run` folders (a run folder is scored with its own options unless "
                  "overridden).")
    run_help = ("Ask a process judge to verify every step live (original and perturbed "
                "chains) and score CRS, CSS and CCS (resumable, cached).")
    demo = DemoEntry(
        "builtin:arith-steps", 6, {},
        "checks four-step solutions step by step; P(step correct) is its probability of Yes "
        "against No for each step given the steps before it",
        "AUROC 0.5 and CSS 0 for a judge that cannot tell right steps from wrong")

    def load_own(self, path: Path) -> RecordSet:
        """A step record file, or a ``steps run`` folder's step rows."""
        from .inputs import load_steps

        return load_steps(path)

    def score(self, rs: RecordSet, options: StepsOptions) -> dict:
        from .scoring import score_step_rows

        return score_step_rows(rs, options)

    not_compared = ("bootstrap", "seed", "group_cols")
    card_aspects = (("calibration", "ccs"), ("robustness", "crs"))

    def comparison(self) -> Comparison:
        from .compare import COMPARISON

        return COMPARISON

    def decision(self) -> Decision:
        from .decision import DECISION

        return DECISION

    def live(self) -> LiveSuite:
        from .live import LIVE

        return LIVE

    def extra_commands(self) -> tuple[ScoringCommand, ...]:
        return (CONSISTENCY,)


SUITE = StepsSuite()
