"""The shared machinery of the interval methods: the :class:`IntervalMethod` protocol (fit,
calibrate, predict, Mondrian thresholds) and seeded scikit-learn base models (shared between
methods fitted on the same rows). The neural methods' network is in :mod:`._mlp`.
"""

from __future__ import annotations

import abc
import contextlib
import contextvars
import hashlib
import math

import numpy as np
from sklearn.ensemble import (
    GradientBoostingRegressor,
    HistGradientBoostingRegressor,
    RandomForestRegressor,
)
from sklearn.linear_model import LinearRegression, QuantileRegressor
from sklearn.model_selection import train_test_split

try:   # a private module of scikit-learn's (see _FastPinball)
    from sklearn._loss.loss import PinballLoss
except ImportError:  # pragma: no cover - a release that moved it
    PinballLoss = None

from .names import BASE_MODELS
from .quantile import conformal_quantile, mondrian_quantiles, row_thresholds


def _booster(base: str, seed: int, quantile: float | None = None, n_trees: int = 100):
    """A seeded base regressor: squared error, or pinball loss at ``quantile``."""
    if base == "gbr":
        if quantile is None:
            return GradientBoostingRegressor(random_state=seed)
        return _QuantileGBR(loss="quantile", alpha=quantile, random_state=seed)
    if base == "hgb":
        if quantile is None:
            return HistGradientBoostingRegressor(random_state=seed)
        return _QuantileHGB(loss="quantile", quantile=quantile, random_state=seed)
    if base == "rf":
        if quantile is not None:
            raise ValueError("base='rf' has no quantile loss; use gbr, hgb or linear")
        # The forests of Xie et al.'s Local baseline: many shallow, decorrelated trees.
        return RandomForestRegressor(n_estimators=n_trees, min_samples_leaf=40, max_features=1,
                                     random_state=seed, n_jobs=1)
    if base == "linear":
        if quantile is None:
            return LinearRegression()
        return QuantileRegressor(quantile=quantile, alpha=0.0, solver="highs")
    raise ValueError(f"base must be one of {BASE_MODELS}, got {base!r}")


def percentile_linear(a: np.ndarray, percent: float) -> np.float64:
    """``np.percentile(a, percent)`` of a 1-d float64 array without NaNs, the same number bit
    for bit (numpy's default "linear" method, step by step: the virtual index
    (n - 1) q with q = percent / 100, its floor and the next index clipped to the array, the two
    order statistics by a partition, and numpy's two-sided interpolation), in ~1/10 of the
    time: ``np.percentile`` spends ~60 µs a call on its generality."""
    n = a.size
    virtual = (n - 1) * (percent / 100)
    low = math.floor(virtual)
    high = low + 1
    if virtual >= n - 1:   # numpy's bounds: index -1 (the last) or 0, gamma from that index
        low = high = -1
    elif virtual < 0:
        low = high = 0
    gamma = virtual - low
    ordered = np.partition(a, (low % n, high % n))
    below, above = ordered[low], ordered[high]
    diff = above - below
    return above - diff * (1 - gamma) if gamma >= 0.5 else below + diff * gamma


def percentile_inverted_cdf(a: np.ndarray, percent: float) -> np.float64:
    """scikit-learn's ``_weighted_percentile(a, ones, percent)`` of a 1-d float64 array
    without NaNs: with unit weights the cumulative weights are exactly 1, 2, ..., n, so its
    search for ``percent / 100 * n`` lands on the order statistic of index ceil(that) - 1,
    clipped to the array (its zero target, raised to the next float, lands on index 0 as
    well). The same number, without the sort of the whole array and the array-API layers
    (~0.1-0.3 ms a call)."""
    n = a.size
    rank = min(max(math.ceil(percent / 100 * float(n)) - 1, 0), n - 1)
    return np.partition(a, rank)[rank]


class _PinballLoss(PinballLoss or object):
    """scikit-learn's pinball loss, whose intercept-only fit (a quantile boosting's leaf
    values) skips the general routines for the two cases boosting gives it: no weights
    (histogram boosting: ``np.percentile``, :func:`percentile_linear`) and unit weights
    (``GradientBoostingRegressor``: ``_weighted_percentile``, :func:`percentile_inverted_cdf`),
    on one float64 output without NaNs. Anything else goes to scikit-learn's own."""

    def fit_intercept_only(self, y_true, sample_weight=None):
        y = np.asarray(y_true)
        if y.ndim != 1 or y.dtype != np.float64 or not y.size or np.isnan(y).any():
            return super().fit_intercept_only(y_true, sample_weight)
        percent = 100 * self.closs.quantile
        if sample_weight is None:
            return percentile_linear(y, percent)
        w = np.asarray(sample_weight)
        if w.shape == y.shape and (w == 1).all():
            return percentile_inverted_cdf(y, percent)
        return super().fit_intercept_only(y_true, sample_weight)


class _FastPinball:
    """A quantile booster of scikit-learn's with :class:`_PinballLoss`: the same trees and
    predictions bit for bit (tests/conformal/test_interval_base.py fits both), in ~1/4 less
    time (boosting calls the leaf update once per leaf and tree: ~2,300 times a histogram
    boosting fit, ~800 a ``GradientBoostingRegressor``'s). ``_get_loss`` is scikit-learn's
    private hook; should a release rename it, these are the plain regressors, slower, never
    different."""

    def _get_loss(self, sample_weight):
        loss = super()._get_loss(sample_weight)
        if type(loss) is PinballLoss:
            loss.__class__ = _PinballLoss
        return loss


class _QuantileHGB(_FastPinball, HistGradientBoostingRegressor):
    """``HistGradientBoostingRegressor(loss="quantile")``, faster (:class:`_FastPinball`)."""


class _QuantileGBR(_FastPinball, GradientBoostingRegressor):
    """``GradientBoostingRegressor(loss="quantile")``, faster (:class:`_FastPinball`)."""


_SHARED_FITS: contextvars.ContextVar[dict | None] = contextvars.ContextVar(
    "confeval_shared_base_models", default=None)
"""The active cache of :func:`shared_base_models`: one per thread (a context variable), so
that jobs run by a thread pool (joblib's threading backend) neither share nor end each
other's cache: a module global was reset to None by the first job to finish, and the next
fit of another job failed."""


@contextlib.contextmanager
def shared_base_models():
    """Inside this block, a base model fitted once on given data is reused by every method
    that asks for the same model on the same rows (CQR and asymmetric CQR share their quantile
    regressors; naive and LVD their mean model). Results are unchanged; time is saved."""
    token = _SHARED_FITS.set({})
    try:
        yield
    finally:
        _SHARED_FITS.reset(token)


def fitted_base(base: str, seed: int, X: np.ndarray, y: np.ndarray,
                quantile: float | None = None, n_trees: int = 100):
    """``_booster(...)`` fitted on (X, y), from the shared cache when one is active."""
    cache = _SHARED_FITS.get()
    if cache is None:
        return _booster(base, seed, quantile, n_trees).fit(X, y)
    digest = hashlib.blake2b(np.ascontiguousarray(X).tobytes(), digest_size=16)
    digest.update(np.ascontiguousarray(y).tobytes())
    key = (base, seed, quantile, n_trees, X.shape, digest.hexdigest())
    if key not in cache:
        cache[key] = _booster(base, seed, quantile, n_trees).fit(X, y)
    return cache[key]


class IntervalMethod(abc.ABC):
    """Fit on (X, y) of the calibration half, then predict clipped intervals for new X.

    Subclasses give the base model (:meth:`_fit_model`), the nonconformity scores
    (:meth:`_nonconformity`, one or more score arrays with their miscoverage levels) and the
    interval for given thresholds (:meth:`_interval`, one per-row array per score array).
    With ``groups`` the thresholds are Mondrian: one per group, each from that group's
    calibration rows only (a group with too few rows, or unseen in calibration, gets the
    full scale with a :class:`~confeval.conformal.SmallCalibrationWarning`).

    ``same_rows=True`` fits the base model on all rows and calibrates on the same rows, as the
    VLM-judge paper's runs of CHR and the boosted methods did; it has no coverage guarantee
    (in-sample residuals are too small) and exists to reproduce those tables.
    """

    name = "abstract"
    needs_fit = True  # False: nothing to train, the whole calibration half calibrates

    def __init__(self, alpha: float = 0.1, *, low: float = 1.0, high: float = 5.0,
                 fit_fraction: float = 0.7, seed: int = 0, base: str = "gbr",
                 same_rows: bool = False) -> None:
        if not 0 < alpha < 1:
            raise ValueError("alpha must be in (0, 1)")
        if base not in BASE_MODELS:
            raise ValueError(f"base must be one of {BASE_MODELS}, got {base!r}")
        if not 0 < fit_fraction < 1:
            raise ValueError("fit_fraction must be in (0, 1)")
        self.alpha, self.low, self.high, self.base = alpha, low, high, base
        self.fit_fraction, self.seed, self.same_rows = fit_fraction, seed, same_rows

    # ------------------------------------------------------------------ public
    def fit(self, X: np.ndarray, y: np.ndarray, groups: np.ndarray | None = None
            ) -> IntervalMethod:
        parts = self._split(X, y, groups)
        if parts[0] is not None:
            self._fit_model(*parts[0])
        return self._calibrate(*parts[1], groups is not None)

    @classmethod
    def fit_many(cls, methods: list[IntervalMethod], Xs: list, ys: list,
                 groups: list | None = None) -> list[IntervalMethod]:
        """Fit several instances (e.g. one per seed) on their own data. The default fits them
        one by one; methods whose training batches across instances override
        :meth:`_fit_models_jointly`."""
        groups = groups or [None] * len(methods)
        parts = [m._split(X, y, g) for m, X, y, g in zip(methods, Xs, ys, groups)]
        fits = [p[0] for p in parts]
        same_shape = len({f[0].shape for f in fits if f is not None}) == 1
        same_options = len({m._training_options() for m in methods}) == 1
        if all(f is not None for f in fits) and same_shape and same_options:
            cls._fit_models_jointly(methods, fits)
        else:
            for m, f in zip(methods, fits):
                if f is not None:
                    m._fit_model(*f)
        return [m._calibrate(*p[1], g is not None) for m, p, g in zip(methods, parts, groups)]

    def _training_options(self) -> tuple:
        """What must agree for instances to train together (all public settings but the
        seed)."""
        return tuple(sorted((k, repr(v)) for k, v in vars(self).items()
                            if not k.startswith("_") and k != "seed"))

    @classmethod
    def _fit_models_jointly(cls, methods, fits) -> None:
        for m, f in zip(methods, fits):
            m._fit_model(*f)

    def _split(self, X, y, groups):
        """((X_fit, y_fit) or None, (X_cal, y_cal, g_cal))."""
        X = np.asarray(X, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        g = np.zeros(y.size, dtype=np.int64) if groups is None else np.asarray(groups)
        if self.needs_fit and self.same_rows:
            # The published protocol of CHR and the boosted methods: the base model sees the
            # calibration rows, so their scores are optimistic and the guarantee is lost.
            return (X, y), (X, y, g)
        if self.needs_fit:
            X_fit, X_cal, y_fit, y_cal, _, g_cal = train_test_split(
                X, y, g, train_size=self.fit_fraction, random_state=self.seed)
            return (X_fit, y_fit), (X_cal, y_cal, g_cal)
        return None, (X, y, g)

    def _calibrate(self, X_cal, y_cal, g_cal, mondrian: bool) -> IntervalMethod:
        self.mondrian = mondrian
        score_sets = self._nonconformity(X_cal, y_cal)
        levels = self._levels()
        if self.mondrian:
            self.thresholds = [mondrian_quantiles(s, g_cal, a) for s, a in zip(score_sets,
                                                                                  levels)]
        else:
            self.thresholds = [conformal_quantile(np.asarray(s, dtype=np.float64), a)
                               for s, a in zip(score_sets, levels)]
        return self

    def predict(self, X: np.ndarray, groups: np.ndarray | None = None
                ) -> tuple[np.ndarray, np.ndarray]:
        X = np.asarray(X, dtype=np.float64)
        n = X.shape[0]
        if self.mondrian:
            if groups is None:
                raise ValueError("this method was calibrated per group: pass groups to predict")
            # every threshold has the same groups: warn about unseen ones once
            qs = [row_thresholds(t, groups, warn=i == 0,
                                 what="had no calibration rows; their intervals span the scale")
                  for i, t in enumerate(self.thresholds)]
        else:
            qs = [np.full(n, q) for q in self.thresholds]
        lo, hi = self._interval(X, qs)
        full = np.zeros(n, dtype=bool)
        for q in qs:
            full |= ~np.isfinite(q)
        lo = np.where(np.isfinite(lo) & ~full, lo, self.low)
        hi = np.where(np.isfinite(hi) & ~full, hi, self.high)
        lo, hi = np.clip(lo, self.low, self.high), np.clip(hi, self.low, self.high)
        return np.minimum(lo, hi), np.maximum(lo, hi)

    # ------------------------------------------------------------------ subclass hooks
    def _fit_model(self, X: np.ndarray, y: np.ndarray) -> None:  # noqa: B027 - optional
        """Train the base model on the fitting share (nothing by default)."""

    def _levels(self) -> list[float]:
        return [self.alpha]

    @abc.abstractmethod
    def _nonconformity(self, X: np.ndarray, y: np.ndarray) -> list[np.ndarray]: ...

    @abc.abstractmethod
    def _interval(self, X: np.ndarray, q: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        ...
