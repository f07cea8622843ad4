"""``confeval guarantee apply``: a policy applied to new records — each marked answer, abstain
or excluded — and whether its promise still applies to them, written once against the suite
object.

A certified threshold promises its error for new items *exchangeable* with the calibration
items. ``policy.json`` keeps a bounded summary of the calibration confidences
(:func:`confeval.verbs.guarantee.validity_summary`), and every application tests the new
confidences against it (:mod:`confeval.validity`):

* **one batch** (one file): a two-sample test of the batch's confidences against the
  calibration's — Kolmogorov–Smirnov by default (any change of the distribution), exact where
  the sizes allow, else asymptotic, or ``permutations`` Monte Carlo permutations (+1
  corrected). Its p-value decides ``holds``. The conformal test martingale over the batch's
  rows (in file order) is reported beside it, for a change partway through the file; it does
  not decide ``holds`` (one decision, one level).
* **a stream** (several files, or a folder of them, in name order): the conformal test
  martingale over every new item in arrival order decides — an alarm when it reaches
  1/alpha, which by Ville's inequality happens with probability at most alpha however long
  exchangeable data is watched; the alarm names the file and row. Each file's own two-sample
  test is listed too, each at level alpha alone (not corrected for looking at several).
* **labels** (the records carry the correctness the policy was certified with, on some rows or
  all): an anytime-valid confidence sequence of the realised error among the answered items,
  with an alarm when its lower bound reaches the target (:func:`confeval.validity.monitor_risk`)
  — the promise itself checked, not only its condition.

``holds`` means "no evidence of a change at level alpha", not "the data are exchangeable"; a
batch too small to reach alpha says so (``informative`` false). A policy written before
confeval stored the summary cannot be checked: ``validity.holds`` is null and the sentence says
to write the policy again.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..suites import SUITES
from ..suites.options import Options, option, to_json
from .guarantee import policy_options, ranked_finite, read_policy
from .score import load

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["BATCH_SUFFIXES", "VALIDITY_STATISTICS", "Applied", "ValidityOptions",
           "apply_batches", "apply_policy", "apply_run_config", "apply_section", "batch_files",
           "rerun_apply"]

VALIDITY_STATISTICS = ("ks", "rank_sum")
"""The batch test's statistic: two-sample Kolmogorov–Smirnov, or the rank sum of the batch's
conformal p-values (Mann–Whitney; most power for a pure shift)."""

BATCH_SUFFIXES = (".jsonl", ".jsonl.gz", ".csv", ".csv.gz", ".parquet", ".json", ".eval")
"""The files of a folder read as batches (record tables, Inspect logs); others are skipped and
named."""

MAX_POINTS = 500
"""A path (the martingale's, the error's bounds) is reported at most at this many items, evenly
spaced, always with its alarm and its peak: a batch of 10^5 items stays a small document."""


_APPLY = ("score",)


@dataclasses.dataclass(frozen=True)
class ValidityOptions(Options):
    """How ``confeval guarantee apply`` tests new records against a policy's calibration
    data (the module docstring says which test decides)."""

    alpha: float = option(0.05, "Level of the validity tests and alarms: the promise is void "
                          "when a test's p-value is at most this, or an alarm fires.",
                          stages=_APPLY)
    statistic: str = option("ks", "The batch test: ks (two-sample Kolmogorov-Smirnov, any "
                            "change of the confidences' distribution) or rank_sum (the rank "
                            "sum of the batch's conformal p-values: most power for a pure "
                            "shift).", stages=_APPLY)
    permutations: int = option(0, "0: the exact or asymptotic p-value, by the sizes; N: N "
                               "Monte Carlo permutations (+1 corrected, seeded).",
                               stages=_APPLY, minimum=0, maximum=100_000)
    seed: int = option(0, "Seed of the permutations and of the online test's randomised "
                       "p-values.", stages=_APPLY, minimum=0)

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 0 < self.alpha < 1:
            raise ValueError(f"--alpha must be in (0, 1), got {self.alpha}")
        if self.statistic not in VALIDITY_STATISTICS:
            raise ValueError(f"--statistic {self.statistic!r}: choose from "
                             f"{', '.join(VALIDITY_STATISTICS)}")

    def batch_test(self) -> dict[str, Any]:
        """The keywords of :func:`confeval.validity.batch_validity`."""
        method = "permutation" if self.permutations else "auto"
        return {"alpha": self.alpha, "seed": self.seed, "statistic": self.statistic,
                "method": method, "n_permutations": self.permutations or 1000}


def _natural(path: Path) -> list:
    """Name order with numbers compared as numbers: batch-2 before batch-10."""
    return [int(part) if part.isdigit() else part.lower()
            for part in re.split(r"(\d+)", path.name)]


def batch_files(paths: Sequence[str | Path]) -> tuple[list[Path], list[str]]:
    """(the files applied to, in order; the files of a folder skipped as no records). A
    folder that is a run folder is one batch; any other folder is a stream of its record
    files in name order (numbers as numbers); hidden files are ignored."""
    from ..records import RUN_RECORDS
    from ..runs import RunFolder

    files: list[Path] = []
    skipped: list[str] = []
    for path in map(Path, paths):
        if not path.is_dir() or (path / RUN_RECORDS).is_file():
            files.append(path)
            continue
        if (path / RunFolder.RUN).is_file():
            raise ValueError(f"{path}: a run folder with no {RUN_RECORDS} (no records to "
                             "apply the policy to)")
        members = sorted((p for p in path.iterdir()
                          if not p.name.startswith(".") and p.is_file()), key=_natural)
        batches = [p for p in members if p.name.lower().endswith(BATCH_SUFFIXES)]
        skipped += [str(p) for p in members if p not in batches]
        if not batches:
            raise ValueError(f"{path}: a folder with no records file (no run folder, no "
                             f"{', '.join(BATCH_SUFFIXES)} file)")
        files += batches
    if not files:
        raise ValueError("no records given")
    return files, skipped


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
    if summary is not None:
        from ..validity import calibration_values

        values = calibration_values(summary)
        for b in batches:
            b.confidence = like_calibration(b.confidence, values)
    new = np.concatenate([b.confidence for b in batches])
    if summary is None:
        return {"p_value": None, "holds": None, "informative": False,
                "sentence": "promise not checked: this policy stores no calibration summary "
                            "(written by an earlier confeval); write it again with `confeval "
                            "guarantee --out` to test new records against it",
                "checked_by": None, "alpha": options.alpha, "n_calibration": None,
                "n_new": int(new.size), "batch": None, "batches": None, "stream": None,
                "risk": risk, "note": None}
    from ..validity import batch_validity, monitor_stream

    tests = [batch_validity(summary, b.confidence, **options.batch_test()) for b in batches]
    stream = _stream(monitor_stream(summary, new, alpha=options.alpha, seed=options.seed),
                     batches)
    notes = []
    if summary.get("clustered"):
        notes.append("the policy was calibrated on the steps of chains: the tests treat "
                     "every step as one draw, so their level is approximate")
    if len(batches) == 1:
        decided = tests[0]
        out = {"p_value": decided["p_value"], "holds": bool(decided["holds"]),
               "informative": bool(decided["informative"]),
               "sentence": _batch_sentence(decided, stream), "checked_by": "batch",
               "test": decided["test"], "batch": decided, "batches": None}
        notes += [decided["note"]] if decided.get("note") else []
    else:
        out = {"p_value": stream["p_value"], "holds": bool(stream["holds"]),
               "informative": bool(stream["informative"]),
               "sentence": _stream_sentence(stream, len(batches)), "checked_by": "stream",
               "test": stream["test"], "batch": None,
               "batches": [{"file": str(b.path), **t} for b, t in zip(batches, tests)]}
        notes += [stream["note"]] if stream.get("note") else []
    return {**out, "alpha": options.alpha, "n_calibration": int(summary["n"]),
            "n_new": int(new.size), "stream": stream, "risk": risk,
            "note": "; ".join(notes) if notes else None}


def _p(value: float) -> str:
    """A p-value in words: never 0 (the tests floor it), small ones as an upper bound."""
    return f"p = {value:.3g}" if value >= 1e-4 else "p < 0.0001"


def _batch_sentence(test: Mapping[str, Any], stream: Mapping[str, Any]) -> str:
    sizes = (f"{test['n_batch']:,} new items against {test['n_calibration']:,} calibration "
             f"values; {test['test']}")
    if not test["informative"]:
        return f"promise not checked: {test['note']} ({sizes})"
    if test["holds"]:
        text = f"promise holds: no evidence of a shift ({_p(test['p_value'])}; {sizes})"
        if stream["alarm"] is not None:
            at = stream["alarm_at"]
            text += (f"; but the online test alarmed at row {at['row']} of the file: the "
                     "items may have changed partway through")
        return text
    return (f"promise void: the batch is not exchangeable with the calibration data "
            f"({_p(test['p_value'])}; {sizes})")


def _stream_sentence(stream: Mapping[str, Any], files: int) -> str:
    sizes = f"{stream['n_stream']:,} new items in {files} files, conformal test martingale"
    if stream["alarm"] is None:
        return (f"promise holds: no evidence of a shift over the stream "
                f"({_p(stream['p_value'])}, anytime-valid; {sizes})")
    at = stream["alarm_at"]
    return (f"promise void: the stream stopped being exchangeable with the calibration data "
            f"by new item {stream['alarm'] + 1:,} ({at['file']}, row {at['row']}): the test "
            f"martingale reached 1/alpha = {stream['threshold']:g} "
            f"({_p(stream['p_value'])}; {sizes})")


def _where(index: int, batches: list[_Batch]) -> dict:
    """The file and row (0-based, in the file's records) of the ``index``-th decided item
    of the concatenated stream."""
    for b in batches:
        if index < b.rows.size:
            return {"file": str(b.path), "row": int(b.rows[index])}
        index -= b.rows.size
    raise IndexError(index)


def _thin(n: int, keep: Sequence[int | None]) -> np.ndarray:
    """At most about :data:`MAX_POINTS` item indices of a path of ``n``, evenly spaced, with
    ``keep`` (the alarm, the peak) and the last."""
    if n <= MAX_POINTS:
        return np.arange(n)
    picks = np.round(np.linspace(0, n - 1, MAX_POINTS)).astype(int)
    extra = [k for k in keep if k is not None]
    return np.unique(np.concatenate([picks, np.asarray(extra, dtype=int)]))


def _stream(result: dict, batches: list[_Batch]) -> dict:
    path = np.asarray(result.pop("path"), dtype=np.float64)
    alarm = result["alarm"]
    items = _thin(path.size, [alarm, int(np.argmax(path)) if path.size else None])
    result["path"] = {"item": items.tolist(), "value": path[items].tolist()}
    result["alarm_at"] = None if alarm is None else _where(alarm, batches)
    return result


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
    out = monitor.to_dict()
    lower, upper = np.asarray(out.pop("lower")), np.asarray(out.pop("upper"))
    items = _thin(lower.size, [out["alarm"]])
    out["bounds"] = {"item": items.tolist(), "lower": lower[items].tolist(),
                     "upper": upper[items].tolist()}
    out["what"] = what
    out["sentence"] = _risk_sentence(out, what)
    return out


def _risk_sentence(risk: Mapping[str, Any], what: str) -> str:
    n, target = risk["n_answered"], risk["target"]
    if not risk["informative"]:
        return (f"promise not tested on labels: none of the {risk['n_labelled']:,} labelled "
                "items was answered")
    realised = f"{risk['selective_error']:.4f} over {n:,}" if risk["selective_error"] \
        is not None else "–"
    if risk["alarm"] is not None:
        return (f"promise broken: the {what} is above the target {target:g} (its lower "
                f"confidence bound reached it after {risk['alarm'] + 1:,} of them; "
                f"realised {realised}, {_p(risk['p_value'])})")
    return (f"promise kept so far: the {what} is {realised}, upper confidence bound "
            f"{risk['final_upper']:.4f} (target {target:g}, anytime-valid at "
            f"alpha = {risk['alpha']:g})")


def _distributions(summary: Any, batches: list[_Batch], bins: int = 20) -> dict | None:
    """The calibration and new confidences as histograms on shared bins (the report's
    figure): [0, 1] in 20 bins when every value lies there, else 20 bins over their range."""
    if summary is None:
        return None
    from ..validity import calibration_values

    cal = calibration_values(summary)
    new = np.concatenate([b.confidence for b in batches])   # infinities placed already
    both = np.concatenate([cal, new])
    if both.min() >= 0 and both.max() <= 1:
        lo, hi = 0.0, 1.0
    else:
        lo, hi = float(both.min()), float(both.max())
        hi = hi if hi > lo else lo + 1.0
    edges = np.linspace(lo, hi, bins + 1)

    def counts(x: np.ndarray) -> list[int]:
        return np.histogram(np.clip(x, lo, hi), bins=edges)[0].astype(int).tolist()

    return {"edges": edges.tolist(), "calibration": counts(cal), "new": counts(new)}


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
