"""Every option of the measures suite, declared once: its scoring ((question, option) rows of a
file or a run folder) and its live run (``confeval measures score`` / ``confeval measures run``
take their flags from here), and the options of its threshold-based studies (``measures
thresholds``, ``noise``, ``compare``)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

from ..._validation import missing_model_folder
from ...measures import MEASURES
from .._seeds import format_seeds, parse_seed_tuple
from ..base import SuiteOptions
from ..options import MAX_BOOTSTRAP, IngestOptions, Options, option

__all__ = ["MEASURE_NAMES", "SIMILARITIES", "TIES", "CompareOptions", "MeasureChoice",
           "MeasuresOptions", "NoiseOptions", "StudyOptions", "ThresholdsOptions"]

MEASURE_NAMES = {column: measure.label for column, measure in MEASURES.items()}
"""Record column -> the measure's display name, from the one measures table
(:data:`confeval.measures.MEASURES`; higher = more confident for every column)."""

SIMILARITIES = ("auto", "jaccard", "jaccard,embedding")
TIES = ("average", "input-order")


@dataclasses.dataclass(frozen=True)
class MeasuresOptions(SuiteOptions, IngestOptions):
    """Options of the measures suite.

    Scoring: the measure columns (``measure_cols``, higher = more confident, and
    ``uncertainty_cols``, negated; neither: every column of :data:`MEASURE_NAMES` the rows
    have), ``correct_col`` and the question column ``group_col``; histogram-binning
    ``hb_bins`` fitted on a ``calibration_share`` of the questions, ``ece_bins``, ``rce_bins``,
    the question ``bootstrap`` and its ``seed``; ``ties="input-order"`` breaks AUARC ties by row
    order like UQ-NLG (reproductions only); ``csl_heads`` (0 = CSL over all heads; k > 0 = the
    top-k heads chosen on a seeded ``head_share`` of the questions, which then leave every
    reported metric). Live: ``samples`` per question for the black-box measures, their
    ``temperature`` and token limit ``sample_tokens``; ``similarity`` (``auto`` = Jaccard,
    plus embeddings when the encoder is installed); ``nli`` (a local NLI model folder)."""

    measure_cols: str | None = option(
        None, "Confidence columns, higher = more confident (comma list or glob; default: "
        "every known measure column the rows have).", stages=("score",))
    uncertainty_cols: str | None = option(
        None, "Columns where higher = less confident (e.g. perplexity); negated.",
        stages=("score",))
    correct_col: str = option("correct", "1 for the gold option, 0 otherwise.",
                              stages=("score",))
    group_col: str = option("question_id", "The question id (the unit resampled).",
                            stages=("score",))
    hb_bins: int = option(10, "Histogram-binning bins.", minimum=1, maximum=100_000)
    calibration_share: float = option(0.5, "Share of questions the binning is fitted on.")
    ece_bins: int = option(15, "ECE bins.", minimum=1)
    rce_bins: int = option(20, "Rank-calibration bins.", minimum=1)
    ties: str = option("average", "AUARC ties: average (over the orders of tied rows) or "
                       "input-order (row order, as UQ-NLG; for reproductions).")
    seed: int = option(0, "Seed of every random step.")
    bootstrap: int = option(1000, "Question resamples for 95% intervals (0: none).",
                            minimum=0, maximum=MAX_BOOTSTRAP)
    csl_heads: int = option(0, "CSL over the top-k heads chosen on held-out questions (0: all "
                            "heads).", minimum=0)
    head_share: float = option(0.3, "Share of questions used to choose CSL heads.")
    samples: int = option(20, "Sampled answers per question (black-box measures compare "
                          "them: 2 or more).", stages=("run",), minimum=2)
    temperature: float = option(1.0, "Sampling temperature (> 0, finite).", stages=("run",))
    sample_tokens: int = option(24, "Token limit of a sampled answer.", stages=("run",),
                                minimum=1)
    similarity: str = option("auto", "auto (Jaccard, plus embeddings when the encoder is "
                             "installed), jaccard, or jaccard,embedding.", stages=("run",))
    nli: str = option("", "A local NLI model folder (entailment/contradiction similarity).",
                      stages=("run",))

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.ties not in TIES:
            raise ValueError(f"--ties must be average or input-order, got {self.ties!r}")
        if not 0 < self.calibration_share < 1:
            raise ValueError("--calibration-share must be in (0, 1)")
        if not 0 < self.temperature < float("inf"):
            raise ValueError("--temperature must be > 0 and finite: the samples must differ, "
                             "and an infinite temperature is no distribution")
        if self.similarity not in SIMILARITIES:
            raise ValueError(f"--similarity must be one of {', '.join(SIMILARITIES)}")
        if not 0 < self.head_share < 1:
            raise ValueError("--head-share must be in (0, 1)")
        missing = missing_model_folder(self.nli) if self.nli else None
        if missing:  # said before any model is loaded
            raise ValueError(f"--nli: {missing}")


def _floats(option_flag: str) -> Callable[[str], tuple[float, ...]]:
    def parse(text: str) -> tuple[float, ...]:
        try:
            values = tuple(float(x) for x in text.split(",") if x.strip())
        except ValueError:
            values = ()
        if not values or not all(math.isfinite(v) for v in values):
            raise ValueError(f"{option_flag} must be a comma list of numbers, got "
                             f"{text!r}")
        return values
    return parse


def _show_floats(values) -> str:
    return ",".join(repr(float(v)) for v in values)


_STUDY = ("score",)


@dataclasses.dataclass(frozen=True)
class StudyOptions(Options):
    """The columns of MCQA-Eval's threshold-based studies (``confeval measures thresholds``,
    ``noise`` and ``compare``): sampled answers with the measures and a continuous
    correctness score."""

    measure_cols: str | None = option(None, "Confidence columns, higher = more confident.",
                                      stages=_STUDY)
    uncertainty_cols: str | None = option(None, "Columns where higher = less confident "
                                          "(negated).", stages=_STUDY)
    score_col: str = option("score", "Continuous correctness score in [0, 1] of each answer "
                            "(similarity to the reference, a judge's probability).",
                            stages=_STUDY)


@dataclasses.dataclass(frozen=True)
class ThresholdsOptions(StudyOptions):
    """Options of ``confeval measures thresholds``."""

    thresholds: tuple[float, ...] = option((0.5, 0.7, 0.9), "Thresholds tau: correct = "
                                           "score > tau.", stages=_STUDY,
                                           parse=_floats("--thresholds"), show=_show_floats)


@dataclasses.dataclass(frozen=True)
class NoiseOptions(StudyOptions):
    """Options of ``confeval measures noise``."""

    threshold: float = option(0.5, "correct = noisy score > this.", stages=_STUDY)
    sigmas: tuple[float, ...] = option((0.0, 0.5, 1.0, 2.0), "Noise levels sigma (Eq. 7).",
                                       stages=_STUDY, parse=_floats("--sigmas"),
                                       show=_show_floats)
    seeds: tuple[int, ...] = option(tuple(range(1, 11)), "Seeds of the noise, e.g. 1-10.",
                                    stages=_STUDY, parse=parse_seed_tuple, show=format_seeds)
    eps: float = option(1e-3, "Scores are clipped to [eps, 1 - eps] before the logit.",
                        stages=_STUDY)


@dataclasses.dataclass(frozen=True)
class CompareOptions(StudyOptions):
    """Options of ``confeval measures compare``: the MCQA-Eval rows' ``correct_col`` and
    question ``group_col`` (shared by the sampled answers), and the sampled answers'
    ``threshold``."""

    correct_col: str = option("correct", "The MCQA-Eval rows' correctness column.",
                              stages=_STUDY)
    group_col: str = option("question_id", "The question column of both files.",
                            stages=_STUDY)
    threshold: float = option(0.5, "correct = score > this, for the sampled answers.",
                              stages=_STUDY)


@dataclasses.dataclass(frozen=True)
class MeasureChoice(Options):
    """Which measure ranks the options (the decision's confidence)."""

    confidence_col: str | None = option(None, "Measures: the measure column that picks each "
                                        "question's option and is its confidence (default "
                                        "sl).", stages=("score",), short="-c")

    @property
    def measure(self) -> str:
        return self.confidence_col or "sl"
