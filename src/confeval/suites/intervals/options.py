"""Every option of the intervals suite, declared once: its scoring (record files and run
folders) and its live run (``confeval intervals score`` / ``confeval intervals run`` take their
flags from here)."""

from __future__ import annotations

import dataclasses

from ...conformal.names import BASE_MODELS, INTERVAL_METHOD_NAMES, SCORES
from ...parse import DEFAULT_FLOOR
from .._seeds import format_seeds, parse_seed_tuple, parse_seeds
from ..base import SuiteOptions, check_answer_mode
from ..options import MAX_RATINGS, FormatOptions, option

__all__ = ["DEFAULT_METHODS", "IntervalsOptions", "LIVE_METHODS", "parse_methods"]

DEFAULT_METHODS = ("naive", "cqr", "asym_cqr", "chr", "lvd", "boosted_cqr", "boosted_lcp", "r2ccp",
                   "ordinal_aps", "lac", "aps", "raps_randomized")
"""The paper's nine interval methods, then our label-set methods."""

LIVE_METHODS = ("naive", "lvd", "ordinal_aps", "lac", "aps")
"""Cheap enough for a few hundred live items; ``confeval intervals score`` runs them all."""


def parse_methods(text: str) -> tuple[str, ...]:
    """``"all"`` or a comma list of method names."""
    if str(text).strip() == "all":
        return DEFAULT_METHODS
    return tuple(m.strip() for m in str(text).split(",") if m.strip())


def _sweep(text: str | None) -> tuple[int, ...] | None:
    seeds = parse_seeds(text, option="--seed-sweep")
    return None if seeds is None else tuple(seeds)


@dataclasses.dataclass(frozen=True)
class IntervalsOptions(SuiteOptions, FormatOptions):
    """Options of the intervals suite (see
    :func:`~confeval.suites.intervals.scoring.score_intervals` for the scoring ones; a live
    run fixes the column options to its records' layout)."""

    logprob_cols: str = option(
        "s2_lp*", "Rating-token log-prob columns, lowest rating first. Several "
        "comma-separated patterns (one per judge, K columns each) fuse the judges' features.",
        stages=("score",))
    label_col: str = option("gt_score", "Human score.", stages=("score",))
    pred_col: str | None = option(None, "The judge's parsed score (adds point metrics).",
                                  stages=("score",))
    min_score: int = option(1, "Rating of the first column.", stages=("score",))
    max_score: int = option(5, "Highest rating (a judge's replies read from OpenAI-compatible "
                            "responses: the scale is --min-score to --max-score; record files "
                            "have one column per rating).", stages=("score",))
    floor: float = option(DEFAULT_FLOOR, "Log-prob for missing (NaN) rating tokens (default "
                          "ln 1e-5).", stages=("score",))
    group_col: str | None = option(None, "Break every metric down by this column.",
                                   stages=("score",))
    group_map: str | None = option(
        None, "Map group values first: 'paper-difficulty' (the VLM-judge paper's "
        "easy/medium/hard task groups).", stages=("score",))
    join: tuple[str, ...] = option(
        (), "FILE:KEY — attach the columns of FILE to the records by KEY (e.g. "
        "error_analysis.csv:sample_id for the task category); repeatable.",
        stages=("score",), multiple=True)
    methods: tuple[str, ...] = option(
        DEFAULT_METHODS, "all, or a comma list: naive, cqr, asym_cqr, chr, lvd, boosted_cqr, "
        "boosted_lcp, r2ccp, ordinal_aps (intervals); lac, aps, raps_randomized, ... (rating "
        "sets).", parse=parse_methods, show=",".join, run_default=",".join(LIVE_METHODS))
    seeds: tuple[int, ...] = option(tuple(range(1, 11)), "Splits, e.g. 1-10.",
                                    parse=parse_seed_tuple, show=format_seeds,
                                    run_default="1-5")
    alpha: float = option(0.1, "Miscoverage: intervals cover with probability >= 1-alpha.")
    base: str | None = option(None, "Override every method's base model: gbr, hgb, linear or "
                              "rf (default: each method's own, as documented).")
    paper_protocol: bool = option(
        False, "Run CHR and the boosted methods as the VLM-judge paper did (uncalibrated CHR; "
        "fit and calibrate on the same rows): reproduces its tables, loses the guarantee.")
    cal_fraction: float = option(0.5, "Calibration share of each split (the paper: 0.5).")
    seed_sweep: tuple[int, ...] | None = option(
        None, "e.g. 5,10,20: also report every method over the first k seeds (needs that "
        "many --seeds).", parse=_sweep, show=format_seeds)
    mondrian: bool = option(False, "Calibrate per group of --group-col.", stages=("score",))
    separately: bool = option(False, "Run the whole analysis on each group of --group-col on "
                              "its own (the paper's per-task Table 3).", stages=("score",))
    max_tokens: int = option(160, "Reply length limit (generated mode).", stages=("run",),
                             minimum=1)
    answer: str = option("auto", "scored (exact rating scores), generated (a reply's "
                         "rating-token log-probs) or auto (--method decides).",
                         stages=("run",))

    def __post_init__(self) -> None:
        super().__post_init__()
        methods = parse_methods(self.methods) if isinstance(self.methods, str) \
            else tuple(self.methods)
        seeds = parse_seed_tuple(self.seeds) if isinstance(self.seeds, str) \
            else tuple(self.seeds)
        sweep = _sweep(self.seed_sweep) if isinstance(self.seed_sweep, str) \
            else None if self.seed_sweep is None else tuple(self.seed_sweep)
        object.__setattr__(self, "methods", methods)
        object.__setattr__(self, "seeds", seeds or (1,))
        object.__setattr__(self, "seed_sweep", sweep)
        object.__setattr__(self, "join", tuple(self.join))
        check_answer_mode(self.answer)
        if not 0 < self.alpha < 1:
            raise ValueError(f"--alpha must be in (0, 1), got {self.alpha}")
        if not 0 < self.cal_fraction < 1:
            raise ValueError("--cal-fraction must be in (0, 1)")
        unknown = [m for m in self.methods
                   if m not in INTERVAL_METHOD_NAMES and m not in SCORES]
        if unknown:
            raise ValueError(f"unknown method(s) {unknown}; interval methods: "
                             f"{', '.join(INTERVAL_METHOD_NAMES)}; label-set methods: "
                             f"{', '.join(SCORES)}")
        if not self.methods:
            raise ValueError("--methods is empty: name at least one method, or all")
        if self.base is not None and self.base not in BASE_MODELS:
            raise ValueError(f"--base must be one of {', '.join(BASE_MODELS)}, got "
                             f"{self.base!r}")
        if self.max_score < self.min_score:
            raise ValueError(f"--max-score {self.max_score} is below --min-score "
                             f"{self.min_score}")
        if self.max_score - self.min_score >= MAX_RATINGS:
            raise ValueError(f"--min-score {self.min_score} to --max-score {self.max_score}: "
                             f"at most {MAX_RATINGS} ratings (a judge's scale)")
        if self.mondrian and not self.group_col:
            raise ValueError("--mondrian needs --group-col")
        if self.separately and not self.group_col:
            raise ValueError("--separately needs --group-col")
