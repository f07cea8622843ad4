"""Boosted conformal intervals (Xie, Barber and Candès, 2024): Boosted LCP and Boosted CQR.

A baseline conformity score is refined by gradient boosting on a differentiable proxy of the
conformal interval length, with the number of boosting rounds chosen by K-fold
cross-validation on the fitting rows; the boosted score is then calibrated as usual.

``boosted_lcp`` starts from the Local score |y - mu(x)| / |sigma(x)| with mu and sigma random
forests (1,000 trees in the paper, 100 here by default; leaves of at least 40 rows, one
feature per split, as the authors' baseline) — sigma fitted to the in-sample absolute
residuals. Interval: mu +- q |sigma|. Proxy length: 2 mean|sigma| Q(scores).

``boosted_cqr`` starts from the CQR score max(lo(x) - y, y - hi(x)) with quantile regressors
at alpha/2 and 1 - alpha/2 (``base``, histogram gradient boosting by default). Interval:
[lo - q, hi + q]. Proxy length: mean(hi - lo) + 2 Q(scores).

Q is the Harrell–Davis estimate of the (1 - alpha) quantile of the scores, a weighted sum of
their order statistics. Each round fits one depth-1 regression tree (a stump) per coordinate
(sigma then mu; lo then hi) to the gradient of the proxy, with unit Hessians and an L2 leaf
penalty of 1 as XGBoost's defaults, and adds ``learning_rate`` (0.02) times it; at most
``max_rounds`` rounds (200; the paper's runs allowed 500), 5 folds.

Choices of ours, and why
------------------------
* The order statistics are sorted exactly (the gradient of Q is its weight at the item's
  rank) instead of the authors' soft sort: Harrell–Davis weights already spread the
  quantile over many neighbouring ranks, and exact sorting needs no extra dependency.
* Stumps are fitted by our own vectorised exact-split search (cumulative gradient sums over
  each pre-sorted feature), not by XGBoost: the whole tree is a few numpy operations on the
  few features of a judge, and xgboost stays out of the dependencies.
* With unit Hessians a leaf moves by the *mean* gradient of a loss that is itself a mean, so
  one round changes the intervals by O(learning_rate / n); on a few thousand judge items the
  cross-validated boosting changes the baseline little. That is the published algorithm, and
  it is what the VLM-judge paper's numbers show.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import beta
from sklearn.model_selection import KFold

from ._interval_base import IntervalMethod, fitted_base
from .quantile import conformal_quantile

__all__ = ["BoostedCQR", "BoostedLocal", "fit_stump", "harrell_davis_weights"]

_EPS = 1e-6  # keeps |sigma| away from zero in the Local score, as the authors' code


def harrell_davis_weights(n: int, level: float) -> np.ndarray:
    """Weights w_1..w_n of the order statistics in the Harrell–Davis estimate of the
    ``level`` quantile: w_i = I(i/n) - I((i-1)/n), I the Beta((n+1) level, (n+1)(1-level))
    distribution function."""
    a, b = (n + 1) * level, (n + 1) * (1 - level)
    return np.diff(beta.cdf(np.arange(n + 1) / n, a, b))


class _StumpContext:
    """What every stump fitted on one design matrix shares: each feature's sort order, the
    positions of the cuts that are not valid (between equal values, as flat indices) and the
    leaf-size denominators, repeated for every feature (numpy's broadcasting of an (n - 1, 1)
    column over a few features runs rows of a few elements: ~2x slower)."""

    def __init__(self, X: np.ndarray, lam: float = 1.0) -> None:
        n, d = X.shape
        self.order = np.argsort(X, axis=0, kind="stable")
        self.sorted_X = np.take_along_axis(X, self.order, axis=0)
        self.invalid = np.flatnonzero(~(self.sorted_X[1:] > self.sorted_X[:-1]))
        n_left = np.repeat(np.arange(1, n, dtype=np.float64)[:, None], d, axis=1)
        self.inv_left, self.inv_right = 1 / (n_left + lam), 1 / (n - n_left + lam)
        self.n, self.lam = n, lam


def fit_stump(ctx: _StumpContext, grad: np.ndarray) -> tuple[int, float, float, float]:
    """The depth-1 tree minimising the second-order objective with unit Hessians and L2 leaf
    penalty ``ctx.lam``: returns (feature, threshold, left value, right value), left being
    ``x <= threshold``."""
    left = np.cumsum(grad[ctx.order], axis=0)[:-1]   # gradient sums left of each cut
    total = grad.sum()
    right = total - left
    # gain = left^2 / (n_left + lam) + right^2 / (n_right + lam), the same operations in place
    gain = left * left
    gain *= ctx.inv_left
    right *= right
    right *= ctx.inv_right
    gain += right
    np.put(gain, ctx.invalid, -np.inf)
    best = int(np.argmax(gain))
    k, j = divmod(best, gain.shape[1])
    if not np.isfinite(gain[k, j]):  # constant features: one leaf
        value = -total / (ctx.n + ctx.lam)
        return 0, np.inf, value, value
    threshold = 0.5 * (ctx.sorted_X[k, j] + ctx.sorted_X[k + 1, j])
    return (j, float(threshold), -left[k, j] * ctx.inv_left[k, 0],
            -(total - left[k, j]) * ctx.inv_right[k, 0])


def _apply(stump, X):
    j, threshold, v_left, v_right = stump
    return np.where(X[:, j] <= threshold, v_left, v_right)


def _hd_gradient(scores: np.ndarray, weights: tuple) -> tuple[float, np.ndarray]:
    """Harrell–Davis quantile of ``scores`` and its gradient (the weight at each rank).

    ``weights`` = (w, lo, hi): only ranks lo..hi-1 carry weight above 1e-15 (the Beta
    weights vanish fast away from the target rank), so only that window needs sorting."""
    w, lo, hi = weights
    part = np.argpartition(scores, (lo, hi - 1)) if hi - lo < scores.size else \
        np.arange(scores.size)
    window = part[lo:hi]
    window = window[np.argsort(scores[window], kind="stable")]
    grad = np.zeros_like(scores)
    grad[window] = w
    return float(w @ scores[window]), grad


class _Boosted(IntervalMethod):
    """Boosting of a two-coordinate score (a, b) with cross-validated rounds."""

    def __init__(self, alpha: float = 0.1, *, max_rounds: int = 200,
                 learning_rate: float = 0.02, n_folds: int = 5, **kw) -> None:
        super().__init__(alpha, **kw)
        self.max_rounds, self.learning_rate, self.n_folds = max_rounds, learning_rate, n_folds

    # -- subclass hooks: the coordinates' gradients and the held-out interval length

    def _coordinate_grad(self, which, a, b, y, weights): ...

    def _held_out_length(self, a, b, y) -> float: ...

    def _boost(self, X, y, a, b, rounds, held_out=None):
        """Run ``rounds`` rounds on (X, y) from coordinates (a, b); with ``held_out`` =
        (X_v, y_v, a_v, b_v) also return the held-out proxy length after each round."""
        ctx = _StumpContext(X)
        full = harrell_davis_weights(y.size, min(1.0, 1 - self.alpha))
        keep = np.flatnonzero(full > 1e-15)
        lo, hi = int(keep[0]), int(keep[-1]) + 1
        weights = (full[lo:hi], lo, hi)
        stumps, curve = [], []
        if held_out is not None:
            X_v, y_v, a_v, b_v = held_out
            curve.append(self._held_out_length(a_v, b_v, y_v))
        for _ in range(rounds):
            for which in (0, 1):
                grad = self._coordinate_grad(which, a, b, y, weights)
                stump = fit_stump(ctx, grad)
                step = self.learning_rate * _apply(stump, X)
                a, b = (a + step, b) if which == 0 else (a, b + step)
                stumps.append((which, stump))
                if held_out is not None:
                    step_v = self.learning_rate * _apply(stump, X_v)
                    a_v, b_v = (a_v + step_v, b_v) if which == 0 else (a_v, b_v + step_v)
            if held_out is not None:
                curve.append(self._held_out_length(a_v, b_v, y_v))
        return stumps, np.array(curve)

    def _coordinates(self, X):
        a, b = self._base_predict(X)
        for which, stump in self.stumps:
            step = self.learning_rate * _apply(stump, X)
            if which == 0:
                a = a + step
            else:
                b = b + step
        return a, b

    def _fit_model(self, X, y):
        self._fit_base(X, y)
        a, b = self._base_predict(X)
        curves = []
        if self.max_rounds > 0 and y.size >= 2 * self.n_folds:
            for fit, val in KFold(self.n_folds).split(X):
                _, curve = self._boost(X[fit], y[fit], a[fit], b[fit], self.max_rounds,
                                       held_out=(X[val], y[val], a[val], b[val]))
                curves.append(curve)
        # mean held-out proxy length after 0, 1, ... rounds; the argmin is the chosen number
        self.cv_curve = np.mean(curves, axis=0) if curves else np.array([])
        self.rounds = int(np.argmin(self.cv_curve)) if curves else 0
        self.stumps, _ = self._boost(X, y, a, b, self.rounds)


class BoostedLocal(_Boosted):
    """Boosted LCP: the Local score boosted for length (module docstring)."""

    name = "boosted_lcp"

    def __init__(self, alpha: float = 0.1, *, base: str = "rf", n_trees: int = 100, **kw
                 ) -> None:
        super().__init__(alpha, base=base, **kw)
        self.n_trees = n_trees

    def _fit_base(self, X, y):
        self.mu = fitted_base(self.base, self.seed, X, y, n_trees=self.n_trees)
        self.sigma = fitted_base(self.base, self.seed, X, np.abs(y - self.mu.predict(X)),
                                 n_trees=self.n_trees)

    def _base_predict(self, X):
        return self.sigma.predict(X), self.mu.predict(X)  # coordinate 0 = sigma, 1 = mu

    def _coordinate_grad(self, which, sigma, mu, y, weights):
        n = y.size
        size, miss = np.abs(sigma), np.abs(y - mu)   # each computed once, used twice
        spread = size + _EPS
        scores = miss / spread
        q, dq = _hd_gradient(scores, weights)
        mean_spread = size.mean()
        if which == 0:  # d/d sigma of 2 mean|sigma| Q
            d_score = -miss / spread ** 2 * np.sign(sigma)
            return 2 * q * np.sign(sigma) / n + 2 * mean_spread * dq * d_score
        return 2 * mean_spread * dq * np.sign(mu - y) / spread

    def _held_out_length(self, sigma, mu, y):
        q = conformal_quantile(np.abs(y - mu) / (np.abs(sigma) + _EPS), self.alpha, warn=False)
        return float(2 * q * np.abs(sigma).mean()) if np.isfinite(q) else np.inf

    def _nonconformity(self, X, y):
        sigma, mu = self._coordinates(X)
        return [np.abs(y - mu) / (np.abs(sigma) + _EPS)]

    def _interval(self, X, q):
        sigma, mu = self._coordinates(X)
        with np.errstate(invalid="ignore"):
            half = q[0] * (np.abs(sigma) + _EPS)
        return mu - half, mu + half


class BoostedCQR(_Boosted):
    """Boosted CQR: the CQR score boosted for length (module docstring)."""

    name = "boosted_cqr"

    def __init__(self, alpha: float = 0.1, *, base: str = "hgb", **kw) -> None:
        super().__init__(alpha, base=base, **kw)

    def _fit_base(self, X, y):
        self.q_lo = fitted_base(self.base, self.seed, X, y, quantile=self.alpha / 2)
        self.q_hi = fitted_base(self.base, self.seed, X, y, quantile=1 - self.alpha / 2)

    def _base_predict(self, X):
        return self.q_lo.predict(X), self.q_hi.predict(X)

    def _coordinate_grad(self, which, lo, hi, y, weights):
        n = y.size
        below, above = lo - y, y - hi
        _, dq = _hd_gradient(np.maximum(below, above), weights)
        lower_binds = below >= above
        if which == 0:
            return -1 / n + 2 * dq * lower_binds
        return 1 / n - 2 * dq * ~lower_binds

    def _held_out_length(self, lo, hi, y):
        q = conformal_quantile(np.maximum(lo - y, y - hi), self.alpha, warn=False)
        return float(np.mean(hi - lo) + 2 * q) if np.isfinite(q) else np.inf

    def _nonconformity(self, X, y):
        lo, hi = self._coordinates(X)
        return [np.maximum(lo - y, y - hi)]

    def _interval(self, X, q):
        lo, hi = self._coordinates(X)
        return lo - q[0], hi + q[0]
