"""Inputs of the intervals suite: judge record files -> rating-token log-probability features,
human scores and groups; judge datasets -> items for a live run.

Record files (``confeval intervals score``): per item the judge's log-probabilities of the K
rating tokens (columns named by a glob or comma list, lowest rating first; several patterns,
one per judge, fuse judges), the human score, optionally the judge's parsed score and a group
column. ``--join FILE:KEY[:PREFIX]`` attaches another file's columns by a key first. A human
score off the scale is excluded and counted (``unknown_gt_score``); a missing (NaN) log-prob is
set to ``floor`` and counted (``floored_values``).

Datasets (``confeval intervals run --data``): ``builtin:arith-judge`` or a JSONL/CSV/Parquet
file with ``question``, ``response`` (the answer to grade), ``gt_score`` (the human grade,
1-5) and optionally ``item_id``, ``reference`` (a reference answer shown to the judge) and any
other columns (e.g. ``task``), which are carried into the records.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ...parse import DEFAULT_FLOOR
from ...records import RecordsError, RecordSet
from .._judge import load_judge_items
from .options import IntervalsOptions

__all__ = ["GROUP_MAPS", "PAPER_DIFFICULTY", "IntervalsInputs", "join_records",
           "judge_columns", "load_judge_items", "read_intervals", "read_intervals_records"]

PAPER_DIFFICULTY = {
    # The VLM-judge paper's task groups (fixed on a pilot split by R2CCP width).
    "AesBench": "easy", "mm-vet": "easy", "WIT": "easy", "coco": "easy",
    "mind2web": "medium", "Concept Caption": "medium", "textVQA": "medium",
    "llava_bench": "medium", "VisitBench": "medium", "ChartQA": "medium",
    "ScienceQA": "hard", "mathvista": "hard", "diffusiondb": "hard", "infographicsVQA": "hard",
}
"""``orig_dataset`` -> easy / medium / hard, as in the paper's Mondrian experiment."""

GROUP_MAPS = {"paper-difficulty": PAPER_DIFFICULTY}
"""``--group-map`` name -> mapping applied to the group column's values."""


@dataclass
class IntervalsInputs:
    """What :func:`confeval.suites.intervals.scoring.score_intervals` takes, from one file."""

    features: np.ndarray      # (n, J * K) log-probs, NaN replaced by the floor
    truth: np.ndarray         # (n,) human scores, each one of ``levels``
    levels: np.ndarray        # (K,)
    parsed: np.ndarray | None  # (n,) the judge's parsed score (NaN where unparseable)
    groups: np.ndarray | None  # (n,) group names
    n_judges: int
    floored_values: int
    records: RecordSet


def join_records(rs: RecordSet, spec: str) -> RecordSet:
    """Attach the columns of another record file by a key column (``FILE:KEY``), or all of
    them renamed with a prefix (``FILE:KEY:PREFIX``, e.g. a second judge's log-probs)."""
    prefix = ""
    if spec.count(":") >= 2:
        path, key, prefix = spec.rsplit(":", 2)
    else:
        path, _, key = spec.rpartition(":")
    if not path or not key:
        raise ValueError(f"--join {spec!r}: use FILE:KEY or FILE:KEY:PREFIX")
    other = RecordSet.read(Path(path))
    for side, table in (("records", rs), (path, other)):
        if key not in table.frame.columns:
            raise RecordsError(f"--join: key column {key!r} not in {side}")
    table = other.frame.drop(columns=["_row"])
    # a key listed twice with different values: the first row is used, and it is counted
    conflicting = int((table.drop_duplicates().duplicated(subset=[key])).sum())
    extra = table.drop_duplicates(subset=[key])
    if prefix:
        extra = extra.rename(columns={c: f"{prefix}{c}" for c in extra.columns if c != key})
    new_cols = [c for c in extra.columns if c == key or c not in rs.frame.columns]
    merged = rs.frame.merge(extra[new_cols], on=key, how="left", validate="many_to_one",
                            indicator=True)
    missing = int((merged.pop("_merge") == "left_only").sum())
    joined = RecordSet(merged, rs.source, rs.problems, dict(rs.notes))
    joined.exclude(~rs.mask, "excluded_before_join")  # keep earlier exclusions
    joined.notes[f"join {spec}"] = {"rows_without_match": missing,
                                    "conflicting_duplicate_keys": conflicting}
    return joined


def judge_columns(rs: RecordSet, spec: str) -> tuple[list[str], int]:
    """All log-prob columns and K, the ratings per judge: each comma-separated pattern is one
    judge (a single pattern may match the K columns of one judge)."""
    groups = [rs.columns(p, what="logprob column") for p in spec.split(",") if p.strip()]
    if not groups:
        raise ValueError("--logprob-cols is empty")
    k = len(groups[0])
    if any(len(g) != k for g in groups):
        raise ValueError("--logprob-cols: every judge needs the same number of rating columns; "
                         f"got {[len(g) for g in groups]}")
    return [c for g in groups for c in g], k


def read_intervals_records(rs: RecordSet, *, logprob_cols: str = "s2_lp*",
                           label_col: str = "gt_score", pred_col: str | None = None,
                           min_score: int = 1, floor: float = DEFAULT_FLOOR,
                           group_col: str | None = None, group_map: str | None = None,
                           join: tuple[str, ...] = (), with_truth: bool = True
                           ) -> IntervalsInputs:
    """Validated features, scores and groups of the usable rows of ``rs`` (module docstring);
    ``with_truth=False`` reads new items without a human score (``truth`` all NaN)."""
    if group_map is not None and group_map not in GROUP_MAPS:
        raise ValueError(f"unknown --group-map {group_map!r}; choose from "
                         f"{', '.join(GROUP_MAPS)}")
    for spec in join:
        rs = join_records(rs, spec)
    cols, k = judge_columns(rs, logprob_cols)
    levels = np.arange(min_score, min_score + k, dtype=float)
    lp = rs.numeric(cols, what="logprob", hi=0.0, allow_missing=True)
    # a row without a single rating log-prob (an unparseable reply) is no judge output: the
    # floor would turn it into a flat distribution
    rs.exclude(np.isnan(lp).all(axis=1) & rs.mask, "missing_logprobs")
    truth = rs.labels(label_col, allowed=[int(v) for v in levels], what="gt_score") \
        if with_truth else np.full(len(rs.frame), np.nan)
    group_text = None
    if group_col:
        group_text = rs.groups(group_col)
        if group_map:
            mapped = pd.Series(group_text).map(GROUP_MAPS[group_map])
            rs.exclude((mapped.isna() & pd.Series(rs.mask)).to_numpy(), "unmapped_group")
            group_text = mapped.fillna("").astype(str).to_numpy()
    keep = rs.mask
    features = lp[keep]
    n_floored = int(np.isnan(features).sum())
    features = np.where(np.isnan(features), floor, features)
    groups = None if group_text is None else group_text[keep]
    parsed = None
    if pred_col:
        # an unparseable judge score (text, -1) only drops the item from point metrics
        parsed = pd.to_numeric(rs.frame.loc[keep, rs.columns([pred_col])[0]],
                               errors="coerce").to_numpy(np.float64)
    return IntervalsInputs(features, truth[keep].astype(float), levels, parsed, groups,
                           len(cols) // k, n_floored, rs)


def read_intervals(rs: RecordSet, options: IntervalsOptions, *,
                   with_truth: bool = True) -> IntervalsInputs:
    """:func:`read_intervals_records` with the suite's options: how scoring, comparing and
    certifying all read a record set."""
    return read_intervals_records(
        rs, logprob_cols=options.logprob_cols, label_col=options.label_col,
        pred_col=options.pred_col, min_score=options.min_score, floor=options.floor,
        group_col=options.group_col, group_map=options.group_map, join=options.join,
        with_truth=with_truth)
