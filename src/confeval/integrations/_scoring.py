"""confeval score's numbers on rows of (confidence, correct) handed over by another tool: the
one computation behind the Inspect metrics and the lm-eval aggregations.

The rows are scored by :func:`confeval.evaluate.score_confidence_records`, the one path of
``confeval score``: a row without a usable confidence (missing, not a number, outside [0, 1])
or correctness is excluded and counted (said once, as a warning of this module's logger), ECE
has ``n_bins`` equal-width bins, and each interval is the same seeded percentile bootstrap, so
on the same rows in the same order every number — value and interval — is the one
``confeval score`` prints. PRR, which ``confeval score`` reports without an interval, gets one
here from :func:`confeval.metrics.bootstrap_ci` with ``seed``.
"""

from __future__ import annotations

import logging
import math
import warnings
from collections import OrderedDict
from typing import Any

__all__ = ["ScoredRows", "metric_value", "scored_rows"]

logger = logging.getLogger(__name__)

_CACHE_SIZE = 8
_cache: OrderedDict[tuple, ScoredRows] = OrderedDict()


class ScoredRows:
    """Rows (``records``, a :class:`~confeval.records.RecordSet`) and ``confeval score``'s
    results on them (None: fewer than two usable rows, ``reason`` says so)."""

    def __init__(self, records: Any, results: dict | None, reason: str = "") -> None:
        self.records = records
        self.results = results
        self.reason = reason


def _key(rows: list[dict], params: tuple) -> tuple:
    return (tuple((repr(r["confidence"]), r["correct"]) for r in rows), params)


def scored_rows(rows: list[dict], *, n_bins: int = 15, bootstrap: int = 1000, seed: int = 0,
                source: str = "Inspect scores") -> ScoredRows:
    """``confeval score``'s results on rows with ``confidence`` and ``correct`` (cached: the
    metrics of one scorer, or the aggregations of one task, compute once)."""
    key = _key(rows, (n_bins, bootstrap, seed))
    if key in _cache:
        _cache.move_to_end(key)
        return _cache[key]
    from ..evaluate import score_confidence_records
    from ..metrics import UndefinedMetricWarning
    from ..records import RecordSet

    records = RecordSet.from_records(rows, source=source) if rows else None
    try:
        with warnings.catch_warnings():
            # an undefined metric (AUROC of one class) is reported as NaN, not warned of
            warnings.simplefilter("ignore", UndefinedMetricWarning)
            results = score_confidence_records(records, "confidence", "correct",
                                               n_bins=n_bins, n_resamples=bootstrap,
                                               seed=seed) if records is not None else None
        found = ScoredRows(records, results)
    except ValueError as exc:   # fewer than two usable rows
        found = ScoredRows(records, None, str(exc))
    _note_excluded(found)
    _cache[key] = found
    while len(_cache) > _CACHE_SIZE:
        _cache.popitem(last=False)
    return found


_said: set[str] = set()


def _note_excluded(found: ScoredRows) -> None:
    """Say once per process per reason that rows were left out (Inspect recomputes metrics on
    partial results while an eval runs: the same news is not repeated)."""
    if found.records is None or found.results is None:
        logger.debug("confeval: no metric: %s", found.reason or "no score")
        return
    for reason, count in found.records.excluded.items():
        if reason not in _said:
            _said.add(reason)
            logger.warning("confeval: rows left out of the metrics: %s (%d of %d so far)",
                           reason, count, found.records.n_read)


def _number(value: Any) -> float:
    return math.nan if value is None else float(value)


def _prr_interval(found: ScoredRows, bootstrap: int, seed: int) -> tuple[Any, Any]:
    """PRR's bootstrap interval (``confeval score`` reports PRR without one)."""
    from .. import metrics as M
    from ..evaluate import read_confidence_records

    if not bootstrap:
        return None, None
    conf, correct = read_confidence_records(found.records, "confidence", "correct")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", M.UndefinedMetricWarning)
        res = M.bootstrap_ci(M.prediction_rejection_ratio, conf, correct,
                             n_resamples=bootstrap, seed=seed)
    return res.low, res.high


def metric_value(name: str, found: ScoredRows, *, bootstrap: int = 1000,
                 seed: int = 0) -> dict[str, float | None]:
    """``{name: value, name_low: ..., name_high: ...}`` — the value and its 95% interval as
    ``confeval score`` reports them (NaN: undefined; an interval not computed is None, which
    Inspect leaves out). Keys carry the metric's name so that several confeval metrics of one
    scorer do not collide in Inspect's results."""
    if found.results is None:
        return {name: math.nan}
    value = _number(found.results.get(name))
    if name == "prr":
        low, high = _prr_interval(found, bootstrap, seed) if math.isfinite(value) else \
            (None, None)
    else:
        ci = (found.results.get("ci") or {}).get(name) or {}
        low, high = ci.get("low"), ci.get("high")
    return {name: value, f"{name}_low": low, f"{name}_high": high}
