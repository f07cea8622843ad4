"""Input checks shared by the metric functions.

Metric functions are strict: they take clean arrays and raise ``ValueError`` naming the
argument at fault. Dirty *files* are handled one level up, in :mod:`confeval.records`, where
unusable rows are excluded and counted by reason instead of raising.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike

RUN_RECORDS = "records.jsonl"
"""The records file of a run folder."""


class RecordsError(ValueError):
    """Input that cannot be read at all (a missing file or column, an unknown format)."""


def record_file(path: str | Path) -> Path:
    """``path`` itself, or a run folder's ``records.jsonl``."""
    path = Path(path)
    if path.is_dir():
        if not (path / RUN_RECORDS).is_file():
            raise RecordsError(f"{path}: a folder without {RUN_RECORDS}{_scored_from(path)}; "
                               "give a record file or a live run's folder")
        return path / RUN_RECORDS
    return path


def _scored_from(folder: Path) -> str:
    """What a run folder without records was made from, as its run.json names it: a scoring
    command's folder keeps its results, not the records it scored (a newcomer took `score
    --out` for a folder `guarantee` and `compare` read). "" for any other folder."""
    import json

    try:
        with open(folder / "run.json", encoding="utf-8") as handle:
            document = json.loads(handle.read(1 << 20))
        config = document["config"]
        command = config["command"]
        paths = [str(p) for given in config["inputs"] for p in (
            given["path"] if isinstance(given["path"], list) else [given["path"]])]
    except (OSError, ValueError, RecursionError, KeyError, TypeError):
        return " (no run folder)"
    if not isinstance(command, str) or not paths:
        return " (no run folder)"
    return (f" (the results of `confeval {command}`, which keeps the records it scored where "
            f"they were: {', '.join(paths[:3])}{', ...' if len(paths) > 3 else ''})")


def as_float_1d(x: ArrayLike, name: str, *, lo: float | None = None,
                hi: float | None = None) -> np.ndarray:
    """Return ``x`` as a finite 1-D float64 array, optionally bounded to [lo, hi]."""
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric: {exc}") from None
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    if not arr.size:
        return arr
    # the extremes are NaN or infinite exactly when some value is: two reductions check it all
    smallest, largest = np.minimum.reduce(arr), np.maximum.reduce(arr)
    if not (np.isfinite(smallest) and np.isfinite(largest)):
        bad = int((~np.isfinite(arr)).sum())
        raise ValueError(f"{name} has {bad} non-finite value(s) (NaN or inf)")
    if lo is not None and smallest < lo:
        raise ValueError(f"{name} has values below {lo} (min {smallest!r})")
    if hi is not None and largest > hi:
        raise ValueError(f"{name} has values above {hi} (max {largest!r})")
    return arr


def as_unit_interval(x: ArrayLike, name: str) -> np.ndarray:
    """Return ``x`` as a 1-D float64 array of values in [0, 1]."""
    return as_float_1d(x, name, lo=0.0, hi=1.0)


def as_binary(x: ArrayLike, name: str) -> np.ndarray:
    """Return ``x`` as a 1-D float64 array whose values are all 0 or 1."""
    arr = as_float_1d(x, name)
    if not np.isin(arr, (0.0, 1.0)).all():
        raise ValueError(f"{name} must contain only 0/1 (or False/True)")
    return arr


def as_prob_matrix(p: ArrayLike, name: str, *, atol: float = 1e-6) -> np.ndarray:
    """Return ``p`` as an (n, K) float64 matrix of rows on the probability simplex."""
    arr = np.asarray(p, dtype=np.float64)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_classes), got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} has non-finite values")
    if (arr < 0).any():
        raise ValueError(f"{name} has negative probabilities")
    sums = arr.sum(axis=1)
    if arr.shape[0] and np.abs(sums - 1.0).max() > atol:
        worst = sums[np.abs(sums - 1).argmax()]
        raise ValueError(f"{name} rows must sum to 1 (worst row sums to {worst!r})")
    return arr


def as_labels(y: ArrayLike, name: str, n_classes: int) -> np.ndarray:
    """Return integer class indices in [0, n_classes)."""
    arr = np.asarray(y)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        as_float = np.asarray(arr, dtype=np.float64)
        if not np.all(np.mod(as_float, 1) == 0):
            raise ValueError(f"{name} must hold integer class indices")
        arr = as_float.astype(np.int64)
    if arr.size and (arr.min() < 0 or arr.max() >= n_classes):
        raise ValueError(f"{name} must be class indices in [0, {n_classes})")
    return arr.astype(np.int64)


def same_length(**arrays: np.ndarray) -> int:
    """Check that all arrays have the same first dimension; return it."""
    lengths = {name: len(a) for name, a in arrays.items()}
    if len(set(lengths.values())) > 1:
        detail = ", ".join(f"{k}={v}" for k, v in lengths.items())
        raise ValueError(f"inputs must have the same length ({detail})")
    return next(iter(lengths.values()))


def check_positive_int(value: int, name: str) -> int:
    """``value`` as an int if it is a positive integer (not a bool), else a ValueError."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def tie_group_means(keys_sorted: np.ndarray, values_sorted: np.ndarray) -> np.ndarray:
    """Replace each value by the mean over its run of equal keys.

    ``keys_sorted`` must be sorted so that equal keys are adjacent. This is the tie rule
    used by the ranking metrics: averaging a target over a tied block equals its expectation
    over every ordering of the block, so the result does not depend on input order.
    """
    n = keys_sorted.shape[0]
    if n == 0:
        return values_sorted.astype(np.float64)
    starts = np.flatnonzero(np.r_[True, keys_sorted[1:] != keys_sorted[:-1]])
    if starts.size == n:   # no ties: each value is its own mean
        return values_sorted.astype(np.float64)
    sums = np.add.reduceat(values_sorted.astype(np.float64), starts)
    counts = np.diff(np.r_[starts, n])
    return np.repeat(sums / counts, counts)


def index_in(labels: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Position of each value in ``labels`` (any order, distinct), or -1 where absent.

    Vectorised through a sorted copy of the labels: O((n + L) log L).
    """
    labels = np.asarray(labels)
    values = np.asarray(values)
    if labels.size == 0:
        return np.full(values.shape, -1, dtype=np.int64)
    order = np.argsort(labels, kind="stable")
    sorted_labels = labels[order]
    pos = np.clip(np.searchsorted(sorted_labels, values), 0, labels.size - 1)
    found = sorted_labels[pos] == values
    return np.where(found, order[pos], -1).astype(np.int64)


def missing_model_folder(path: str | Path) -> str | None:
    """Why ``path`` names no local model folder — it looks like a path (absolute, ``./``,
    ``~``, a backslash, or two slashes; a hub repo id has one) and no such folder exists — or
    ``None``. Nothing is downloaded here, so a path that is not there is said to be so, rather
    than reported as a repository the hub does not know."""
    text = str(path)
    looks_like_a_path = (Path(text).is_absolute() or text.startswith((".", "~"))
                         or "\\" in text or text.count("/") >= 2)
    folder = Path(text).expanduser()
    if looks_like_a_path and not folder.is_dir():
        return f"no such folder: {text}" if not folder.exists() else \
            f"{text}: a file, not a model folder"
    return None
