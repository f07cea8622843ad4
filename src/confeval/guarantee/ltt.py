"""Learn then Test (Angelopoulos, Bates, Candès, Jordan and Lei, 2021) for the selective
error: Hoeffding–Bentkus p-values (:func:`hb_p_values`), the thresholds tested
(:func:`min_answered`), their family-wise control (:mod:`.fwer`) and the certified threshold
(:func:`ltt_threshold`); the choices are argued in :mod:`confeval.guarantee`."""


from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ._common import check_target, checked
from .fwer import check_fwer, fwer_levels, fwer_rejections, reachable, walk_starts

__all__ = ["LTTResult", "hb_p_values", "ltt_threshold", "min_answered", "selective_risk",
           "upper_bound"]


def hb_p_values(risk: ArrayLike, n: ArrayLike, target: ArrayLike, *, binary: bool = True
                ) -> np.ndarray:
    """Hoeffding–Bentkus p-values of "risk > target" for empirical risks ``risk`` over ``n``
    items each: min(exp(-n h1(min(r, target), target)), c binom.cdf(ceil(n r), n, target)),
    c = 1 for 0/1 losses (``binary``) and e otherwise; 1 where n = 0. ``risk``, ``n`` and
    ``target`` broadcast together.

    Examples
    --------
    >>> round(float(hb_p_values([0.0], [50], 0.1)[0]), 12) == round(0.9 ** 50, 12)
    True
    """
    from scipy.special import bdtr  # the binomial CDF as a ufunc: binom.cdf, 50x faster

    r, m, t = np.broadcast_arrays(np.asarray(risk, dtype=np.float64),
                                  np.asarray(n, dtype=np.float64),
                                  np.asarray(target, dtype=np.float64))
    if not np.all((t > 0) & (t < 1)):
        raise ValueError(f"target must be in (0, 1), got {target}")
    out = np.ones(r.shape)
    ok = m > 0
    r_ok, m_ok, t_ok = r[ok], m[ok], t[ok]
    a = np.minimum(r_ok, t_ok)
    with np.errstate(divide="ignore", invalid="ignore"):
        h1 = np.where(a > 0, a * np.log(a / t_ok), 0.0) + \
            (1 - a) * np.log((1 - a) / (1 - t_ok))
    hoeffding = np.exp(-m_ok * h1)
    # ceil of n r as MAPIE does; n r is an error count, rounded first so that 3.0000000004
    # errors stay 3
    errors = np.ceil(np.round(m_ok * r_ok, 9))
    bentkus = (1.0 if binary else math.e) * bdtr(errors.astype(np.int64),
                                                 m_ok.astype(np.int64), t_ok)
    out[ok] = np.minimum(hoeffding, bentkus)
    return out


def selective_risk(confidence: ArrayLike, correct: ArrayLike, thresholds: ArrayLike
                   ) -> tuple[np.ndarray, np.ndarray]:
    """(selective error, answered count) of "answer if confidence >= t" for each threshold t;
    NaN error where nothing is answered."""
    conf = np.asarray(confidence, dtype=np.float64)
    loss = 1.0 - np.asarray(correct, dtype=np.float64)
    t = np.asarray(thresholds, dtype=np.float64)
    order = np.argsort(-conf, kind="stable")
    sorted_conf = conf[order]
    cum_loss = np.concatenate([[0.0], np.cumsum(loss[order])])
    # items with confidence >= t: the first k of the descending order
    k = np.searchsorted(-sorted_conf, -t, side="right")
    with np.errstate(invalid="ignore", divide="ignore"):
        risk = cum_loss[k] / k
    return np.where(k > 0, risk, np.nan), k


def upper_bound(errors: ArrayLike, n: ArrayLike, delta: float, *, binary: bool = True
                ) -> np.ndarray | float:
    """The smallest target the Hoeffding–Bentkus test certifies at ``delta`` for ``errors``
    losses among ``n`` items (bisection to 1e-12; 1 where nothing below 1 is certified or
    n = 0): the certified bound of a threshold. Scalars or arrays."""
    if np.ndim(errors) == 0 and np.ndim(n) == 0:
        return _bound(float(errors), int(n), delta, binary)
    e, m = np.broadcast_arrays(np.asarray(errors, dtype=np.float64),
                               np.asarray(n, dtype=np.int64))
    return np.array([_bound(float(a), int(b), delta, binary) for a, b in zip(e.ravel(),
                                                                              m.ravel())]
                    ).reshape(e.shape)


def _bound(errors: float, n: int, delta: float, binary: bool) -> float:
    if n <= 0:
        return 1.0
    r = errors / n
    lo, hi = r, 1.0 - 1e-12
    if _p_scalar(r, n, hi, binary) > delta:
        return 1.0
    while hi - lo > 1e-12:   # the p-value falls as the target rises: bisect where it meets
        mid = (lo + hi) / 2
        if mid > 0 and _p_scalar(r, n, mid, binary) <= delta:
            hi = mid
        else:
            lo = mid
    return hi


def _p_scalar(r: float, n: int, target: float, binary: bool) -> float:
    """:func:`hb_p_values` of one (risk, n) in plain floats (the bisection calls it ~40
    times)."""
    from scipy.special import bdtr

    a = min(r, target)
    h1 = (a * math.log(a / target) if a > 0 else 0.0) + \
        ((1 - a) * math.log((1 - a) / (1 - target)) if a < 1 else 0.0)
    bentkus = (1.0 if binary else math.e) * float(bdtr(math.ceil(round(n * r, 9)), n, target))
    return min(math.exp(-n * h1), bentkus)


@dataclass
class LTTResult:
    """A certified threshold (None: none is) with its bound, and what was tested."""

    threshold: float | None
    bound: float | None
    candidates: np.ndarray
    p_values: np.ndarray
    risk: np.ndarray
    answered: np.ndarray
    tested: np.ndarray
    rejected: np.ndarray
    best_bound: float | None
    """The bound at the certified threshold; with none, the lowest bound the procedure reached
    on this data (at the thresholds it tests first whatever the outcome, each at its level:
    above the target then), None when no threshold answers enough items to be tested."""
    batch: int | None = None
    """The promise is on a new batch of this many items (:mod:`.batch`); ``p_values`` then
    hold each threshold's batch failure bound G (NaN where not computed)."""
    best_at: int | None = None
    """With no threshold certified: the candidate where ``best_bound`` was reached."""
    best_level: float | None = None
    """... and the level it was tested at (delta, or delta divided by the procedure's count)."""
    n_first: int = 0
    """How many thresholds the procedure tested first (where ``best_bound`` was sought)."""

    def to_dict(self) -> dict:
        i = None if self.threshold is None else int(np.flatnonzero(
            self.candidates == self.threshold)[0])
        return {"threshold": self.threshold, "answer_if": "confidence >= threshold",
                "bound": self.bound, "n_candidates": int(self.candidates.size),
                "n_tested": int(self.tested.sum()), "n_rejected": int(self.rejected.sum()),
                "calibration": None if i is None else {
                    "risk": float(self.risk[i]), "answered": int(self.answered[i])},
                "best_achievable_bound": self.best_bound, "batch": self.batch,
                "best_achievable": self._best()}

    def _best(self) -> dict | None:
        """Where the procedure reached its lowest bound, when it certified nothing: the
        threshold, its answered count and calibration risk, the level it was tested at, and
        how many thresholds were tested first."""
        if self.threshold is not None or self.best_at is None:
            return None
        k = self.best_at
        risk = self.risk[k]
        return {"threshold": float(self.candidates[k]), "answered": int(self.answered[k]),
                "risk": None if not np.isfinite(risk) else float(risk),
                "level": self.best_level, "n_tested_first": int(self.n_first)}


def _candidates(conf: np.ndarray, max_candidates: int) -> np.ndarray:
    distinct = np.unique(conf)[::-1]                       # most conservative first
    if distinct.size > max_candidates:
        keep = np.unique(np.round(np.linspace(0, distinct.size - 1, max_candidates)
                                  ).astype(int))
        distinct = distinct[keep]
    return distinct


def ltt_threshold(confidence: ArrayLike, correct: ArrayLike, *, target: float, delta: float,
                  fwer: str = "fixed-sequence", starts: int = 1,
                  max_candidates: int = 1000, groups: ArrayLike | None = None,
                  batch: int | None = None) -> LTTResult:
    """The lowest threshold t such that "answer if confidence >= t" has selective error at
    most ``target`` with probability at least ``1 - delta`` (module docstring).

    Parameters
    ----------
    confidence : array (n,) — higher = more confident (any scale).
    correct : array (n,) — 1 correct, 0 wrong (a loss of 1 - correct; values in [0, 1] use
        the Bentkus term for bounded losses).
    target : float in (0, 1) — the selective error promised.
    delta : float in (0, 1) — the probability the promise may fail.
    fwer : ``fixed-sequence`` (default), ``bonferroni`` or ``holm``.
    starts : int, default 1 — fixed-sequence only: walk from this many starting thresholds,
        equally spaced among the tested ones, each at ``delta / starts`` (multi-start fixed
        sequence, as MAPIE's ``FWERFixedSequenceTesting(n_starts)``; 1, the default, is the
        plain fixed sequence). See the module docstring for when more starts help; choose
        before looking at the result (the better of two runs spends up to twice ``delta``).
    groups : array (n,), optional — the cluster of each item (the chain a step belongs to):
        clusters, not items, are then the independent draws (:mod:`.clustered`); the
        selective error is the item-level one, pooled over clusters.
    batch : int, optional — promise the selective error of a new batch of this many items,
        not the population's: with probability at least ``1 - delta`` over the calibration
        draw and the batch, at most ``target`` of the batch's answered items are wrong
        (:mod:`.batch`; 0/1 correctness, fixed-sequence or Bonferroni, items not clusters).
        The bound returned is then the batch's.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> conf = rng.uniform(size=2000)
    >>> correct = rng.uniform(size=2000) < 0.75 + 0.25 * conf   # surer is righter
    >>> population = ltt_threshold(conf, correct, target=0.1, delta=0.1)
    >>> batch = ltt_threshold(conf, correct, target=0.1, delta=0.1, batch=2000)
    >>> bool(batch.threshold > population.threshold)   # the batch's noise is paid for
    True
    """
    conf, y = checked(confidence, correct, delta)
    check_target(target)
    check_fwer(delta, fwer, starts)
    binary = bool(np.isin(y, (0.0, 1.0)).all())
    cands = _candidates(conf, max_candidates)
    if batch is not None:
        if groups is not None:
            raise ValueError("batch: a batch promise treats items as independent draws, and "
                             "clustered items (the steps of a chain) are not; none for them "
                             "yet")
        return _batch_ltt(conf, y, cands, target, delta, fwer, starts, batch, binary)
    if groups is not None:
        return _clustered_ltt(conf, y, np.asarray(groups), cands, target, delta, fwer, starts)
    risk, answered = selective_risk(conf, y, cands)
    p = hb_p_values(np.nan_to_num(risk, nan=1.0), answered, target, binary=binary)
    tested = answered >= min_answered(target, delta, binary=binary)
    rejected = fwer_rejections(p, tested, delta, fwer, starts)
    levels = fwer_levels(p, tested, delta, fwer, starts)
    errors = np.nan_to_num(risk) * answered

    def bound_at(i: np.ndarray) -> np.ndarray:   # at the level the procedure tests i at
        return np.array([upper_bound(float(errors[k]), int(answered[k]), float(levels[k]),
                                     binary=binary) for k in i])

    idx = np.flatnonzero(rejected)
    if not idx.size:   # how far this n and delta went, by this procedure
        first = np.flatnonzero(reachable(p, tested, fwer, starts))
        if not first.size:
            return LTTResult(None, None, cands, p, risk, answered, tested, rejected, None)
        bounds = bound_at(first)
        k = int(first[np.argmin(bounds)])
        return LTTResult(None, None, cands, p, risk, answered, tested, rejected,
                         float(bounds.min()), best_at=k, best_level=float(levels[k]),
                         n_first=int(first.size))
    i = int(idx.max())   # the lowest rejected threshold (candidates run high to low)
    bound = float(bound_at(np.array([i]))[0])
    return LTTResult(float(cands[i]), bound, cands, p, risk, answered, tested, rejected, bound)


def _clustered_ltt(conf, y, groups, cands, target, delta, fwer, starts) -> LTTResult:
    from .clustered import cluster_counts, clustered_bound, clustered_p_values

    if groups.shape != conf.shape:
        raise ValueError("groups must give one cluster per item")
    answered, errors, squares = cluster_counts(conf, 1.0 - y, groups, cands)
    with np.errstate(invalid="ignore", divide="ignore"):
        risk = np.where(answered > 0, errors / answered, np.nan)
    p = clustered_p_values(answered, errors, squares, target)
    # start where an observed error of a quarter of the target would be certified by this
    # test, exp(-2 n (3 target / 4)^2) <= delta, n counted in independent draws (A^2 / S, the
    # clusters' effective number): confidences only, no correctness. Hoeffding needs more
    # draws than the item-level binomial test: at the item-level rule's "half the target"
    # too little is left to test; at an error-free record the walk often stops at once
    # (simulated chains: certified on 75%, 45% and 24% of draws; the steps test data
    # certifies with a quarter only).
    with np.errstate(invalid="ignore", divide="ignore"):
        effective = np.where(squares > 0, answered ** 2 / squares, 0.0)
    tested = effective >= math.log(1.0 / delta) / (2.0 * (0.75 * target) ** 2)
    rejected = fwer_rejections(p, tested, delta, fwer, starts)
    levels = fwer_levels(p, tested, delta, fwer, starts)
    # each threshold's bound at the level the procedure tests it at (1 where untested)
    bounds = np.ones(cands.size)
    for level in np.unique(levels[~np.isnan(levels)]):
        at = levels == level
        bounds[at] = clustered_bound(answered[at], errors[at], squares[at], float(level))
    idx = np.flatnonzero(rejected)
    if not idx.size:
        first = np.flatnonzero(reachable(p, tested, fwer, starts))
        k = int(first[np.argmin(bounds[first])]) if first.size else None
        return LTTResult(None, None, cands, p, risk, answered.astype(np.int64), tested,
                         rejected, None if k is None else float(bounds[k]), best_at=k,
                         best_level=None if k is None else float(levels[k]),
                         n_first=int(first.size))
    i = int(idx.max())
    return LTTResult(float(cands[i]), float(bounds[i]), cands, p, risk,
                     answered.astype(np.int64), tested, rejected, float(bounds[i]))


def _batch_ltt(conf, y, cands, target, delta, fwer, starts, m, binary) -> LTTResult:
    """:func:`ltt_threshold` with the batch promise (:mod:`.batch`): a threshold passes when
    its batch failure bound G at the walk's level is at most delta_batch. G is computed only
    where a walk reaches (in blocks), since one walk usually stops early."""
    from .batch import batch_bound, batch_failure_bound, batch_min_answered, box, split_delta

    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 1:
        raise ValueError(f"batch must be a positive number of items, got {m!r}")
    if not binary:
        raise ValueError("batch: the batch promise counts errors, so correctness must be 0/1")
    if fwer == "holm":
        raise ValueError("batch: the batch promise tests with fixed-sequence or bonferroni "
                         "(holm orders p-values, which this test has not)")
    risk, answered = selective_risk(conf, y, cands)
    errors = np.round(np.nan_to_num(risk) * answered)
    d_cal, d_batch = split_delta(delta)
    # where the walk starts: as min_answered, the first threshold at which an error of half the
    # target would pass — here the batch test, at the level the walk will use (counts only)
    level = d_cal / (starts if fwer == "fixed-sequence" else cands.size)
    tested = answered >= batch_min_answered(np.unique(answered), conf.size, m, target,
                                            d_batch, level)
    order = np.flatnonzero(tested)
    walks = min(starts, order.size) if fwer == "fixed-sequence" else max(order.size, 1)
    alpha = d_cal / max(walks, 1)
    failure = np.full(cands.size, np.nan)

    def passes(idx: np.ndarray) -> np.ndarray:
        todo = idx[np.isnan(failure[idx])]
        if todo.size:
            failure[todo] = batch_failure_bound(*box(errors[todo], answered[todo], conf.size,
                                                     alpha), m, target)
        return failure[idx] <= d_batch

    rejected = np.zeros(cands.size, dtype=bool)
    if fwer == "bonferroni":
        rejected[order] = passes(order) if order.size else False
    else:
        for start in walk_starts(order.size, walks):
            for block in np.array_split(order[start:], max(1, (order.size - start) // 64)):
                ok = passes(block)
                stop = int(np.argmin(ok)) if not ok.all() else block.size
                rejected[block[:stop]] = True
                if stop < block.size:
                    break

    def bound_at(i: np.ndarray) -> np.ndarray:
        return batch_bound(*box(errors[i], answered[i], conf.size, alpha), m, d_batch)

    idx = np.flatnonzero(rejected)
    if not idx.size:   # the best batch bound where the procedure tests first: the walks'
        # starts, or (Bonferroni) up to 50 tested thresholds evenly in rank
        sample = order[list(walk_starts(order.size, walks))] if fwer == "fixed-sequence" \
            else order[np.unique(np.linspace(0, order.size - 1, 50).astype(int))] \
            if order.size else order
        if not sample.size:
            return LTTResult(None, None, cands, failure, risk, answered, tested, rejected,
                             None, batch=int(m))
        bounds = bound_at(sample)
        k = int(sample[np.argmin(bounds)])
        return LTTResult(None, None, cands, failure, risk, answered, tested, rejected,
                         float(bounds.min()), batch=int(m), best_at=k, best_level=float(alpha),
                         n_first=int(sample.size))
    i = int(idx.max())
    bound = float(bound_at(np.array([i]))[0])
    return LTTResult(float(cands[i]), bound, cands, failure, risk, answered, tested, rejected,
                     bound, batch=int(m))


def min_answered(target: float, delta: float, *, binary: bool = True) -> int:
    """The fewest answered items at which an observed selective error of half the target is
    certified: the fixed sequence starts at the first threshold answering that many. Fewer
    could only certify a near-perfect record, and one failure there ends the sequence before
    any useful threshold is tested (the sequence would certify nothing). The count depends on
    target and delta only, never on the data."""
    n = 1
    while _p_scalar(target / 2, n, target, binary) > delta:
        n *= 2
        if n > 1 << 40:
            return n
    lo, hi = n // 2, n   # bisect the first n that certifies (p falls with n, up to rounding)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _p_scalar(target / 2, mid, target, binary) <= delta:
            hi = mid
        else:
            lo = mid
    return hi


