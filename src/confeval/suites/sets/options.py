"""Every option of the sets suite, declared once: its scoring (record files and run folders)
and its live run (``confeval sets score`` / ``confeval sets run`` take their flags from here)."""

from __future__ import annotations

import dataclasses

from ...conformal.names import DEFAULT_SCORES, PROTOCOLS, SCORES
from .._seeds import format_seeds, parse_seed_tuple
from ..base import SuiteOptions
from ..options import IngestOptions, comma_list, option

__all__ = ["DEFAULT_SCORES", "INPUT_KINDS", "PRECISIONS", "PROTOCOLS", "SetsOptions",
           "comma_list"]

PRECISIONS = ("float32", "float64")
INPUT_KINDS = ("logits", "logprobs", "probs")


@dataclasses.dataclass(frozen=True)
class SetsOptions(SuiteOptions, IngestOptions):
    """Options of the sets suite.

    ``label_col``, ``logit_cols``, ``input`` and ``group_col`` say where a record file holds
    the gold option, the option values and the groups (a live run fixes them to its records'
    layout); ``alpha`` miscoverage; ``split_seed`` the seed of the single 50/50 split, or
    ``seeds`` for several (numbers become ``{mean, std}``); ``scores`` the set scores
    (:data:`~confeval.conformal.SCORES`); ``protocol`` ``exact`` or ``vlm-bench``
    (:mod:`~confeval.suites.sets.scoring`); ``precision`` of the softmax; ``lam``/``k_reg``
    the RAPS penalty; ``allow_empty`` keeps empty sets; live: ``idk``/``nota`` extra options
    offered to the model.
    """

    label_col: str = option("answer", "Gold option (a letter, or the column suffix).",
                            stages=("score",))
    logit_cols: str = option("logit_*", "Option columns (glob or comma list); the part after "
                             "the last '_' names the option.", stages=("score",))
    input: str = option("logits", "logits | logprobs | probs", stages=("score",))
    group_col: str | None = option(None, "Mondrian: calibrate per group of this column.",
                                   stages=("score",))
    alpha: float = option(0.1, "Miscoverage: sets cover with probability >= 1-alpha.")
    split_seed: int = option(42, "Seed of the 50/50 calibration/test split.")
    seeds: tuple[int, ...] | None = option(
        None, "Repeat over splits, e.g. 1-10; numbers become {mean, std}.",
        parse=parse_seed_tuple, show=format_seeds)
    scores: tuple[str, ...] = option(
        DEFAULT_SCORES, "Comma list of lac, aps, aps_randomized, raps, raps_randomized, "
        "margin.", parse=comma_list, show=",".join)
    protocol: str = option("exact", "exact (default) or vlm-bench (the published benchmark's "
                           "quantile and ECE).")
    precision: str = option("float32", "Softmax precision: float32 (as published) or "
                            "float64.")
    lam: float = option(0.01, "RAPS rank penalty.", flag="--raps-lambda")
    k_reg: int = option(1, "RAPS free ranks.", flag="--raps-k")
    allow_empty: bool = option(False, "Keep empty sets (default: an empty set gets the top "
                               "label).")
    idk: bool = option(False, "Add an \"I don't know\" option.", stages=("run",))
    nota: bool = option(False, "Add \"None of the above\".", stages=("run",))

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 0 < self.alpha < 1:
            raise ValueError(f"--alpha must be in (0, 1), got {self.alpha}")
        object.__setattr__(self, "scores", tuple(self.scores))
        if self.seeds is not None:
            object.__setattr__(self, "seeds", tuple(self.seeds))
        bad = [s for s in self.scores if s not in SCORES]
        if bad:
            raise ValueError(f"unknown score(s) {bad}; choose from {', '.join(SCORES)}")
        if not self.scores:
            raise ValueError("--scores is empty")
        if self.protocol not in PROTOCOLS:
            raise ValueError(f"unknown protocol {self.protocol!r}; choose from "
                             f"{', '.join(PROTOCOLS)}")
        if self.input not in INPUT_KINDS:
            raise ValueError("--input must be logits, logprobs or probs")
        if self.precision not in PRECISIONS:
            raise ValueError("--precision must be float32 or float64")
