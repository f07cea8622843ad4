"""``confeval judge mean``: the mean human score of every item of a file, from a judge's score
on each item and human scores on a few — corrected for the judge's error by PPI and PPI++
(:mod:`confeval.judge`).

The file (CSV, JSONL or Parquet, read by :class:`~confeval.records.RecordSet`) has a judge
column and a human column; a row whose human cell is empty is **unlabelled** (ppi_py's
unlabelled set), a row with a human score **labelled**. Rows are excluded and counted, never
dropped silently: no judge score (``missing_judge_score``), a judge score that is no number
(``non_numeric_judge_score``, ``non_finite_judge_score``) or off the judge's scale
[``--min-score``, ``--max-score``] (``judge_score_off_scale``: a -1 "unparseable" marker), a
human score that is no number (``non_numeric_human_score``, ``non_finite_human_score``) or off
the scale (``human_score_off_scale``, also said in ``warnings``), and with ``--group-col`` a
row without a group (``missing_group``). What cannot be estimated is one error naming the file:
no labelled row, one labelled row (no variance, so no interval), no unlabelled row (PPI is then
the classical estimate; the error gives it).

The result, ``{"mean": RESULT}`` under ``--json``::

    {"source", "n_read", "n_used", "excluded", "flagged", "judge_col", "human_col",
     "scale": [lo, hi], "alpha", "level", "n_labelled", "n_unlabelled", "judge_mean",
     "methods": {"classical" | "ppi" | "ppi++": {"estimate", "low", "high", "width", "se",
                                                   "lambda", "n_labelled", "n_unlabelled",
                                                   "level", ["note"]}},
     "warnings": [...],
     ["groups": {GROUP: {"n_labelled", "n_unlabelled", "level", "judge_mean",
                         "methods": {...}} or {..., "skipped": WHY}}],
     ["labels_needed": {"target_width", "level", "n_items", "n_labelled_now", "classical",
                        "classical_reachable", "ppi++", "lambda_at_plan", "sd_human",
                        "sd_judge", "correlation"}],
     ["kept_labels": {"kept", "hidden", "seed", "human_mean_all_labelled", "covered"}]}

``low``/``high`` are ``null`` where the standard error is zero (``note`` says why), never a
zero-width interval.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..suites.options import Options, build, option, to_json

if TYPE_CHECKING:
    from ..records import RecordSet

__all__ = ["COMMAND", "JudgeMeanOptions", "judge_mean_file", "judge_mean_metrics",
           "judge_mean_records", "judge_mean_run_config", "judge_mean_section",
           "read_judge_and_human", "rerun_judge_mean"]

COMMAND = "judge mean"
"""The command's name in a run folder's ``run.json`` (``confeval rerun`` repeats it)."""

_SCORE = ("score",)


@dataclasses.dataclass(frozen=True)
class JudgeMeanOptions(Options):
    """Options of ``confeval judge mean``."""

    judge_col: str = option(dataclasses.MISSING, "Column with the judge's score of every "
                            "item.", stages=_SCORE)
    human_col: str = option(dataclasses.MISSING, "Column with the human score; an empty cell "
                            "marks an unlabelled item.", stages=_SCORE)
    alpha: float = option(0.1, "Miscoverage of the two-sided intervals (level 1 - alpha).",
                          stages=_SCORE)
    min_score: float = option(1.0, "Lowest score of the judge's scale: judge and human "
                              "scores off the scale are excluded and counted.", stages=_SCORE)
    max_score: float = option(5.0, "Highest score of the judge's scale.", stages=_SCORE)
    group_col: str | None = option(None, "Column naming each item's group: the three "
                                   "estimates within each group too.", stages=_SCORE)
    target_width: float | None = option(None, "An interval width (high - low) wanted: how "
                                        "many human labels the classical estimate and PPI++ "
                                        "need for it.", stages=_SCORE)
    keep_labels: int | None = option(None, "Keep the human scores of this many random "
                                     "labelled rows and treat the other labelled rows as "
                                     "unlabelled: what so few labels would give, beside the "
                                     "mean of all the human scores.", stages=_SCORE,
                                     minimum=2)
    seed: int = option(0, "Seed of --keep-labels' draw.", stages=_SCORE)

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 0 < self.alpha < 1:
            raise ValueError(f"--alpha must be in (0, 1), got {self.alpha:g}")
        if not self.min_score < self.max_score:
            raise ValueError(f"--max-score {self.max_score:g} must be above --min-score "
                             f"{self.min_score:g}")
        if self.target_width is not None and not self.target_width > 0:
            raise ValueError(f"--target-width must be positive, got {self.target_width:g}")
        if self.judge_col == self.human_col:
            raise ValueError(f"--judge-col and --human-col are both {self.judge_col!r}: name "
                             "two columns")


def _scale_text(options: JudgeMeanOptions) -> str:
    return f"{options.min_score:g}-{options.max_score:g}"


def _read(rs: RecordSet, options: JudgeMeanOptions) -> tuple[np.ndarray, np.ndarray]:
    """The judge's and the human scores of the usable rows (human NaN: unlabelled), the rest
    excluded and counted by reason."""
    lo, hi = options.min_score, options.max_score
    judge = rs.numeric([options.judge_col], what="judge_score")[:, 0]
    with np.errstate(invalid="ignore"):
        rs.exclude((judge < lo) | (judge > hi), "judge_score_off_scale")
    human = rs.numeric([options.human_col], what="human_score", allow_missing=True)[:, 0]
    with np.errstate(invalid="ignore"):
        rs.exclude((human < lo) | (human > hi), "human_score_off_scale")
    keep = rs.mask
    return judge[keep], human[keep]


def read_judge_and_human(rs: RecordSet, options: JudgeMeanOptions
                         ) -> tuple[np.ndarray, np.ndarray]:
    """The judge's and the human scores of the rows ``judge mean`` uses (human NaN:
    unlabelled), the rest excluded from ``rs`` and counted as ``judge mean`` counts them."""
    return _read(rs, options)


def _no_estimate(rs: RecordSet, options: JudgeMeanOptions, judge: np.ndarray,
                 human: np.ndarray) -> None:
    """One error naming the file when the labelled or unlabelled rows cannot give a mean."""
    from ..judge import classical_mean

    labelled = ~np.isnan(human)
    n, big_n = int(labelled.sum()), int((~labelled).sum())
    excluded = rs.excluded
    detail = ", ".join(f"{k} {v:,}" for k, v in excluded.items()) or "none"
    off = excluded.get("human_score_off_scale", 0)
    if n == 0 and off:
        raise ValueError(f"{rs.source}: every human score left ({off:,}) is off the judge's "
                         f"scale {_scale_text(options)} (--min-score, --max-score): are the "
                         "human scores on another scale? No labelled item remains "
                         f"(excluded: {detail})")
    if n == 0:
        raise ValueError(f"{rs.source}: no labelled items: no row with a judge score has a "
                         f"human score in {options.human_col!r} (excluded: {detail})")
    if n == 1:
        raise ValueError(f"{rs.source}: one labelled item: no variance can be estimated from "
                         "one human score, so no interval; label at least two (excluded: "
                         f"{detail})")
    if big_n == 0:
        c = classical_mean(human[labelled], options.alpha)
        shown = (f"{c.estimate:.4f} [{c.low:.4f}, {c.high:.4f}]" if c.note is None
                 else f"{c.estimate:.4f} ({c.note})")
        raise ValueError(f"{rs.source}: no unlabelled items (every one of the {n:,} rows with "
                         "a judge score has a human score): PPI is then the classical "
                         "estimate, the mean of the human scores: "
                         f"{shown} at level {1 - options.alpha:g}")


def judge_mean_records(rs: RecordSet, options: JudgeMeanOptions) -> dict:
    """The corrected mean of one input's records (the module docstring's ``RESULT``)."""
    from ..judge import corrected_mean, corrected_mean_by_group, labels_needed

    every_group = rs.groups(options.group_col) if options.group_col else None
    judge, human = _read(rs, options)
    groups = every_group[rs.mask] if every_group is not None else None
    kept = None
    if options.keep_labels is not None:
        human, kept = _keep_labels(rs, human, options)
    _no_estimate(rs, options, judge, human)
    labelled = ~np.isnan(human)
    y, f, fu = human[labelled], judge[labelled], judge[~labelled]
    res = corrected_mean(y, f, fu, options.alpha)
    out: dict[str, Any] = {
        **rs.summary(), "judge_col": options.judge_col, "human_col": options.human_col,
        "scale": [options.min_score, options.max_score], "alpha": options.alpha,
        **res.to_dict()}
    out["warnings"] = [f"{name}: {m.note}" for name, m in res.methods.items() if m.note]
    off = rs.excluded.get("human_score_off_scale", 0)
    if off:   # excluded and counted, and said: a human scale other than the judge's?
        out["warnings"].append(f"{off:,} human score(s) off the judge's scale "
                               f"{_scale_text(options)} excluded (--min-score, --max-score)")
    if groups is not None:
        by_group = corrected_mean_by_group(y, f, groups[labelled], fu, groups[~labelled],
                                           options.alpha)
        out["groups"] = {g: r.to_dict() for g, r in by_group.items()}
        skipped = [g for g, r in by_group.items() if r.skipped]
        if skipped:
            out["warnings"].append(f"{len(skipped)} group(s) not estimated (see each "
                                   f"group's 'skipped'): {', '.join(skipped)}")
    if options.target_width is not None:
        plan = labels_needed(y, f, fu, options.target_width, options.alpha)
        out["labels_needed"] = plan.to_dict()
    if kept is not None:
        kept["covered"] = {name: (m.low <= kept["human_mean_all_labelled"] <= m.high)
                           if m.note is None else None for name, m in res.methods.items()}
        out["kept_labels"] = kept
    return out


def _keep_labels(rs: RecordSet, human: np.ndarray, options: JudgeMeanOptions
                 ) -> tuple[np.ndarray, dict]:
    """``human`` with all but ``keep_labels`` random labelled rows made unlabelled (seeded),
    and what was hidden."""
    labelled = np.flatnonzero(~np.isnan(human))
    k = options.keep_labels
    if k >= labelled.size:
        raise ValueError(f"{rs.source}: --keep-labels {k:,} keeps every labelled row: it has "
                         f"{labelled.size:,}; keep fewer to hide some")
    rng = np.random.default_rng(options.seed)
    kept = rng.choice(labelled, size=k, replace=False)
    hidden = human.copy()
    hidden[np.setdiff1d(labelled, kept)] = np.nan
    return hidden, {"kept": k, "hidden": int(labelled.size - k), "seed": options.seed,
                    "human_mean_all_labelled": float(human[labelled].mean())}


def judge_mean_file(path: str | Path, options: JudgeMeanOptions) -> dict:
    """:func:`judge_mean_records` of the file (or run folder's records) at ``path``."""
    from ..records import RecordSet

    return judge_mean_records(RecordSet.read(path), options)


def judge_mean_section(results: Mapping[str, dict]) -> dict:
    """The report section of the results (by input name)."""
    return {"kind": "judge_mean", "title": "The mean human score, corrected for the judge "
                                           "(classical, PPI, PPI++)",
            "name_header": "file", "results": dict(results)}


def judge_mean_metrics(results: Mapping[str, dict]) -> dict:
    """The ``metrics.json`` of a ``judge mean`` folder."""
    return {"title": f"confeval {COMMAND}", "simulated": False,
            "sections": [judge_mean_section(results)]}


def judge_mean_run_config(path: str | Path, options: JudgeMeanOptions) -> dict:
    """The ``run.json`` config: the working directory, the input with its SHA-256 and every
    option — what ``confeval rerun`` needs to repeat it."""
    import os

    from ..runs import file_sha256

    return {"command": COMMAND, "cwd": os.getcwd(),
            "inputs": [{"path": str(path), "sha256": file_sha256(path)}],
            "options": to_json(options)}


def rerun_judge_mean(config: Mapping[str, Any]) -> dict:
    """The metrics of a ``judge mean`` folder computed again from its ``run.json``."""
    from .score import check_unchanged

    options = build(JudgeMeanOptions, config.get("options") or {}, what=f"confeval {COMMAND}")
    results = {}
    for entry in config.get("inputs") or []:
        found = check_unchanged(config, entry["path"], entry.get("sha256"))
        results[entry["path"]] = judge_mean_file(found, options)
    return judge_mean_metrics(results)
