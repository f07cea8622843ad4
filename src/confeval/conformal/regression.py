"""Conformal intervals for judge scores from a feature vector (the score-token log-probs).

Every method follows split conformal prediction inside the calibration half of a
calibration/test split: a ``fit_fraction`` share of it (default 0.7, seeded) fits the base
model, the rest computes nonconformity scores, and their exact finite-sample quantile
(:func:`confeval.conformal.conformal_quantile`) sets the interval. Intervals are clipped to the
scale; :mod:`confeval.conformal.intervals` adjusts them to labels.

Methods in this module (base models from scikit-learn; the conformal layer is ours):

``naive``     |y - mu(x)| with mu a gradient-boosted regressor (squared error); mu +- q.
``cqr``       Conformalized quantile regression (Romano, Patterson and Candès, 2019):
              gradient-boosted quantile regressors at alpha/2 and 1 - alpha/2, score
              max(lo - y, y - hi), interval [lo - q, hi + q].
``asym_cqr``  The asymmetric variant (Sesia and Candès, 2020): lower and upper errors
              calibrated separately, each at alpha/2.
``ordinal_aps`` contiguous rating sets on the judge's own distribution (see
              :class:`OrdinalAPS`).
``lvd``       Locally variance-adjusted (Lin, Trivedi and Sun, 2021): |y - mu(x)| / sigma(x),
              sigma a gradient-boosted regressor of the absolute residual fitted on the
              fitting share; mu +- q sigma.
``r2ccp``     Regression-as-classification (Guha et al., 2024); see :class:`R2CCP`.

Every method accepts ``groups`` for Mondrian (group-conditional) thresholds.

Base models: ``base="gbr"`` (default) is scikit-learn's ``GradientBoostingRegressor`` with
its default settings, seeded — the model of the paper's code; with it naive, CQR and
asymmetric CQR reproduce the paper's LLaVA-Critic table (CQR to the fourth decimal).
``base="hgb"`` uses ``HistGradientBoostingRegressor``: faster on large data, and on these
features a much less degenerate CQR (coverage .954, width 3.59 instead of .996 / 3.95).
``base="linear"``: least squares and linear quantile regression, the cheapest.
"""

from __future__ import annotations

import abc
import itertools
import math
import warnings

import numpy as np
import pandas as pd
from sklearn.ensemble import GradientBoostingRegressor, HistGradientBoostingRegressor
from sklearn.linear_model import LinearRegression, QuantileRegressor
from sklearn.model_selection import train_test_split

from .sets import SmallCalibrationWarning, conformal_quantile, mondrian_quantiles

__all__ = ["BASE_MODELS", "INTERVAL_METHODS", "AsymmetricCQR", "CQR", "IntervalMethod",
           "LocallyAdaptive", "OrdinalAPS", "R2CCP", "ordinal_growth",
           "NaiveSplit", "make_method"]


BASE_MODELS = ("gbr", "hgb", "linear")


def _booster(base: str, seed: int, quantile: float | None = None):
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
    if base == "linear":
        if quantile is None:
            return LinearRegression()
        return QuantileRegressor(quantile=quantile, alpha=0.0, solver="highs")
    raise ValueError(f"base must be one of {BASE_MODELS}, got {base!r}")


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
    """

    name = "abstract"
    needs_fit = True  # False: nothing to train, the whole calibration half calibrates

    def __init__(self, alpha: float = 0.1, *, low: float = 1.0, high: float = 5.0,
                 fit_fraction: float = 0.7, seed: int = 0, base: str = "gbr") -> None:
        if not 0 < alpha < 1:
            raise ValueError("alpha must be in (0, 1)")
        if base not in BASE_MODELS:
            raise ValueError(f"base must be one of {BASE_MODELS}, got {base!r}")
        if not 0 < fit_fraction < 1:
            raise ValueError("fit_fraction must be in (0, 1)")
        self.alpha, self.low, self.high, self.base = alpha, low, high, base
        self.fit_fraction, self.seed = fit_fraction, seed

    # ------------------------------------------------------------------ public
    def fit(self, X: np.ndarray, y: np.ndarray, groups: np.ndarray | None = None
            ) -> IntervalMethod:
        X = np.asarray(X, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        g = np.zeros(y.size, dtype=np.int64) if groups is None else np.asarray(groups)
        if self.needs_fit:
            X_fit, X_cal, y_fit, y_cal, _, g_cal = train_test_split(
                X, y, g, train_size=self.fit_fraction, random_state=self.seed)
            self._fit_model(X_fit, y_fit)
        else:
            X_cal, y_cal, g_cal = X, y, g
        self.mondrian = groups is not None
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


class NaiveSplit(IntervalMethod):
    name = "naive"

    def _fit_model(self, X, y):
        self.mu = _booster(self.base, self.seed).fit(X, y)

    def _nonconformity(self, X, y):
        return [np.abs(y - self.mu.predict(X))]

    def _interval(self, X, q):
        center = self.mu.predict(X)
        return center - q[0], center + q[0]


class CQR(IntervalMethod):
    name = "cqr"

    def _fit_model(self, X, y):
        a = self.alpha
        self.q_lo = _booster(self.base, self.seed, quantile=a / 2).fit(X, y)
        self.q_hi = _booster(self.base, self.seed, quantile=1 - a / 2).fit(X, y)

    def _nonconformity(self, X, y):
        return [np.maximum(self.q_lo.predict(X) - y, y - self.q_hi.predict(X))]

    def _interval(self, X, q):
        return self.q_lo.predict(X) - q[0], self.q_hi.predict(X) + q[0]


class AsymmetricCQR(CQR):
    name = "asym_cqr"

    def _levels(self):
        return [self.alpha / 2, self.alpha / 2]

    def _nonconformity(self, X, y):
        return [self.q_lo.predict(X) - y, y - self.q_hi.predict(X)]

    def _interval(self, X, q):
        return self.q_lo.predict(X) - q[0], self.q_hi.predict(X) + q[1]


class LocallyAdaptive(IntervalMethod):
    name = "lvd"
    min_sigma = 1e-3  # keeps a near-zero predicted spread from dividing by zero

    def _fit_model(self, X, y):
        self.mu = _booster(self.base, self.seed).fit(X, y)
        self.sigma = _booster(self.base, self.seed).fit(X, np.abs(y - self.mu.predict(X)))

    def _spread(self, X):
        return np.maximum(self.sigma.predict(X), self.min_sigma)

    def _nonconformity(self, X, y):
        return [np.abs(y - self.mu.predict(X)) / self._spread(X)]

    def _interval(self, X, q):
        center, spread = self.mu.predict(X), self._spread(X)
        with np.errstate(invalid="ignore"):
            half = q[0] * spread
        return center - half, center + half


def ordinal_growth(probs: np.ndarray) -> np.ndarray:
    """The order in which an ordinal set grows from the arg-max rating: at each step the
    neighbour (left or right of the current contiguous run) with the larger probability joins;
    ties go left. Returns, per row, the step (0 = arg-max) at which each rating joins."""
    n, k = probs.shape
    step = np.full((n, k), -1, dtype=np.int64)
    rows = np.arange(n)
    left = right = np.argmax(probs, axis=1)
    step[rows, left] = 0
    for t in range(1, k):
        can_left, can_right = left > 0, right < k - 1
        p_left = np.where(can_left, probs[rows, np.maximum(left - 1, 0)], -np.inf)
        p_right = np.where(can_right, probs[rows, np.minimum(right + 1, k - 1)], -np.inf)
        go_left = p_left >= p_right
        left = np.where(go_left, left - 1, left)
        right = np.where(go_left, right, right + 1)
        step[rows, np.where(go_left, left, right)] = t
    return step


class OrdinalAPS(IntervalMethod):
    """Ordinal adaptive prediction sets (Lu et al., 2022) on the judge's K-rating
    distribution (softmax of the features): contiguous rating sets grown from the arg-max
    (:func:`ordinal_growth`); the score of a rating is the mass of the set at the step it
    joins; the set for q_hat holds the ratings whose score is <= q_hat (the arg-max at least).
    Nothing is fitted, so the whole calibration half calibrates. Intervals are the set's
    lowest and highest rating (already on labels)."""

    name = "ordinal_aps"
    needs_fit = False

    def _scores(self, X):
        probs = np.exp(X - X.max(axis=1, keepdims=True))
        probs /= probs.sum(axis=1, keepdims=True)
        step = ordinal_growth(probs)
        order = np.argsort(step, axis=1)
        cum = np.cumsum(np.take_along_axis(probs, order, axis=1), axis=1)
        return np.take_along_axis(cum, step, axis=1)

    def _nonconformity(self, X, y):
        labels = np.rint(y - self.low).astype(np.int64)
        return [self._scores(X)[np.arange(labels.size), labels]]

    def _interval(self, X, q):
        scores = self._scores(X)
        member = scores <= q[0][:, None]
        member[np.arange(scores.shape[0]), np.argmin(scores, axis=1)] = True
        ratings = self.low + np.arange(scores.shape[1])
        lo = np.where(member, ratings, np.inf).min(axis=1)
        hi = np.where(member, ratings, -np.inf).max(axis=1)
        return lo, hi


class _MLP:
    """A small ReLU network trained with AdamW and a cosine learning-rate schedule, in numpy.

    Written by hand so that R2CCP needs neither torch nor pytorch-lightning; initialised like
    PyTorch's ``nn.Linear`` (uniform in +-1/sqrt(fan_in)) from a seeded Generator.
    """

    def __init__(self, sizes: list[int], rng: np.random.Generator) -> None:
        self.W, self.b = [], []
        for fan_in, fan_out in itertools.pairwise(sizes):
            bound = 1 / math.sqrt(fan_in)
            self.W.append(rng.uniform(-bound, bound, size=(fan_in, fan_out)).astype(np.float32))
            self.b.append(rng.uniform(-bound, bound, size=fan_out).astype(np.float32))

    def forward(self, X: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
        acts = [X]
        h = X
        for i, (W, b) in enumerate(zip(self.W, self.b)):
            h = h @ W + b
            if i < len(self.W) - 1:
                h = np.maximum(h, 0.0)
            acts.append(h)
        return h, acts

    def backward(self, acts: list[np.ndarray], grad_out: np.ndarray, grads_W: list[np.ndarray],
                 grads_b: list[np.ndarray]) -> None:
        """Write the gradients into the given arrays (views of one flat buffer)."""
        g = grad_out
        for i in range(len(self.W) - 1, -1, -1):
            np.dot(acts[i].T, g, out=grads_W[i])
            g.sum(axis=0, out=grads_b[i])
            if i:
                g = (g @ self.W[i].T) * (acts[i] > 0)


def _softmax_rows(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


class R2CCP(IntervalMethod):
    """Regression-as-classification conformal prediction (Guha et al., 2024).

    The score range is cut into ``n_bins`` (50) grid points r_k; a 3-layer ReLU network (256
    hidden units) maps the features to a distribution over them, trained with the authors'
    loss: sum_k p_k |r_k - y|^q (q = 0.5, weight 5) minus the entropy of p (weight 1), AdamW
    (lr 1e-3, batch 32, cosine schedule, ``epochs`` = 100 as in the paper's runs). The
    nonconformity score is minus the density at y, linearly interpolated between grid points;
    the prediction set is where the predicted density (linearly interpolated) is at least the
    calibrated threshold, and the interval is that set's envelope (lowest to highest point),
    as the paper reports it. Fit/calibrate split 80/20 as the reference package.

    Choices of ours: the exact conformal quantile instead of the package's
    ``torch.quantile(scores, alpha)``, and numpy instead of pytorch-lightning.
    """

    name = "r2ccp"

    def __init__(self, alpha: float = 0.1, *, n_bins: int = 50, epochs: int = 100,
                 hidden: int = 256, q_norm: float = 0.5, entropy_weight: float = 1.0,
                 loss_weight: float = 5.0, batch_size: int = 32, lr: float = 1e-3,
                 fit_fraction: float = 0.8, **kw) -> None:
        super().__init__(alpha, fit_fraction=fit_fraction, **kw)
        self.n_bins, self.epochs, self.hidden = n_bins, epochs, hidden
        self.q_norm, self.entropy_weight, self.loss_weight = q_norm, entropy_weight, loss_weight
        self.batch_size, self.lr = batch_size, lr

    def _fit_model(self, X, y):
        rng = np.random.default_rng(self.seed)
        self.grid = np.linspace(y.min(), y.max(), self.n_bins)
        net = _MLP([X.shape[1], self.hidden, self.hidden, self.n_bins], rng)
        # One flat parameter vector with the layers as views into it: one Adam update a step.
        params = net.W + net.b
        flat = np.concatenate([p.ravel() for p in params])
        grad = np.zeros_like(flat)
        views, grad_views, offset = [], [], 0
        for p in params:
            views.append(flat[offset:offset + p.size].reshape(p.shape))
            grad_views.append(grad[offset:offset + p.size].reshape(p.shape))
            offset += p.size
        k = len(net.W)
        net.W, net.b = views[:k], views[k:]
        m, v = np.zeros_like(flat), np.zeros_like(flat)
        tmp = np.empty_like(flat)
        beta1, beta2, eps, step = 0.9, 0.999, 1e-8, 0
        # float32 throughout the training loop, like the reference (torch float32): 2x faster
        X = X.astype(np.float32)
        dist = (np.abs(self.grid[None, :] - y[:, None]) ** self.q_norm).astype(np.float32)
        n = y.size
        for epoch in range(self.epochs):
            lr = 0.5 * self.lr * (1 + math.cos(math.pi * epoch / self.epochs))
            order = rng.permutation(n)
            for start in range(0, n, self.batch_size):
                idx = order[start:start + self.batch_size]
                logits, acts = net.forward(X[idx])
                p = _softmax_rows(logits)
                logp = np.log(np.maximum(p, np.float32(1e-30)))
                # d/dp of  w_e * sum p log p + w_l * sum p * dist ; then through the softmax
                g_p = self.entropy_weight * (logp + 1) + self.loss_weight * dist[idx]
                g_logits = p * (g_p - (g_p * p).sum(axis=1, keepdims=True))
                net.backward(acts, g_logits, grad_views[:k], grad_views[k:])
                step += 1
                m *= beta1
                m += (1 - beta1) * grad
                v *= beta2
                np.multiply(grad, grad, out=tmp)
                v += (1 - beta2) * tmp
                # flat -= lr_t * m_hat / (sqrt(v_hat) + eps), in place
                np.divide(v, 1 - beta2 ** step, out=tmp)
                np.sqrt(tmp, out=tmp)
                tmp += eps
                np.divide(m, tmp, out=tmp)
                tmp *= lr / (1 - beta1 ** step)
                flat -= tmp
        self.net = net

    def _density(self, X):
        return _softmax_rows(self.net.forward(X.astype(np.float32))[0].astype(np.float64))

    def _density_at(self, X, y):
        dens = self._density(X)
        step = self.grid[1] - self.grid[0]
        pos = np.clip((y - self.grid[0]) / step, 0, self.n_bins - 1)
        lo = np.floor(pos).astype(np.int64)
        hi = np.minimum(lo + 1, self.n_bins - 1)
        w = pos - lo
        rows = np.arange(y.size)
        return dens[rows, lo] * (1 - w) + dens[rows, hi] * w

    def _nonconformity(self, X, y):
        return [-self._density_at(X, y)]

    def _interval(self, X, q):
        dens = self._density(X)
        threshold = -q[0]  # per row; -inf where the calibration was too small
        above = dens >= threshold[:, None]
        # Envelope of the region above the threshold, with linear crossing points.
        first = np.argmax(above, axis=1)
        last = self.n_bins - 1 - np.argmax(above[:, ::-1], axis=1)
        rows = np.arange(X.shape[0])

        def crossing(i_out, i_in):
            d_out, d_in = dens[rows, i_out], dens[rows, i_in]
            with np.errstate(divide="ignore", invalid="ignore"):
                frac = np.where(d_in != d_out, (threshold - d_out) / (d_in - d_out), 1.0)
            return self.grid[i_out] + (self.grid[i_in] - self.grid[i_out]) * frac

        lo = np.where(first > 0, crossing(np.maximum(first - 1, 0), first), self.grid[0])
        hi = np.where(last < self.n_bins - 1,
                      crossing(np.minimum(last + 1, self.n_bins - 1), last), self.grid[-1])
        none = ~above.any(axis=1)  # nothing reaches the threshold: the package gives the range
        lo = np.where(none, self.grid[0], lo)
        hi = np.where(none, self.grid[-1], hi)
        return lo, hi


INTERVAL_METHODS = {cls.name: cls for cls in (NaiveSplit, CQR, AsymmetricCQR, LocallyAdaptive,
                                              OrdinalAPS, R2CCP)}


def make_method(name: str, **options) -> IntervalMethod:
    if name not in INTERVAL_METHODS:
        raise ValueError(f"unknown interval method {name!r}; available: "
                         f"{', '.join(INTERVAL_METHODS)}")
    return INTERVAL_METHODS[name](**options)
