"""Every option of the diagnose suite, declared once: its scoring (record files, run folders,
the authors' ``latest.json``) and its live run (``confeval diagnose score`` / ``confeval
diagnose run`` take their flags from here)."""

from __future__ import annotations

import dataclasses

from ...taxonomy import MMERROR_LETTER_ORDER
from ..base import SuiteOptions, check_answer_mode
from ..options import MAX_BOOTSTRAP, Options, option

__all__ = ["DiagnosisChoice", "DiagnoseOptions", "PROTOCOL_TYPES"]

PROTOCOL_TYPES = {"etc": MMERROR_LETTER_ORDER[:4], "epd5": MMERROR_LETTER_ORDER,
                  "epd": MMERROR_LETTER_ORDER}
"""The answers each protocol offers: ETC the four error types; EPD (two-stage ``epd`` or
single-prompt ``epd5``) also "no error"."""


@dataclasses.dataclass(frozen=True)
class DiagnoseOptions(SuiteOptions):
    """Options of the diagnose suite: the ``protocol``; the record columns (gold type,
    predicted type or raw reply, domain, subdomain, item id; a live run fixes them to its
    records' layout); the random-guesser ``n_simulations``, the ``bootstrap`` resamples and
    their ``seed``; ``alpha`` of the conformal sets over the types (from recorded type
    probabilities); and a live run's ``answer`` mode, ``permute`` (seeded option orders),
    ``max_tokens`` of a generated reply and ``ablation``: also ask the question itself under
    the paper's four input conditions (items with an answer key). ``answer_judge`` (a model
    spec) judges the ablation answers whose key is free text (numbers and option letters are
    always checked strictly); it may not be the model under test unless ``self_judge``."""

    protocol: str = option("etc", "etc (types A-D), epd5 (A-E, E = no error) or epd "
                           "(two-stage: presence, then the type).")
    gold_col: str = option("gold_type", "Gold type (keys, the authors' labels or aliases).",
                           stages=("score",))
    pred_col: str | None = option("pred_type", "Predicted type key.", stages=("score",))
    reply_col: str | None = option(None, "Parse this raw reply column instead of --pred-col.",
                                   stages=("score",))
    domain_col: str | None = option("domain", "Domain column.", stages=("score",))
    subdomain_col: str | None = option("subdomain", "Subdomain column.", stages=("score",))
    id_col: str = option("item_id", "Item id (pairs ETC and EPD).", stages=("score",))
    human: str | None = option(None, "A human row: CSV/JSONL with domain,accuracy (domain "
                               "'total' for the Total), shown beside the baselines.",
                               stages=("score",))
    n_simulations: int = option(1000, "Random guessers simulated.", flag="--simulations",
                                minimum=0)
    alpha: float = option(0.1, "Miscoverage of the conformal sets over the types (from "
                          "recorded type probabilities).")
    seed: int = option(0, "Seed of every random step.")
    bootstrap: int = option(1000, "Bootstrap resamples for 95% intervals (0: none).",
                            minimum=0, maximum=MAX_BOOTSTRAP)
    answer: str = option("auto", "scored (option probabilities), generated (a parsed reply) "
                         "or auto (scored when the model can score exactly).", stages=("run",))
    permute: bool = option(False, "Seeded option order per item (letter bias).",
                           stages=("run",))
    max_tokens: int = option(256, "Generated reply limit.", stages=("run",), minimum=1)
    ablation: bool = option(False, "Also answer each question under the paper's four input "
                            "conditions (items with an answer key).", stages=("run",))
    answer_judge: str = option("", "A model that grades free-text ablation answers (numbers "
                               "and letters are always checked strictly).", stages=("run",))
    self_judge: bool = option(False, "Allow --answer-judge to be the model under test.",
                              stages=("run",))

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.protocol not in PROTOCOL_TYPES:
            raise ValueError(f"--protocol must be one of {', '.join(PROTOCOL_TYPES)}, "
                             f"got {self.protocol!r}")
        check_answer_mode(self.answer)
        if not 0 < self.alpha < 1:
            raise ValueError(f"--alpha must be in (0, 1), got {self.alpha}")


@dataclasses.dataclass(frozen=True)
class DiagnosisChoice(Options):
    """Which column holds the confidence of a diagnosis."""

    confidence_col: str | None = option(None, "Diagnose: the column with the confidence of "
                                        "each diagnosis (default confidence).",
                                        stages=("score",), short="-c")

    @property
    def column(self) -> str:
        return self.confidence_col or "confidence"
