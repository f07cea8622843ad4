"""``confeval guarantee apply``: a policy applied to new records — each marked answer, abstain
or excluded — and whether its promise still applies to them, written once against the suite
object.

A certified threshold promises its error for new items *exchangeable* with the calibration
items. ``policy.json`` keeps a bounded summary of the calibration confidences
(:func:`confeval.verbs.guarantee.validity_summary`), and every application tests the new
confidences against it (:mod:`confeval.verbs.promise`: one file by a two-sample test, several
files or a folder as a stream by the conformal test martingale). Where the records carry the
correctness the policy was certified with (on some rows or all), the promise itself is watched:
an anytime-valid confidence sequence of the realised error among the answered items, with an
alarm when its lower bound reaches the target (:func:`confeval.validity.monitor_risk`). A
policy written before confeval stored the summary cannot be checked: ``validity.holds`` is null
and the sentence says to write the policy again.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..suites import SUITES
from ..suites.options import to_json
from .guarantee import policy_options, ranked_finite, read_policy
from .promise import (
    Observed,
    ValidityOptions,
    batch_files,
    check_validity,
    distributions,
    unchecked,
    watch_risk,
)
from .score import load

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Applied", "ValidityOptions", "apply_batches", "apply_policy", "apply_run_config",
           "apply_section", "batch_files", "like_calibration", "rerun_apply"]

@dataclasses.dataclass
class _Batch:
    """One file decided: the records with their decisions, the counts, the confidence of
    each decided row (file order; a measure's may be infinite) and its row, and the labelled
    decisions (confidence, correctness) or why there are none."""

    path: Path
    frame: pd.DataFrame
    counts: dict
    confidence: np.ndarray
    rows: np.ndarray
    labelled: tuple[np.ndarray, np.ndarray] | None
    no_labels: str | None


def _decide(doc: Mapping[str, Any], path: Path, policy_path: str | Path) -> _Batch:
    from ..records import ROW_COLUMN

    suite = SUITES[doc["applies_to"]["suite"]]
    decision = suite.decision()
    try:
        suite_options, choice = policy_options(doc, suite)
    except ValueError as exc:
        raise ValueError(f"{policy_path}: {exc}") from None
    rs = load(suite, path, suite_options)
    conf = decision.confidence(rs, suite_options, choice)
    threshold = doc["threshold"]
    answer = np.zeros(len(rs.frame), bool) if threshold is None else \
        rs.mask & (np.nan_to_num(conf, nan=-np.inf) >= threshold)
    frame = rs.frame.drop(columns=[ROW_COLUMN]).copy()
    frame["confidence_used"] = np.where(rs.mask, conf, np.nan)
    decided = np.where(answer, "answer", "abstain")
    if decision.one_per_group:   # one row per group is decided on
        decided = np.where(np.isnan(conf), "not_chosen", decided)
    frame["decision"] = np.where(~rs.mask, "excluded", decided)
    frame["excluded_reason"] = rs.row_reasons()
    counts = {"n_read": rs.n_read, "answer": int(answer.sum()),
              "abstain": int((rs.mask & ~answer & ~np.isnan(conf)).sum()),
              "excluded": dict(rs.excluded), "threshold": threshold}
    rows = np.flatnonzero(rs.mask & ~np.isnan(conf))
    labelled, why = _labels(doc, suite, suite_options, choice, rs)
    return _Batch(Path(path), frame, counts, conf[rows], rows, labelled, why)


def _labels(doc: Mapping[str, Any], suite, options, choice, rs
            ) -> tuple[tuple[np.ndarray, np.ndarray] | None, str | None]:
    """The decisions whose correctness the records carry, read as the calibration was
    (``decision.calibrate``; a loss column flipped), or None and why not. Read after the
    decisions are made: calibrating excludes the unlabelled rows."""
    try:
        decided = suite.decision().calibrate(rs, options, choice)
    except ValueError as exc:   # no correctness column: records without labels
        return None, str(exc)
    correct = np.asarray(decided.correct, dtype=np.float64)
    if doc.get("risk_measure") == "loss":
        correct = 1.0 - correct
    if not correct.size:
        return None, "no row carries a label"
    return (ranked_finite(decided.confidence), correct), None


def apply_policy(policy_path: str | Path, records: str | Path) -> tuple[pd.DataFrame, dict]:
    """(the records with a ``decision`` column — ``answer``, ``abstain``, ``not_chosen`` (a
    decision that picks one row per group: the others) or ``excluded`` where the confidence
    cannot be read, with its reason in ``excluded_reason`` — and the counts). Only the
    confidence is read, by the suite's loader and decision with the policy's options; a
    policy certifying nothing abstains on all. :func:`apply_batches` also checks the
    promise."""
    batch = _decide(read_policy(policy_path), Path(records), policy_path)
    return batch.frame, batch.counts


@dataclasses.dataclass
class Applied:
    """A policy applied to one or more files: the records with their decisions (a ``batch``
    column naming the file when several), the counts over all, each file's counts, the
    validity check (the command's ``validity`` document) and the files of a folder skipped."""

    frame: pd.DataFrame
    counts: dict
    batches: list[dict]
    validity: dict
    skipped: list[str]
    distributions: dict | None = None


def apply_batches(policy_path: str | Path, records: Sequence[str | Path],
                  options: ValidityOptions | None = None) -> Applied:
    """Apply a policy to ``records`` (one file, several, or a folder of them: a stream, in
    order) and check its promise (module docstring).

    Returns
    -------
    Applied
        ``validity`` holds ``p_value``, ``holds`` (true: no evidence of a shift at
        ``alpha``; false: the promise is void; null: the policy stores no calibration
        summary), ``informative``, ``sentence``, ``checked_by`` (``batch`` or ``stream``),
        ``alpha``, ``n_calibration``, ``n_new``, ``batch`` (one file's two-sample test) or
        ``batches`` (each file's), ``stream`` (the martingale: ``alarm``, ``alarm_at`` with
        the file and row, ``p_value``, ``path`` thinned to at most 500 items), ``risk`` (with
        labels: the confidence sequence of the realised error and its alarm; else null) and
        ``note``.
    """
    import pandas as pd

    options = options or ValidityOptions()
    doc = read_policy(policy_path)
    files, skipped = batch_files(records)
    batches = [_decide(doc, path, policy_path) for path in files]
    several = len(batches) > 1
    frame = pd.concat([b.frame.assign(batch=str(b.path)) if several else b.frame
                       for b in batches], ignore_index=True)
    counts = _total([b.counts for b in batches])
    summary = doc.get("validity")
    validity = _validity(doc, summary, batches, options)
    return Applied(frame, counts, [{"file": str(b.path), **b.counts} for b in batches],
                   validity, skipped, _distributions(summary, batches))


def _total(counts: list[dict]) -> dict:
    excluded: dict[str, int] = {}
    for c in counts:
        for reason, k in c["excluded"].items():
            excluded[reason] = excluded.get(reason, 0) + k
    return {"n_read": sum(c["n_read"] for c in counts),
            "answer": sum(c["answer"] for c in counts),
            "abstain": sum(c["abstain"] for c in counts),
            "excluded": excluded, "threshold": counts[0]["threshold"]}


def like_calibration(conf: np.ndarray, calibration: np.ndarray) -> np.ndarray:
    """New confidences with an infinity placed as the calibration placed its own: the
    measures suite ranks +-inf just beyond its file's finite extremes, so the summary holds
    them as its largest (smallest) value; a new +inf ties with that value when it lies above
    every finite new confidence, else sits 1 above them (-inf alike). The tests compare ranks:
    a file applied to itself is then exactly its calibration (p = 1)."""
    conf = np.asarray(conf, dtype=np.float64)
    pos, neg = np.isposinf(conf), np.isneginf(conf)
    if not (pos.any() or neg.any()):
        return conf
    finite = conf[np.isfinite(conf)]
    out = conf.copy()
    if pos.any():
        high = float(finite.max()) if finite.size else float(calibration[-1])
        out[pos] = calibration[-1] if calibration[-1] > high else high + 1.0
    if neg.any():
        low = float(finite.min()) if finite.size else float(calibration[0])
        out[neg] = calibration[0] if calibration[0] < low else low - 1.0
    return out


def _validity(doc: Mapping[str, Any], summary: Any, batches: list[_Batch],
              options: ValidityOptions) -> dict:
    risk = _risk(doc, batches, options.alpha)
    if summary is None:
        out = unchecked("this policy stores no calibration summary (written by an earlier "
                        "confeval); write it again with `confeval guarantee --out` to test "
                        "new records against it",
                        sum(int(b.confidence.size) for b in batches), options.alpha)
        return {**out, "risk": risk}
    from ..validity import calibration_values

    values = calibration_values(summary)
    for b in batches:
        b.confidence = like_calibration(b.confidence, values)
    notes = ["the policy was calibrated on the steps of chains: the tests treat every step "
             "as one draw, so their level is approximate"] if summary.get("clustered") else []
    observed = [Observed(b.path, b.confidence, b.rows) for b in batches]
    return {**check_validity(summary, observed, options, notes=notes), "risk": risk}


def _risk(doc: Mapping[str, Any], batches: list[_Batch], alpha: float) -> dict | None:
    """The realised error among the answered, labelled items against the policy's target:
    null when no file carries labels; a joint-risk policy (crc) counts answered-and-wrong
    among all labelled items."""
    from ..validity import monitor_risk

    labelled = [b.labelled for b in batches if b.labelled is not None]
    if not labelled:
        return None
    conf = np.concatenate([c for c, _ in labelled])
    correct = np.concatenate([y for _, y in labelled])
    threshold, target = doc["threshold"], float(doc["target"])
    if doc["risk"] == "joint":
        answered = conf >= threshold if threshold is not None else np.zeros(conf.size, bool)
        monitor = monitor_risk(1.0 - answered * (1.0 - correct), target=target, alpha=alpha)
        what = "share of labelled items answered and wrong"
    elif threshold is None:
        return {"n_labelled": int(conf.size), "n_answered": 0, "alarm": None, "holds": True,
                "informative": False, "p_value": 1.0, "target": target, "alpha": alpha,
                "sentence": "nothing answered: the policy certifies no threshold"}
    else:
        monitor = monitor_risk(correct, target=target, alpha=alpha, confidence=conf,
                               threshold=threshold)
        what = "error among the answered, labelled items"
    return watch_risk(monitor, what, nothing=f"none of the {conf.size:,} labelled items "
                      "was answered")


def _distributions(summary: Any, batches: list[_Batch]) -> dict | None:
    """The calibration and new confidences on shared bins (the report's figure)."""
    if summary is None:
        return None
    from ..validity import calibration_values

    return distributions(calibration_values(summary),
                         np.concatenate([b.confidence for b in batches]))


def apply_section(policy_path: str | Path, applied: Applied) -> dict:
    """The report section of an application: one result, the policy's."""
    return {"kind": "validity", "title": "Does the promise still apply?",
            "results": {str(policy_path): {
                "counts": applied.counts, "batches": applied.batches,
                "validity": applied.validity, "distributions": applied.distributions}}}


def apply_run_config(policy_path: str | Path, files: Sequence[str | Path],
                     options: ValidityOptions) -> dict:
    """The ``run.json`` config of an application's report folder: the policy and every file
    applied to with their SHA-256, and the validity options — what ``confeval rerun`` needs."""
    import os

    from ..runs import file_sha256

    return {"command": "guarantee apply", "cwd": os.getcwd(),
            "policy": {"path": str(policy_path), "sha256": file_sha256(policy_path)},
            "inputs": [{"path": str(p), "sha256": file_sha256(p)} for p in files],
            "validity_options": to_json(options)}


def rerun_apply(config: Mapping[str, Any]) -> dict:
    """The metrics of an application's folder computed again from its ``run.json``."""
    from ..suites.options import build
    from .score import check_unchanged

    entry = config.get("policy") or {}
    policy_path = check_unchanged(config, entry.get("path"), entry.get("sha256"))
    files = [check_unchanged(config, e["path"], e.get("sha256"))
             for e in config.get("inputs") or []]
    options = build(ValidityOptions, config.get("validity_options") or {},
                    what="confeval guarantee apply")
    applied = apply_batches(policy_path, files, options)
    return {"title": "confeval guarantee apply", "simulated": False,
            "sections": [apply_section(entry["path"], applied)]}
