"""Every option of the steps suite, declared once: its scoring (step record files and run
folders) and its live run (``confeval steps score`` / ``confeval steps run`` take their flags
from here)."""

from __future__ import annotations

import dataclasses

from ...parse.steps import CONSISTENCY_POLICIES
from ..base import SuiteOptions, check_answer_mode
from ..options import MAX_BOOTSTRAP, option

__all__ = ["OUTPUT_FORMATS", "StepsOptions", "parse_weights"]

OUTPUT_FORMATS = ("list", "json")
"""Reply formats a live run can ask a judge for."""


def parse_weights(text: str) -> tuple[float, ...]:
    """``"0.4,0.4,0.2"`` -> ``(0.4, 0.4, 0.2)``; anything else -> ``()`` (refused later)."""
    try:
        return tuple(float(w) for w in str(text).split(","))
    except ValueError:
        return ()


def _show_weights(weights) -> str:
    return ",".join(f"{w:g}" for w in weights)


@dataclasses.dataclass(frozen=True)
class StepsOptions(SuiteOptions):
    """Options of the steps suite: where step records hold P(correct), the label and the
    groups; the paper's parameters (Appendix C: CRS thresholds ``epsilon``/``delta``, scale and
    weights, CCS bins and scale); the item bootstrap; and a live run's judge settings (what to
    do when a judge's label contradicts its probability, reply length, reply format, answer
    mode)."""

    p_col: str = option("p_correct", "Judge's P(step correct).", stages=("score",))
    label_col: str = option("label", "1 correct, 0 incorrect.", stages=("score",))
    group_cols: tuple[str, ...] = option(
        (), "Break every metric down by this column (repeatable), e.g. difficulty, subject, "
        "modality.", stages=("score",), flag="--group-col", multiple=True)
    epsilon: float = option(0.01, "CRS: minor-change threshold.")
    delta: float = option(0.2, "CRS: significant-change threshold.")
    crs_scale: float = option(5.0, "CRS: the scale s of ACCM and SCCR in CRS = w1 (1 - CCR) "
                              "+ w2 (1 - s ACCM) + w3 (1 - s SCCR).")
    weights: tuple[float, ...] = option((0.4, 0.4, 0.2), "CRS: w1,w2,w3.",
                                        flag="--crs-weights", parse=parse_weights,
                                        show=_show_weights)
    n_bins: int = option(10, "CCS: ECE bins.", minimum=1)
    ccs_scale: float = option(5.0, "CCS: scale.")
    seed: int = option(0, "Seed of the item bootstrap (and of every random step).")
    bootstrap: int = option(1000, "Item resamples for the 95% intervals (0: none).",
                            minimum=0, maximum=MAX_BOOTSTRAP)
    consistency: str = option("flag", "When a judge's label contradicts its probability: "
                              "flag, mirror or exclude.", stages=("run",))
    max_tokens: int = option(1024, "Reply length limit.", stages=("run",), minimum=1)
    output: str = option("list", "Reply format asked for: list or json.", stages=("run",))
    answer: str = option("auto", "scored (P(Yes) per step), generated (parsed reply) or auto.",
                         stages=("run",))

    def __post_init__(self) -> None:
        super().__post_init__()
        weights = parse_weights(self.weights) if isinstance(self.weights, str) \
            else tuple(self.weights)
        if len(weights) != 3:
            shown = self.weights if isinstance(self.weights, str) else _show_weights(weights)
            raise ValueError(f"--crs-weights '{shown}': give three numbers, e.g. 0.4,0.4,0.2")
        object.__setattr__(self, "weights", tuple(float(w) for w in weights))
        object.__setattr__(self, "group_cols", tuple(self.group_cols))
        if not 0 <= self.epsilon <= self.delta:
            raise ValueError(f"need 0 <= epsilon <= delta, got {self.epsilon} and {self.delta}")
        check_answer_mode(self.answer)
        if self.consistency not in CONSISTENCY_POLICIES:
            raise ValueError(f"--consistency must be one of {', '.join(CONSISTENCY_POLICIES)}, "
                             f"got {self.consistency!r}")
        if self.output not in OUTPUT_FORMATS:
            raise ValueError(f"--output must be one of {', '.join(OUTPUT_FORMATS)}")
