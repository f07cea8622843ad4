"""Conformal histogram regression (CHR; Sesia and Romano, 2021) for judge scores.

A black box estimates conditional quantiles of the score at levels 0.01, ..., 0.99; linear
interpolation of those quantiles gives a conditional CDF, and its increments over a fine grid
of bins (width ``bin_width``, from ``low - 1`` to ``high + 1``) a conditional histogram. For
every item the bins form a nested sequence of contiguous intervals, grown from the modal bin
by adding whichever neighbouring bin holds more mass; the conformity score of a label is the
histogram mass of the interval at the step its bin joins. Calibration takes the exact
conformal quantile of those scores, and the prediction interval runs from the lower edge of
its lowest bin to the upper edge of its highest, clipped to the scale.

Choices of ours, and why
------------------------
* The black box is a numpy quantile network in the spirit of the CHR package's ``QNet``
  (two hidden ReLU layers, pinball loss averaged over the 99 levels, outputs sorted so
  quantiles never cross, Adam at a constant rate; ``dropout`` and ``shuffle`` as options),
  with PyTorch-style uniform rather than orthogonal initialisation. A smaller network by
  default (64 hidden units, 50 epochs; the paper's runs used 256 and 500) keeps the
  nine-method sweep fast; on the LLaVA-Critic features it costs 0.06 in mean width against
  a 256-unit, 100-epoch network (3.29 vs 3.23, both covering 0.91), and the intervals are
  conformal whatever the black box.
* The nested sequence is the greedy neighbour growth also used by ordinal APS, rather than
  the package's shortest-window search at each level: it is nested by construction, so a
  single threshold calibrates it, and it is vectorised over items.
* No randomised removal of an end bin: the intervals are conservative rather than exact, by
  at most one bin of mass.

``calibrate=False`` returns the black box's own 1 - alpha histogram bands (the smallest greedy
interval holding 1 - alpha of the mass) with no conformal step. That is what the VLM-judge
paper's CHR row reports (its script builds the bands and never calibrates); with
``same_rows=True``, ``hidden=256``, ``epochs=500``, ``dropout=0.1`` and ``shuffle=False`` (the
package's settings in the paper's script) it approximates the published rows, under-coverage
included.
"""

from __future__ import annotations

import numpy as np

from ._interval_base import IntervalMethod
from ._mlp import _one_of, adam_train, predict_mlp

__all__ = ["CHR", "histogram_from_quantiles", "nested_growth_scores"]


def histogram_from_quantiles(quantiles: np.ndarray, levels: np.ndarray, breaks: np.ndarray
                             ) -> np.ndarray:
    """Bin masses (n, len(breaks) - 1) of the CDF that interpolates each row's quantiles.

    The CDF passes through (breaks[0], 0), (q_k, levels[k]) and (breaks[-1], 1), linearly in
    between; bin j holds CDF(breaks[j + 1]) - CDF(breaks[j]). Every bin then gets 1e-6 more
    mass (renormalised), so a label outside the black box's support still has a finite score.
    """
    q = np.clip(np.sort(np.asarray(quantiles, dtype=np.float64), axis=1), breaks[0], breaks[-1])
    n = q.shape[0]
    # Tied quantiles (frequent on an integer scale) would make a vertical CDF segment; a
    # strictly increasing nudge far below the bin width keeps the interpolation defined. It
    # ends at the tied value, so a point mass at a label stays in the bin that ends there —
    # the bin the label itself is assigned to (bins are closed on the right).
    q = q + (np.arange(q.shape[1]) - (q.shape[1] - 1)) * 1e-9
    xs = np.concatenate([np.full((n, 1), breaks[0] - 1e-6), q,
                         np.full((n, 1), breaks[-1] + 1e-6)], axis=1)
    ps = np.concatenate([[0.0], levels, [1.0]])
    # Per row, the segment holding each break, then linear interpolation inside it.
    pos = (xs[:, :, None] <= breaks[None, None, :]).sum(axis=1) - 1  # (n, B+1)
    pos = np.clip(pos, 0, xs.shape[1] - 2)
    x0 = np.take_along_axis(xs, pos, axis=1)
    x1 = np.take_along_axis(xs, pos + 1, axis=1)
    frac = np.clip((breaks[None, :] - x0) / (x1 - x0), 0.0, 1.0)
    cdf = ps[pos] + frac * (ps[pos + 1] - ps[pos])
    mass = np.diff(cdf, axis=1) + 1e-6
    return mass / mass.sum(axis=1, keepdims=True)


def nested_growth_scores(mass: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each bin, the mass of the greedy contiguous interval at the step the bin joins it,
    and the mass accumulated just before (the interval grows from the modal bin towards the
    heavier neighbour; ties go left). Both (n, B)."""
    n, k = mass.shape
    rows = np.arange(n)
    after = np.empty_like(mass)
    left = right = np.argmax(mass, axis=1)
    total = mass[rows, left].copy()
    after[rows, left] = total
    for _ in range(1, k):
        m_left = np.where(left > 0, mass[rows, np.maximum(left - 1, 0)], -np.inf)
        m_right = np.where(right < k - 1, mass[rows, np.minimum(right + 1, k - 1)], -np.inf)
        go_left = m_left >= m_right
        left = np.where(go_left, left - 1, left)
        right = np.where(go_left, right, right + 1)
        joined = np.where(go_left, left, right)
        total = total + mass[rows, joined]
        after[rows, joined] = total
    return after, after - mass


class CHR(IntervalMethod):
    """Conformal histogram regression; see the module docstring."""

    name = "chr"

    def __init__(self, alpha: float = 0.1, *, epochs: int = 50, hidden: int = 64,
                 batch_size: int = 32, lr: float = 5e-4, bin_width: float = 0.1,
                 dropout: float = 0.0, shuffle: bool = True, calibrate: bool = True,
                 fit_fraction: float = 0.7, **kw) -> None:
        super().__init__(alpha, fit_fraction=fit_fraction, **kw)
        self.epochs, self.hidden, self.batch_size, self.lr = epochs, hidden, batch_size, lr
        self.dropout, self.shuffle = dropout, shuffle
        self.calibrate = calibrate
        self.levels = np.round(np.arange(1, 100) / 100, 2)
        n_bins = round((self.high - self.low + 2) / bin_width)
        self.breaks = np.linspace(self.low - 1, self.high + 1, n_bins + 1)

    def _fit_model(self, X, y):
        self._fit_models_jointly([self], [(X, y)])

    @classmethod
    def _fit_models_jointly(cls, methods, fits):
        first = methods[0]
        taus = first.levels.astype(np.float32)
        above, below = 1 - taus, -taus
        ys = np.stack([y for _, y in fits]).astype(np.float32)
        models = np.arange(len(methods))[:, None]
        along: dict = {}  # (S, b) -> index arrays of the leading axes (take/put_along_axis's)

        def output_grad(out, idx):
            # Pinball loss on the sorted outputs, averaged over rows and levels; the sort is a
            # permutation, so each raw output receives the gradient of the slot it lands in.
            order = np.argsort(out, axis=-1)
            if out.shape[:2] not in along:
                along[out.shape[:2]] = (np.arange(out.shape[0])[:, None, None],
                                        np.arange(out.shape[1])[None, :, None])
            lead = along[out.shape[:2]]
            q = out[lead[0], lead[1], order]
            target = ys[models, idx][..., None]
            g_sorted = np.where(target < q, above, below) / (q.shape[1] * q.shape[2])
            grad = np.empty_like(out)
            grad[lead[0], lead[1], order] = g_sorted
            return grad

        X = np.stack([X for X, _ in fits])
        net = adam_train([X.shape[2], first.hidden, first.hidden, first.levels.size], X,
                         output_grad, epochs=first.epochs, batch_size=first.batch_size,
                         lr=first.lr, rngs=[np.random.default_rng(m.seed) for m in methods],
                         cosine=False, dropout=first.dropout, shuffle=first.shuffle)
        for s, m in enumerate(methods):
            m.net = _one_of(net, s)

    def histogram(self, X: np.ndarray) -> np.ndarray:
        """The black box's conditional histogram over the bins between ``self.breaks``."""
        q = predict_mlp(self.net, X).astype(np.float64)
        return histogram_from_quantiles(q, self.levels, self.breaks)

    def _bin_of(self, y):
        # Bin j covers (breaks[j], breaks[j+1]]; a label exactly on a break belongs below it.
        j = np.searchsorted(self.breaks, y, side="left") - 1
        return np.clip(j, 0, self.breaks.size - 2)

    def _nonconformity(self, X, y):
        after, _ = nested_growth_scores(self.histogram(X))
        return [after[np.arange(y.size), self._bin_of(y)]]

    def fit(self, X, y, groups=None):
        super().fit(X, y, groups)
        if not self.calibrate:  # the black box's nominal 1 - alpha bands, no conformal step
            self.thresholds = [({g: 1 - self.alpha for g in t} if isinstance(t, dict)
                                else 1 - self.alpha) for t in self.thresholds]
        return self

    def _interval(self, X, q):
        after, before = nested_growth_scores(self.histogram(X))
        t = q[0][:, None]
        member = (before < t) if not self.calibrate else (after <= t)
        member[np.arange(after.shape[0]), np.argmin(after, axis=1)] = True  # the modal bin
        idx = np.arange(after.shape[1])
        lo_bin = np.where(member, idx, after.shape[1]).min(axis=1)
        hi_bin = np.where(member, idx, -1).max(axis=1)
        return self.breaks[lo_bin], self.breaks[hi_bin + 1]
