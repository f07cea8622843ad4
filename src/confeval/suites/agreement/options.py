"""Options of ``confeval agreement``: a judge's scores against reference scores."""

from __future__ import annotations

import dataclasses

from ..options import MAX_BOOTSTRAP, MAX_RATINGS, FormatOptions, option

__all__ = ["AgreementOptions"]

_SCORE = ("score",)


@dataclasses.dataclass(frozen=True)
class AgreementOptions(FormatOptions):
    """Options of ``confeval agreement`` (the three columns are needed for confeval's own
    records; a judge's OpenAI-compatible responses read with ``--data`` bring
    ``parsed_score``, ``gt_score`` and ``s2_lp<rating>``)."""

    pred_col: str | None = option(None, "Column with the judge's score.", stages=_SCORE,
                                  short="-p")
    gt_col: str | None = option(None, "Column with the reference score.", stages=_SCORE,
                                short="-g")
    logprob_cols: str | None = option(None, "Score-token log-probability columns, lowest "
                                      "score first (comma list or glob, e.g. 's2_lp*').",
                                      stages=_SCORE)
    prob_cols: str | None = option(None, "Score probability columns instead of "
                                   "log-probabilities.", stages=_SCORE)
    min_score: int = option(1, "Lowest score of the scale (and of the first probability "
                            "column).", stages=_SCORE)
    max_score: int | None = option(None, "Highest score of the scale (default: one per "
                                   "probability column, else 5). Scores off the scale (a -1 "
                                   "'unparseable' marker, 7.5 on 1-5) are excluded and "
                                   "counted.", stages=_SCORE)
    bootstrap: int = option(1000, "Bootstrap resamples for 95% intervals (0: none).",
                            stages=_SCORE, minimum=0, maximum=MAX_BOOTSTRAP)
    seed: int = option(0, "Seed of the bootstrap.", stages=_SCORE)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.logprob_cols and self.prob_cols:
            raise ValueError("give --logprob-cols or --prob-cols, not both")
        if self.max_score is not None and self.max_score < self.min_score:
            raise ValueError(f"--max-score {self.max_score} is below --min-score "
                             f"{self.min_score}")
        if self.max_score is not None and self.max_score - self.min_score >= MAX_RATINGS:
            raise ValueError(f"--min-score {self.min_score} to --max-score {self.max_score}: "
                             f"at most {MAX_RATINGS} ratings (a judge's scale)")
