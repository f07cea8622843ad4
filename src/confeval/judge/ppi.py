r"""The mean human score of every item, from a judge's scores on all of them and human scores
on a few: the classical estimate, prediction-powered inference (PPI) and PPI++.

Notation: ``n`` labelled items with human scores :math:`Y_i` and judge scores :math:`f_i`;
``N`` unlabelled items with judge scores :math:`\tilde f_j` only (ppi_py's ``Y``, ``Yhat`` and
``Yhat_unlabeled``; the labelled items are not among the unlabelled ones). The estimand is the
population mean :math:`\theta = E[Y]` of the human score, the labelled items a uniform random
sample of all items. Every standard deviation below is the population one (``ddof = 0``), as
ppi_py computes it; :math:`z = \Phi^{-1}(1 - \alpha/2)`; intervals are two-sided, of level
:math:`1 - \alpha`.

* **classical** (ppi_py's ``classical_mean_ci``): :math:`\hat\theta = \bar Y`,
  :math:`\mathrm{se} = \mathrm{sd}(Y)/\sqrt n`, the interval
  :math:`\hat\theta \pm z\,\mathrm{se}` (a normal interval, not Student's t: ppi_py's).
* **PPI with weight** :math:`\lambda` (``ppi_mean_pointestimate`` and ``ppi_mean_ci`` with
  ``lam``): :math:`\hat\theta_\lambda = \lambda\,\bar{\tilde f} + \overline{Y - \lambda f}`,
  :math:`\mathrm{se}^2 = \mathrm{sd}(\lambda\tilde f)^2/N + \mathrm{sd}(Y - \lambda f)^2/n`.
  :math:`\lambda = 1` is PPI (Angelopoulos et al. 2023): the judge's mean corrected by the
  mean error it makes on the labelled items (the rectifier); :math:`\lambda = 0` is the
  classical estimate.
* **PPI++** (``lam=None``): the weight that minimises the variance (Angelopoulos, Duchi and
  Zrnic 2023, power tuning of the mean),
  :math:`\hat\lambda = \widehat{\mathrm{Cov}}(Y, f) / ((1 + n/N)\,\widehat{\mathrm{Var}}(f))`,
  with ppi_py's estimates: the covariance over the labelled items with divisor ``n``, the
  variance over the judge's scores of all ``n + N`` items with divisor ``n + N - 1``; then
  clipped to [0, 1] as ppi_py clips it. A judge that says nothing of the human score gets
  :math:`\hat\lambda \approx 0` (the classical interval), a faithful one
  :math:`\hat\lambda \approx 1` (PPI).

The variance of PPI++ at its optimum is
:math:`\sigma_Y^2 (1 - \rho^2 N/(N + n))/n` (:math:`\rho` the correlation of human and judge
scores): the judge buys the share :math:`\rho^2` of the classical variance, as far as the
unlabelled items are many. :func:`labels_needed` inverts this for a target width.

What is not estimated and says so: one labelled item (no variance, so no interval: a
:class:`ValueError`), no unlabelled item (PPI is then the classical estimate: a
:class:`ValueError` saying so), and a standard error of exactly zero (all the labelled humans
agree, say): the estimate is given, the interval is not (``low`` and ``high`` NaN, with a
``note``), never a zero-width interval.

References
----------
Angelopoulos, Bates, Fannjiang, Jordan and Zrnic (2023), "Prediction-powered inference",
Science 382(6671), 669-674. Angelopoulos, Duchi and Zrnic (2023), "PPI++: Efficient
prediction-powered inference", arXiv:2311.01453. Reference implementation: ppi_py
(``ppi_py.ppi_mean_ci``, ``ppi_py.ppi_mean_pointestimate``,
``ppi_py.baselines.classical_mean_ci``), against which ``tests/judge/test_ppi.py`` checks these
functions to 1e-10.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["METHODS", "CorrectedMean", "LabelPlan", "MeanEstimate", "classical_mean",
           "corrected_mean", "corrected_mean_by_group", "labels_needed", "planned_width",
           "power_tuned_lambda", "ppi_mean", "z_quantile"]

METHODS = ("classical", "ppi", "ppi++")
"""The three estimates of :func:`corrected_mean`, in the order they are reported."""


@dataclasses.dataclass(frozen=True)
class MeanEstimate:
    """One estimate of the mean human score with its two-sided ``1 - alpha`` interval.

    ``lam`` is the judge's weight (0 for the classical estimate, 1 for PPI, tuned for PPI++);
    ``low`` and ``high`` are NaN when the standard error is zero (``note`` says why)."""

    method: str
    estimate: float
    low: float
    high: float
    se: float
    lam: float
    n_labelled: int
    n_unlabelled: int
    alpha: float
    note: str | None = None

    @property
    def width(self) -> float:
        """``high - low`` (NaN when there is no interval)."""
        return self.high - self.low

    def to_dict(self) -> dict[str, Any]:
        """JSON values: ``estimate``, ``low``, ``high``, ``width``, ``se``, ``lambda``,
        ``n_labelled``, ``n_unlabelled``, ``level`` (and ``note`` when there is one); an
        interval not given is ``null``."""
        def num(x: float) -> float | None:
            return None if math.isnan(x) else float(x)

        out = {"estimate": float(self.estimate), "low": num(self.low), "high": num(self.high),
               "width": num(self.width), "se": float(self.se), "lambda": float(self.lam),
               "n_labelled": self.n_labelled, "n_unlabelled": self.n_unlabelled,
               "level": 1 - self.alpha}
        if self.note:
            out["note"] = self.note
        return out


def z_quantile(alpha: float) -> float:
    r""":math:`\Phi^{-1}(1 - \alpha/2)`, the normal quantile of a two-sided ``1 - alpha``
    interval (scipy's ``ndtri``, which ``scipy.stats.norm.ppf`` calls, as ppi_py does)."""
    from scipy.special import ndtri

    _check_alpha(alpha)
    return float(ndtri(1 - alpha / 2.0))


def _check_alpha(alpha: float) -> None:
    if not (isinstance(alpha, (int, float)) and 0 < alpha < 1):
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")


def _vector(values: ArrayLike, what: str) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1:
        raise ValueError(f"{what} must be one-dimensional, got shape {array.shape}")
    if not np.isfinite(array).all():
        raise ValueError(f"{what}: {int((~np.isfinite(array)).sum())} value(s) are NaN or "
                         "infinite")
    return array


def _labelled(y: ArrayLike, yhat: ArrayLike | None = None) -> tuple[np.ndarray, np.ndarray]:
    y = _vector(y, "human scores")
    if y.size == 0:
        raise ValueError("no labelled items: the mean needs human scores")
    if y.size == 1:
        raise ValueError("one labelled item: its variance, and so any interval, cannot be "
                         "estimated from it")
    if yhat is None:
        return y, y
    yhat = _vector(yhat, "judge scores of the labelled items")
    if yhat.size != y.size:
        raise ValueError(f"{y.size} human scores but {yhat.size} judge scores of the "
                         "labelled items")
    return y, yhat


def _unlabelled(yhat_unlabelled: ArrayLike) -> np.ndarray:
    values = _vector(yhat_unlabelled, "judge scores of the unlabelled items")
    if values.size == 0:
        raise ValueError("no unlabelled items: PPI is then the classical estimate, the mean "
                         "of the human scores (classical_mean)")
    return values


def _estimate(method: str, estimate: float, se: float, lam: float, n: int, big_n: int,
              alpha: float, note: str | None = None) -> MeanEstimate:
    """The interval ``estimate ± z se``; none (NaN ends, a note) when ``se`` is zero."""
    if se > 0:
        half = z_quantile(alpha) * se
        low, high = estimate - half, estimate + half
    else:
        _check_alpha(alpha)
        low = high = math.nan
        why = ("zero variance: every labelled human score is the same"
               if method == "classical" else
               "zero variance: the judge's error on the labelled items and its scores on the "
               "unlabelled ones do not vary")
        note = f"{why}, so no interval can be estimated" + (f"; {note}" if note else "")
    return MeanEstimate(method, float(estimate), float(low), float(high), float(se),
                        float(lam), n, big_n, float(alpha), note)


def classical_mean(y: ArrayLike, alpha: float = 0.1) -> MeanEstimate:
    r"""The mean of the labelled human scores with its normal interval (ppi_py's
    ``classical_mean_ci``).

    .. math:: \hat\theta = \bar Y, \qquad
              \hat\theta \pm \Phi^{-1}(1 - \alpha/2)\,\mathrm{sd}(Y)/\sqrt n

    with the population standard deviation (``ddof = 0``).

    Parameters
    ----------
    y : array_like, shape (n,)
        Human scores of the labelled items (n >= 2).
    alpha : float
        The interval's miscoverage: level ``1 - alpha``.

    Returns
    -------
    MeanEstimate
        ``lam = 0``, ``n_unlabelled = 0``.

    Examples
    --------
    >>> r = classical_mean([1, 2, 3, 4], alpha=0.1)
    >>> round(r.estimate, 4), round(r.low, 4), round(r.high, 4)
    (2.5, 1.5805, 3.4195)
    """
    y, _ = _labelled(y)
    return _estimate("classical", y.mean(), y.std() / math.sqrt(y.size), 0.0, y.size, 0,
                     alpha)


def power_tuned_lambda(y: ArrayLike, yhat: ArrayLike, yhat_unlabelled: ArrayLike
                       ) -> float:
    r"""PPI++'s weight of the judge for the mean: ppi_py's ``lam=None`` rule, clipped to [0, 1].

    .. math:: \hat\lambda = \mathrm{clip}\left(
              \frac{\frac1n \sum_i (Y_i - \bar Y)(f_i - \bar f)}
                   {(1 + n/N)\, s^2_{f \cup \tilde f}}, 0, 1\right)

    where :math:`s^2_{f \cup \tilde f}` is the sample variance (divisor ``n + N - 1``) of the
    judge's scores of all ``n + N`` items (Angelopoulos, Duchi and Zrnic 2023;
    ppi_py's ``_calc_lam_glm`` with the identity Hessian). When the judge gives every item the
    same score the ratio is 0/0: the judge carries no information and the weight is 0.

    Parameters
    ----------
    y, yhat : array_like, shape (n,)
        Human and judge scores of the labelled items.
    yhat_unlabelled : array_like, shape (N,)
        Judge scores of the unlabelled items.

    Returns
    -------
    float
        The weight in [0, 1].
    """
    y, yhat = _labelled(y, yhat)
    unl = _unlabelled(yhat_unlabelled)
    return _tuned_lambda(y, yhat, unl)[0]


def _dot(a: np.ndarray, b: np.ndarray) -> float:
    """The sum of ``a * b``, by numpy's pairwise summation (``np.dot`` goes to BLAS, whose
    threads cost milliseconds on a busy machine for a sum of microseconds)."""
    return float((a * b).sum())


def _tuned_lambda(y: np.ndarray, yhat: np.ndarray, unl: np.ndarray) -> tuple[float, str | None]:
    n, big_n = y.size, unl.size
    cov = _dot(y - y.mean(), yhat - yhat.mean()) / n
    # the variance of the judge's scores of all n + N items, without concatenating them
    centre = (yhat.sum() + unl.sum()) / (n + big_n)
    squares = _dot(yhat - centre, yhat - centre) + _dot(unl - centre, unl - centre)
    var = squares / (n + big_n - 1)
    if var == 0:
        return 0.0, ("the judge gives every item the same score: its weight is 0 (the "
                     "classical estimate)")
    return float(np.clip(cov / ((1 + n / big_n) * var), 0.0, 1.0)), None


def ppi_mean(y: ArrayLike, yhat: ArrayLike, yhat_unlabelled: ArrayLike, alpha: float = 0.1,
             lam: float | None = 1.0) -> MeanEstimate:
    r"""The prediction-powered mean with its normal interval (ppi_py's
    ``ppi_mean_pointestimate`` and ``ppi_mean_ci``).

    .. math:: \hat\theta_\lambda = \lambda\,\frac1N\sum_j \tilde f_j
              + \frac1n\sum_i (Y_i - \lambda f_i), \qquad
              \mathrm{se}^2 = \frac{\mathrm{sd}(\lambda \tilde f)^2}{N}
              + \frac{\mathrm{sd}(Y - \lambda f)^2}{n}

    and the interval :math:`\hat\theta_\lambda \pm \Phi^{-1}(1 - \alpha/2)\,\mathrm{se}`
    (population standard deviations). ``lam=1`` is PPI (Angelopoulos et al. 2023), ``lam=None``
    PPI++ with :func:`power_tuned_lambda` (Angelopoulos, Duchi and Zrnic 2023).

    Parameters
    ----------
    y, yhat : array_like, shape (n,)
        Human and judge scores of the labelled items (n >= 2).
    yhat_unlabelled : array_like, shape (N,)
        Judge scores of the unlabelled items (N >= 1).
    alpha : float
        The interval's miscoverage: level ``1 - alpha``.
    lam : float or None
        The judge's weight; None tunes it (PPI++).

    Returns
    -------
    MeanEstimate
        ``method`` is ``"ppi++"`` for ``lam=None``, else ``"ppi"``; ``lam`` the weight used.

    Examples
    --------
    >>> r = ppi_mean([1, 2, 3, 4], [1, 2, 4, 4], [2, 3, 5, 4, 4, 3])
    >>> round(r.estimate, 4), round(r.low, 4), round(r.high, 4)
    (3.25, 2.515, 3.985)
    """
    y, yhat = _labelled(y, yhat)
    unl = _unlabelled(yhat_unlabelled)
    note = None
    if lam is None:
        lam, note = _tuned_lambda(y, yhat, unl)
        method = "ppi++"
    else:
        lam = float(lam)
        if not math.isfinite(lam):
            raise ValueError(f"lam must be a finite number, got {lam!r}")
        method = "ppi"
    rectifier = y - lam * yhat
    estimate = lam * unl.mean() + rectifier.mean()
    se = math.sqrt((lam * unl).var() / unl.size + rectifier.var() / y.size)
    return _estimate(method, estimate, se, lam, y.size, unl.size, alpha, note)


@dataclasses.dataclass(frozen=True)
class CorrectedMean:
    """The three estimates of one set of items (:data:`METHODS`), or why there are none.

    ``methods`` maps ``classical``, ``ppi`` and ``ppi++`` to their :class:`MeanEstimate`;
    it is empty when ``skipped`` says why the items could not be estimated (a group with one
    labelled item, say). ``judge_mean`` is the judge's own mean over all ``n + N`` items —
    what one would report trusting the judge."""

    n_labelled: int
    n_unlabelled: int
    alpha: float
    methods: Mapping[str, MeanEstimate]
    judge_mean: float | None = None
    skipped: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"n_labelled": self.n_labelled,
                               "n_unlabelled": self.n_unlabelled, "level": 1 - self.alpha,
                               "judge_mean": self.judge_mean}
        if self.skipped:
            out["skipped"] = self.skipped
        else:
            out["methods"] = {name: m.to_dict() for name, m in self.methods.items()}
        return out


def corrected_mean(y: ArrayLike, yhat: ArrayLike, yhat_unlabelled: ArrayLike,
                   alpha: float = 0.1) -> CorrectedMean:
    """The classical, PPI (lambda = 1) and PPI++ (tuned lambda) estimates of the mean human
    score of all items, each with its two-sided ``1 - alpha`` interval.

    Parameters
    ----------
    y, yhat : array_like, shape (n,)
        Human and judge scores of the labelled items (n >= 2).
    yhat_unlabelled : array_like, shape (N,)
        Judge scores of the unlabelled items (N >= 1).
    alpha : float
        The intervals' miscoverage.

    Returns
    -------
    CorrectedMean

    Examples
    --------
    >>> res = corrected_mean([1, 2, 3, 4], [1, 2, 4, 4], [2, 3, 5, 4, 4, 3])
    >>> {k: round(m.estimate, 4) for k, m in res.methods.items()}
    {'classical': 2.5, 'ppi': 3.25, 'ppi++': 2.9095}
    """
    y, yhat = _labelled(y, yhat)
    unl = _unlabelled(yhat_unlabelled)
    methods = {"classical": classical_mean(y, alpha), "ppi": ppi_mean(y, yhat, unl, alpha, 1.0),
               "ppi++": ppi_mean(y, yhat, unl, alpha, None)}
    judge = (yhat.sum() + unl.sum()) / (y.size + unl.size)
    return CorrectedMean(y.size, unl.size, float(alpha), methods, float(judge))


def corrected_mean_by_group(y: ArrayLike, yhat: ArrayLike, groups: Sequence | np.ndarray,
                            yhat_unlabelled: ArrayLike,
                            groups_unlabelled: Sequence | np.ndarray,
                            alpha: float = 0.1) -> dict[str, CorrectedMean]:
    """:func:`corrected_mean` within each group (a category of the items): the labelled and
    unlabelled items of the group only, so each group's mean is corrected by the judge's
    error in that group.

    A group that cannot be estimated — fewer than two labelled items, or no unlabelled one —
    is kept with ``skipped`` saying why, never dropped.

    Parameters
    ----------
    y, yhat : array_like, shape (n,)
        Human and judge scores of the labelled items.
    groups : array_like, shape (n,)
        The group of each labelled item.
    yhat_unlabelled : array_like, shape (N,)
        Judge scores of the unlabelled items.
    groups_unlabelled : array_like, shape (N,)
        The group of each unlabelled item.
    alpha : float
        The intervals' miscoverage.

    Returns
    -------
    dict
        Group name (as text, sorted) -> :class:`CorrectedMean`.
    """
    _check_alpha(alpha)
    y, yhat = _vector(y, "human scores"), _vector(yhat, "judge scores of the labelled items")
    unl = _vector(yhat_unlabelled, "judge scores of the unlabelled items")
    g = np.asarray(groups).astype(str)
    gu = np.asarray(groups_unlabelled).astype(str)
    if not (g.size == y.size == yhat.size) or gu.size != unl.size:
        raise ValueError("each item needs its group: the lengths of the scores and of the "
                         "groups differ")
    out = {}
    for name in sorted(set(g.tolist()) | set(gu.tolist())):
        here, there = g == name, gu == name
        n, big_n = int(here.sum()), int(there.sum())
        judge = float((yhat[here].sum() + unl[there].sum()) / (n + big_n))
        if n < 2 or big_n == 0:
            why = ("no labelled item" if n == 0 else "one labelled item: no variance, no "
                   "interval" if n == 1 else "no unlabelled item: PPI is the classical "
                   "estimate")
            out[name] = CorrectedMean(n, big_n, float(alpha), {}, judge, why)
            continue
        out[name] = corrected_mean(y[here], yhat[here], unl[there], alpha)
    return out


@dataclasses.dataclass(frozen=True)
class LabelPlan:
    """How many labelled items a target interval width needs (:func:`labels_needed`).

    ``classical`` and ``ppi_plus_plus`` are the numbers of labels; ``None`` where no number
    of labels up to the items there are (``n_items``) reaches the width with PPI++ (the
    classical count is reported whatever it is, with ``classical_reachable``)."""

    width: float
    alpha: float
    n_items: int
    n_labelled_now: int
    classical: int
    classical_reachable: bool
    ppi_plus_plus: int | None
    lam_at_plan: float | None
    sd_human: float
    sd_judge: float
    correlation: float | None

    def to_dict(self) -> dict[str, Any]:
        return {"target_width": self.width, "level": 1 - self.alpha, "n_items": self.n_items,
                "n_labelled_now": self.n_labelled_now, "classical": self.classical,
                "classical_reachable": self.classical_reachable,
                "ppi++": self.ppi_plus_plus, "lambda_at_plan": self.lam_at_plan,
                "sd_human": self.sd_human, "sd_judge": self.sd_judge,
                "correlation": self.correlation}


def _moments(y: np.ndarray, yhat: np.ndarray, unl: np.ndarray) -> dict[str, float]:
    """The variances the plan uses: of the humans, of the judge on the labelled items, their
    covariance (divisor n), and of the judge on all items (divisor n + N)."""
    every = np.concatenate([yhat, unl])
    return {"var_y": float(y.var()), "var_f": float(yhat.var()),
            "cov": _dot(y - y.mean(), yhat - yhat.mean()) / y.size,
            "var_all": float(every.var())}


def planned_width(n: ArrayLike, n_items: int, moments: Mapping[str, float], alpha: float,
                  method: str = "ppi++") -> tuple[np.ndarray, np.ndarray]:
    r"""The interval width (and the weight) predicted with ``n`` labelled items among
    ``n_items`` judged ones (the other ``N = n_items - n`` unlabelled), from the variances in
    ``moments`` (``var_y``, ``var_f``, ``cov``, ``var_all``).

    .. math:: V(n, \lambda) = \frac{\lambda^2 s^2_{\mathrm{all}}}{N}
              + \frac{s_Y^2 - 2\lambda c + \lambda^2 s_f^2}{n}, \qquad
              w = 2\,\Phi^{-1}(1 - \alpha/2)\sqrt{V(n, \lambda)}

    — the squared standard error of :func:`ppi_mean` with the sample moments replaced by
    these. ``classical``: :math:`\lambda = 0`; ``ppi``: :math:`\lambda = 1`; ``ppi++``: the
    minimiser over [0, 1], :math:`\lambda^* = \mathrm{clip}(c/(s_f^2 + s^2_{\mathrm{all}}
    n/N), 0, 1)` (V is a convex quadratic in :math:`\lambda`, so clipping its stationary point
    gives the constrained minimum).
    """
    n = np.asarray(n, dtype=np.float64)
    big_n = n_items - n
    var_y, var_f, cov, var_all = (moments[k] for k in ("var_y", "var_f", "cov", "var_all"))
    if method == "classical":
        lam = np.zeros_like(n)
    elif method == "ppi":
        lam = np.ones_like(n)
    elif method == "ppi++":
        with np.errstate(divide="ignore", invalid="ignore"):
            denom = var_f + var_all * n / big_n
            lam = np.where(denom > 0, np.clip(cov / np.where(denom > 0, denom, 1.0), 0, 1), 0.0)
    else:
        raise ValueError(f"unknown method {method!r}; choose from {', '.join(METHODS)}")
    with np.errstate(divide="ignore", invalid="ignore"):
        imputed = np.where(lam > 0, lam**2 * var_all / np.where(big_n > 0, big_n, 1.0), 0.0)
        imputed = np.where((lam > 0) & (big_n <= 0), np.inf, imputed)
        variance = imputed + np.maximum(var_y - 2 * lam * cov + lam**2 * var_f, 0.0) / n
    return 2 * z_quantile(alpha) * np.sqrt(variance), lam


def labels_needed(y: ArrayLike, yhat: ArrayLike, yhat_unlabelled: ArrayLike, width: float,
                  alpha: float = 0.1) -> LabelPlan:
    r"""How many human labels an interval of full width ``width`` needs, by the classical
    estimate and by PPI++, from the variances the labelled items show.

    The judged items are the ``n_items = n + N`` items given; labelling ``m`` of them leaves
    ``n_items - m`` unlabelled. With the plug-in variances (:func:`planned_width`):

    * classical: :math:`m = \lceil (2 z\, s_Y / w)^2 \rceil` (no finite-population
      correction, as the interval has none);
    * PPI++: the smallest ``m`` in ``2 .. n_items - 1`` whose predicted width
      :math:`2 z \sqrt{V(m, \lambda^*(m))}` is at most ``w`` (every ``m`` is evaluated: with
      ``n_items`` fixed, labelling more leaves fewer unlabelled items, so the width need not
      fall monotonically). Where the weight is not clipped this is the root of
      :math:`\sigma_Y^2 (1 - \rho^2 N/(N + m))/m = (w/2z)^2` with :math:`N = n_items - m`,
      about :math:`(1 - \rho^2)` times the classical count when N is large.

    The prediction is as good as the variances: it is checked against the widths realised
    on simulated data in ``tests/judge/test_ppi.py``.

    Parameters
    ----------
    y, yhat : array_like, shape (n,)
        Human and judge scores of the labelled items now (n >= 2).
    yhat_unlabelled : array_like, shape (N,)
        Judge scores of the unlabelled items now.
    width : float
        The full width ``high - low`` wanted.
    alpha : float
        The interval's miscoverage.

    Returns
    -------
    LabelPlan
    """
    if not (isinstance(width, (int, float)) and math.isfinite(width) and width > 0):
        raise ValueError(f"the target width must be a positive number, got {width!r}")
    y, yhat = _labelled(y, yhat)
    unl = _unlabelled(yhat_unlabelled)
    z = z_quantile(alpha)
    moments = _moments(y, yhat, unl)
    n_items = y.size + unl.size
    sd_y = math.sqrt(moments["var_y"])
    classical = max(2, math.ceil((2 * z * sd_y / width) ** 2))
    candidates = np.arange(2, n_items, dtype=np.int64)
    widths, lams = planned_width(candidates, n_items, moments, alpha, "ppi++")
    reached = np.flatnonzero(widths <= width)
    ppi_n = int(candidates[reached[0]]) if reached.size else None
    lam = float(lams[reached[0]]) if reached.size else None
    sd_f = math.sqrt(moments["var_f"])
    corr = moments["cov"] / (sd_y * sd_f) if sd_y > 0 and sd_f > 0 else None
    return LabelPlan(float(width), float(alpha), n_items, y.size, classical,
                     classical <= n_items, ppi_n, lam, sd_y, math.sqrt(moments["var_all"]),
                     corr)
