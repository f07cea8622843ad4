"""The shared machinery of the interval methods: the :class:`IntervalMethod` protocol (fit,
calibrate, predict, Mondrian thresholds), seeded scikit-learn base models, and a small numpy
MLP with an Adam training loop used by the neural methods (R2CCP, CHR's quantile network).
"""

from __future__ import annotations

import abc
import contextlib
import hashlib
import itertools
import math
import warnings
from collections.abc import Callable

import numpy as np
import pandas as pd
from sklearn.ensemble import (
    GradientBoostingRegressor,
    HistGradientBoostingRegressor,
    RandomForestRegressor,
)
from sklearn.linear_model import LinearRegression, QuantileRegressor
from sklearn.model_selection import train_test_split

from .sets import SmallCalibrationWarning, conformal_quantile, mondrian_quantiles

BASE_MODELS = ("gbr", "hgb", "linear", "rf")


def _booster(base: str, seed: int, quantile: float | None = None, n_trees: int = 100):
    """A seeded base regressor: squared error, or pinball loss at ``quantile``."""
    if base == "gbr":
        if quantile is None:
            return GradientBoostingRegressor(random_state=seed)
        return GradientBoostingRegressor(loss="quantile", alpha=quantile, random_state=seed)
    if base == "hgb":
        if quantile is None:
            return HistGradientBoostingRegressor(random_state=seed)
        return HistGradientBoostingRegressor(loss="quantile", quantile=quantile,
                                             random_state=seed)
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


_SHARED_FITS: dict | None = None


@contextlib.contextmanager
def shared_base_models():
    """Inside this block, a base model fitted once on given data is reused by every method
    that asks for the same model on the same rows (CQR and asymmetric CQR share their quantile
    regressors; naive and LVD their mean model). Results are unchanged; time is saved."""
    global _SHARED_FITS
    previous, _SHARED_FITS = _SHARED_FITS, {}
    try:
        yield
    finally:
        _SHARED_FITS = previous


def fitted_base(base: str, seed: int, X: np.ndarray, y: np.ndarray,
                quantile: float | None = None, n_trees: int = 100):
    """``_booster(...)`` fitted on (X, y), from the shared cache when one is active."""
    if _SHARED_FITS is None:
        return _booster(base, seed, quantile, n_trees).fit(X, y)
    digest = hashlib.blake2b(np.ascontiguousarray(X).tobytes(), digest_size=16)
    digest.update(np.ascontiguousarray(y).tobytes())
    key = (base, seed, quantile, n_trees, X.shape, digest.hexdigest())
    if key not in _SHARED_FITS:
        _SHARED_FITS[key] = _booster(base, seed, quantile, n_trees).fit(X, y)
    return _SHARED_FITS[key]


def _upper_quantile(scores: np.ndarray, level_alpha: float) -> float:
    """Exact conformal quantile; +inf (full scale) when the calibration share is too small."""
    return conformal_quantile(np.asarray(scores, dtype=np.float64), level_alpha)

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
            self.thresholds = [_upper_quantile(s, a) for s, a in zip(score_sets, levels)]
        return self

    def predict(self, X: np.ndarray, groups: np.ndarray | None = None
                ) -> tuple[np.ndarray, np.ndarray]:
        X = np.asarray(X, dtype=np.float64)
        n = X.shape[0]
        if self.mondrian:
            if groups is None:
                raise ValueError("this method was calibrated per group: pass groups to predict")
            g = pd.Series(np.asarray(groups))
            unseen = sorted(set(g) - set(self.thresholds[0]), key=str)
            if unseen:
                warnings.warn(f"groups {unseen} had no calibration rows; their intervals span "
                              "the scale", SmallCalibrationWarning, stacklevel=2)
            qs = [g.map(t).astype(float).fillna(math.inf).to_numpy() for t in self.thresholds]
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

def _views(flat: np.ndarray, sizes: list[int]) -> tuple[list, list]:
    """(weights, biases) of S stacked networks as views into ``flat`` (S, n_params)."""
    weights, biases, offset = [], [], 0
    for fan_in, fan_out in itertools.pairwise(sizes):
        weights.append(flat[:, offset:offset + fan_in * fan_out].reshape(-1, fan_in, fan_out))
        offset += fan_in * fan_out
        biases.append(flat[:, offset:offset + fan_out])
        offset += fan_out
    return weights, biases


def init_mlps(sizes: list[int], rngs: list[np.random.Generator]) -> np.ndarray:
    """Parameters of one ReLU network per Generator, stacked as a float32 (S, n_params)
    array, each initialised like PyTorch's ``nn.Linear`` (uniform in +-1/sqrt(fan_in)) from
    its own seeded Generator, layer by layer."""
    total = sum(a * b + b for a, b in itertools.pairwise(sizes))
    flat = np.empty((len(rngs), total), dtype=np.float32)
    weights, biases = _views(flat, sizes)
    for s, rng in enumerate(rngs):
        for w, b in zip(weights, biases):
            bound = 1 / math.sqrt(w.shape[1])
            w[s] = rng.uniform(-bound, bound, size=w.shape[1:])
            b[s] = rng.uniform(-bound, bound, size=b.shape[1:])
    return flat


def mlp_forward(weights: list, biases: list, X: np.ndarray, *, dropout: float = 0.0,
                rngs: list[np.random.Generator] | None = None) -> tuple[np.ndarray, list]:
    """Outputs (S, n, k) of S stacked networks on inputs X (S, n, d), and the activations
    the backward pass needs. With ``dropout`` (training only) each hidden unit is zeroed with
    that probability and the survivors scaled by 1/(1 - dropout), network s drawing its
    masks from ``rngs[s]``."""
    acts = [X]
    h = X
    for i, (w, b) in enumerate(zip(weights, biases)):
        h = np.matmul(h, w) + b[:, None, :]
        if i < len(weights) - 1:
            h = np.maximum(h, 0.0)
            if dropout:
                keep = np.stack([rng.random(h.shape[1:]) >= dropout for rng in rngs])
                h = h * keep * np.float32(1 / (1 - dropout))
        acts.append(h)
    return h, acts


def _mlp_backward(weights, acts, grad_out, grad_w, grad_b, dropout: float = 0.0) -> None:
    """Write the parameter gradients into ``grad_w``/``grad_b`` (views of one flat buffer).
    A hidden unit passes gradient where its (post-dropout) activation is positive, scaled by
    the dropout factor."""
    g = grad_out
    scale = np.float32(1 / (1 - dropout))
    for i in range(len(weights) - 1, -1, -1):
        grad_w[i][...] = np.matmul(acts[i].transpose(0, 2, 1), g)
        grad_b[i][...] = g.sum(axis=1)
        if i:
            g = np.matmul(g, weights[i].transpose(0, 2, 1)) * (acts[i] > 0)
            if dropout:
                g *= scale


def adam_train(sizes: list[int], X: np.ndarray, output_grad: Callable, *, epochs: int,
               batch_size: int, lr: float, rngs: list[np.random.Generator], cosine: bool,
               dropout: float = 0.0, shuffle: bool = True) -> tuple[list, list]:
    """Train S ReLU MLPs at once with Adam, float32 throughout like the torch references.

    ``X`` is (S, n, d): one training set per network, all of the same size (the seeds of one
    sweep), so one batched matrix product serves them all — on small networks the per-call
    overhead, not the arithmetic, dominates, and training ten seeds together costs little
    more than one. Network s draws its initial weights and each epoch's shuffle from
    ``rngs[s]``, exactly as if trained alone. ``output_grad(out, idx)`` returns d(loss)/d(out)
    for the mini-batch rows ``idx`` (S, b). ``cosine`` anneals the rate per epoch from ``lr``
    to 0; otherwise it is constant. ``dropout`` applies to the hidden layers while training;
    ``shuffle=False`` visits the rows in order every epoch (a PyTorch DataLoader's default).
    Returns the trained stacked (weights, biases).
    """
    flat = init_mlps(sizes, rngs)
    weights, biases = _views(flat, sizes)
    grad = np.zeros_like(flat)
    grad_w, grad_b = _views(grad, sizes)
    m, v, tmp = np.zeros_like(flat), np.zeros_like(flat), np.empty_like(flat)
    beta1, beta2, eps, step = 0.9, 0.999, 1e-8, 0
    X = X.astype(np.float32)
    n_models, n = X.shape[0], X.shape[1]
    models = np.arange(n_models)[:, None]
    for epoch in range(epochs):
        rate = 0.5 * lr * (1 + math.cos(math.pi * epoch / epochs)) if cosine else lr
        order = (np.stack([rng.permutation(n) for rng in rngs]) if shuffle
                 else np.tile(np.arange(n), (n_models, 1)))
        for start in range(0, n, batch_size):
            idx = order[:, start:start + batch_size]
            out, acts = mlp_forward(weights, biases, X[models, idx], dropout=dropout, rngs=rngs)
            _mlp_backward(weights, acts, output_grad(out, idx), grad_w, grad_b, dropout)
            step += 1
            m *= beta1
            m += (1 - beta1) * grad
            v *= beta2
            np.multiply(grad, grad, out=tmp)
            v += (1 - beta2) * tmp
            # flat -= rate * m_hat / (sqrt(v_hat) + eps), in place
            np.divide(v, 1 - beta2 ** step, out=tmp)
            np.sqrt(tmp, out=tmp)
            tmp += eps
            np.divide(m, tmp, out=tmp)
            tmp *= rate / (1 - beta1 ** step)
            flat -= tmp
    return weights, biases


def _one_of(net: tuple[list, list], s: int) -> tuple[list, list]:
    """Network ``s`` of a stacked (weights, biases), still stacked (S = 1)."""
    return [w[s:s + 1] for w in net[0]], [b[s:s + 1] for b in net[1]]


def predict_mlp(net: tuple[list, list], X: np.ndarray) -> np.ndarray:
    """Output (n, k) of a single (S = 1) network on X (n, d)."""
    return mlp_forward(*net, np.asarray(X, dtype=np.float32)[None])[0][0]


def _softmax_rows(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)
