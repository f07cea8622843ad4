"""Whether a promise still applies to new records — written once for every promise confeval
writes down (a certified threshold's ``policy.json``, a conformal predictor's
``conformal.json``): the new values of the quantity the promise rests on, tested against the
calibration summary the promise keeps (:mod:`confeval.validity`).

* **one file**: a two-sample test of its values against the calibration's — Kolmogorov–Smirnov
  by default (any change of the distribution), exact where the sizes allow, else asymptotic, or
  Monte Carlo permutations (+1 corrected). Its p-value decides ``holds``. The conformal test
  martingale over the file's rows (in file order) is reported beside it, for a change partway
  through; it does not decide (one decision, one level).
* **a stream** (several files, or a folder of them, in name order, numbers as numbers): the
  conformal test martingale over every new value in arrival order decides — an alarm when it
  reaches 1/alpha, which by Ville's inequality happens with probability at most alpha however
  long exchangeable data is watched; the alarm names the file and row. Each file's own
  two-sample test is listed too, each at level alpha alone.
* **labels**: the promise itself, watched by an anytime-valid confidence sequence of the
  realised error (:func:`watch_risk`).

``holds`` means "no evidence of a change at level alpha", not "the data are exchangeable"; a
batch too small to reach alpha says so (``informative`` false).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..report.verdicts import p_text
from ..suites.options import Options, option

__all__ = ["BATCH_SUFFIXES", "MAX_POINTS", "VALIDITY_STATISTICS", "Observed",
           "ValidityOptions", "batch_files", "check_validity", "distributions",
           "watch_risk"]

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
class Observed:
    """One file's new values of the tested quantity, in file order, with the row of each."""

    path: Path
    values: np.ndarray
    rows: np.ndarray


def check_validity(summary: Mapping[str, Any], observed: Sequence[Observed],
                   options: ValidityOptions, *, quantity: str = "confidence",
                   notes: Sequence[str] = ()) -> dict:
    """The new values of every file tested against the calibration ``summary`` (module
    docstring): ``p_value``, ``holds``, ``informative``, ``sentence``, ``checked_by``
    (``batch`` or ``stream``), ``quantity``, ``test``, ``batch`` (one file's two-sample test)
    or ``batches`` (each file's), ``stream`` (the martingale: ``alarm``, ``alarm_at`` with the
    file and row, ``p_value``, ``path`` thinned to at most about 500 items), ``alpha``,
    ``n_calibration``, ``n_new``, ``note``."""
    from ..validity import batch_validity, monitor_stream

    new = np.concatenate([o.values for o in observed])
    tests = [batch_validity(summary, o.values, **options.batch_test()) for o in observed]
    stream = _stream(monitor_stream(summary, new, alpha=options.alpha, seed=options.seed),
                     observed)
    notes = list(notes)
    if len(observed) == 1:
        decided = tests[0]
        out = {"p_value": decided["p_value"], "holds": bool(decided["holds"]),
               "informative": bool(decided["informative"]),
               "sentence": _batch_sentence(decided, stream), "checked_by": "batch",
               "test": decided["test"], "batch": decided, "batches": None}
        notes += [decided["note"]] if decided.get("note") else []
    else:
        out = {"p_value": stream["p_value"], "holds": bool(stream["holds"]),
               "informative": bool(stream["informative"]),
               "sentence": _stream_sentence(stream, len(observed)), "checked_by": "stream",
               "test": stream["test"], "batch": None,
               "batches": [{"file": str(o.path), **t} for o, t in zip(observed, tests)]}
        notes += [stream["note"]] if stream.get("note") else []
    return {**out, "quantity": quantity, "alpha": options.alpha,
            "n_calibration": int(summary["n"]), "n_new": int(new.size), "stream": stream,
            "note": "; ".join(notes) if notes else None}


def unchecked(reason: str, n_new: int, alpha: float) -> dict:
    """The ``validity`` of a promise that keeps no calibration summary: ``holds`` null."""
    return {"p_value": None, "holds": None, "informative": False,
            "sentence": f"promise not checked: {reason}", "checked_by": None,
            "quantity": None, "alpha": alpha, "n_calibration": None, "n_new": n_new,
            "batch": None, "batches": None, "stream": None, "note": None}


def _batch_sentence(test: Mapping[str, Any], stream: Mapping[str, Any]) -> str:
    items = "item" if test["n_batch"] == 1 else "items"
    sizes = (f"{test['n_batch']:,} new {items} against {test['n_calibration']:,} calibration "
             f"values; {test['test']}")
    if not test["informative"]:
        return f"promise not checked: {test['note']} ({sizes})"
    if test["holds"]:
        p = p_text(test["p_value"], test["alpha"])
        text = f"promise holds: no evidence of a shift ({p}; {sizes})"
        if stream["alarm"] is not None:
            at = stream["alarm_at"]
            text += (f"; but the online test alarmed at row {at['row']} of the file: the "
                     "items may have changed partway through")
        return text
    return (f"promise void: the batch is not exchangeable with the calibration data "
            f"({p_text(test['p_value'], test['alpha'])}; {sizes})")


def _stream_sentence(stream: Mapping[str, Any], files: int) -> str:
    sizes = f"{stream['n_stream']:,} new items in {files} files, conformal test martingale"
    if stream["alarm"] is None:
        return (f"promise holds: no evidence of a shift over the stream "
                f"({p_text(stream['p_value'], stream['alpha'])}, anytime-valid; {sizes})")
    at = stream["alarm_at"]
    return (f"promise void: the stream stopped being exchangeable with the calibration data "
            f"by new item {stream['alarm'] + 1:,} ({at['file']}, row {at['row']}): the test "
            f"martingale reached 1/alpha = {stream['threshold']:g} "
            f"({p_text(stream['p_value'], stream['alpha'])}; {sizes})")


def _where(index: int, batches: Sequence[Observed]) -> dict:
    """The file and row (0-based, in the file's records) of the ``index``-th decided item
    of the concatenated stream."""
    for o in batches:
        if index < o.rows.size:
            return {"file": str(o.path), "row": int(o.rows[index])}
        index -= o.rows.size
    raise IndexError(index)


def _thin(n: int, keep: Sequence[int | None]) -> np.ndarray:
    """At most about :data:`MAX_POINTS` item indices of a path of ``n``, evenly spaced, with
    ``keep`` (the alarm, the peak) and the last."""
    if n <= MAX_POINTS:
        return np.arange(n)
    picks = np.round(np.linspace(0, n - 1, MAX_POINTS)).astype(int)
    extra = [k for k in keep if k is not None]
    return np.unique(np.concatenate([picks, np.asarray(extra, dtype=int)]))


def _stream(result: dict, batches: Sequence[Observed]) -> dict:
    path = np.asarray(result.pop("path"), dtype=np.float64)
    alarm = result["alarm"]
    items = _thin(path.size, [alarm, int(np.argmax(path)) if path.size else None])
    result["path"] = {"item": items.tolist(), "value": path[items].tolist()}
    result["alarm_at"] = None if alarm is None else _where(alarm, batches)
    return result


def watch_risk(monitor, what: str, nothing: str = "no labelled item counts") -> dict:
    """A :class:`confeval.validity.RiskMonitor` as the ``risk`` document: its numbers, the
    bounds' paths thinned to at most about 500 items (with the alarm), ``what`` is watched and
    the sentence (``nothing``: what to say when no item was tested)."""
    out = monitor.to_dict()
    lower, upper = np.asarray(out.pop("lower")), np.asarray(out.pop("upper"))
    items = _thin(lower.size, [out["alarm"]])
    out["bounds"] = {"item": items.tolist(), "lower": lower[items].tolist(),
                     "upper": upper[items].tolist()}
    out["what"] = what
    out["sentence"] = _risk_sentence(out, what, nothing)
    return out


def _risk_sentence(risk: Mapping[str, Any], what: str, nothing: str) -> str:
    n, target = risk["n_answered"], risk["target"]
    if not risk["informative"]:
        return f"promise not tested on labels: {nothing}"
    realised = f"{risk['selective_error']:.4f} over {n:,}" if risk["selective_error"] \
        is not None else "–"
    if risk["alarm"] is not None:
        return (f"promise broken: the {what} is above the target {target:g} (its lower "
                f"confidence bound reached it after {risk['alarm'] + 1:,} of them; "
                f"realised {realised}, {p_text(risk['p_value'], risk['alpha'])})")
    return (f"promise kept so far: the {what} is {realised}, upper confidence bound "
            f"{risk['final_upper']:.4f} (target {target:g}, anytime-valid at "
            f"alpha = {risk['alpha']:g})")


def distributions(calibration: np.ndarray, new: np.ndarray, bins: int = 20) -> dict:
    """The calibration and new values as histograms on shared bins (the report's figure):
    [0, 1] in 20 bins when every value lies there, else 20 bins over their range."""
    both = np.concatenate([calibration, new])
    if both.min() >= 0 and both.max() <= 1:
        lo, hi = 0.0, 1.0
    else:
        lo, hi = float(both.min()), float(both.max())
        hi = hi if hi > lo else lo + 1.0
    edges = np.linspace(lo, hi, bins + 1)

    def counts(x: np.ndarray) -> list[int]:
        return np.histogram(np.clip(x, lo, hi), bins=edges)[0].astype(int).tolist()

    return {"edges": edges.tolist(), "calibration": counts(calibration), "new": counts(new)}
