r"""Risk monitoring with late labels: is the deployed selective error above its promise?

When deployed items later get labels, the answered ones (confidence at or above the threshold)
give a stream of errors :math:`X_1, X_2, \ldots \in \{0, 1\}` in the order the labels arrive,
with conditional error rates :math:`\mu_t = P(X_t = 1 \mid \text{the past})`. Under i.i.d.
deployment all :math:`\mu_t` equal the deployed selective error :math:`\mu` (the probability of
a wrong answer among answered items). We keep an anytime-valid confidence sequence for it —
bounds :math:`L_t \le \tilde\mu_t \le U_t` that hold *simultaneously for every t* with
probability at least :math:`1 - \alpha` each (one-sided), so it may be looked at after every
label and acted on at any time. Here :math:`\tilde\mu_t = \sum_{i \le t} \lambda_i\mu_i /
\sum_{i \le t} \lambda_i` is the bet-weighted average of the conditional error rates so far
(:math:`\mu` itself under i.i.d. deployment).

**The bound: predictable plug-in empirical Bernstein** (PrPl-EB; Waudby-Smith and Ramdas
2024, Thm 2, one-sided form), for values in [0, 1]:

.. math::

    \hat\mu_t = \frac{1/2 + \sum_{i \le t} X_i}{t + 1}, \qquad
    \hat\sigma^2_t = \frac{1/4 + \sum_{i \le t} (X_i - \hat\mu_i)^2}{t + 1}, \qquad
    \hat\mu_0 = 1/2,\ \hat\sigma^2_0 = 1/4,

    \lambda_t = \min\!\left(\sqrt{\frac{2 \log(1/\alpha)}{\hat\sigma^2_{t-1}\, t \log(1 + t)}},
    \; c\right), \quad v_t = 4 (X_t - \hat\mu_{t-1})^2, \quad
    \psi_E(\lambda) = \frac{-\log(1 - \lambda) - \lambda}{4},

    L_t, U_t = \frac{\sum_{i \le t} \lambda_i X_i}{\sum_{i \le t} \lambda_i}
    \mp \frac{\log(1/\alpha) + \sum_{i \le t} v_i\, \psi_E(\lambda_i)}{\sum_{i \le t}
    \lambda_i},

clipped to [0, 1], with :math:`c = 1/2`. The bounds are not intersected over time (a running
maximum of :math:`L_t` is valid only for a constant :math:`\mu`; after a drift it can cross
:math:`U_t`). Why this bound: it is closed-form (cumulative sums, vectorised, checkable by
hand), and variance-adaptive — at a selective error of 0.05 the Bernoulli variance is 0.0475,
and a bound that ignores it (Hoeffding, stitched over time) is about
:math:`\sqrt{0.25/0.0475} \approx 2.3` times wider. The betting ("hedged capital") confidence
sequences of the same paper are tighter still but need a search over candidate means at every
step.

**The alarm rule.** The promise is broken when the deployed selective error exceeds the target
:math:`\epsilon`. Alarm at the first answered item :math:`t` with :math:`L_t \ge \epsilon`
(the lower bound reaches the target: evidence, at level :math:`\alpha`, that the error is
above it). Equivalently the wealth of the bet against :math:`\mu \le \epsilon`,

.. math::

    K_t(\epsilon) = \exp\Big(\sum_{i \le t} \lambda_i (X_i - \epsilon)
    - \sum_{i \le t} v_i \psi_E(\lambda_i)\Big),

reaches :math:`1/\alpha`. :math:`K_t(\epsilon)` is a nonnegative supermartingale whenever every
conditional error rate :math:`\mu_t \le \epsilon`: the factor
:math:`\exp(\lambda(X - \mu_t) - \psi_E(\lambda)\,4(X - \hat\mu)^2)` has conditional mean at
most 1 for :math:`X \in [0, 1]`, :math:`\lambda \in [0, 1)` and :math:`\hat\mu` predictable
(the empirical-Bernstein supermartingale of Howard, Ramdas, McAuliffe and Sekhon 2021, on which
the PrPl-EB sequence is built), and replacing :math:`\mu_t` by :math:`\epsilon \ge \mu_t` only
lowers it. By Ville's inequality the alarm is then raised with probability at most
:math:`\alpha`, however long the stream is watched: an alarm is evidence at level
:math:`\alpha` that the error rate of answered items exceeded the target. ``p_value`` is
:math:`\min(1, 1/\max_{s \le t} K_s(\epsilon))`. The upper bound :math:`U_t` is reported
alongside (what the error is at most, at level :math:`\alpha`); the pair is a two-sided
sequence at level :math:`2\alpha`.

What it does not say: the alarm is about the deployed error rate, not about why (the items may
have shifted, or the certified threshold may have been one of the :math:`\delta` of calibration
draws whose promise fails). It weighs every label since monitoring began, early ones most (the
bets :math:`\lambda_t` shrink like :math:`1/\sqrt{t \log t}`), so an error rate that rises late,
after a long good period, is flagged slowly: start a new monitor when the policy is
re-certified. Items that are not answered, or whose labels never arrive, do not enter; if labels
arrive more often for errors (complaints), the stream is biased.

References
----------
Waudby-Smith and Ramdas (2024), "Estimating means of bounded random variables by betting", JRSS
B 86. Howard, Ramdas, McAuliffe and Sekhon (2021), "Time-uniform, nonparametric, nonasymptotic
confidence sequences", Ann. Statist. 49. Ville (1939), *Étude critique de la notion de
collectif*. Podkopaev and Ramdas (2022), "Tracking the risk of a deployed model and detecting
harmful distribution shifts", ICLR (the alarm rule of MAPIE's ``RiskMonitoring``; there the
threshold is a reference upper bound plus a tolerance and the sequence a conjugate-mixture
empirical Bernstein one).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from .._validation import as_float_1d

__all__ = ["DEFAULT_C", "RiskMonitor", "eb_confidence_sequence", "monitor_risk"]

DEFAULT_C = 0.5
"""The cap c on the bets λ_t (Waudby-Smith and Ramdas suggest 1/2 or 3/4)."""


def eb_confidence_sequence(x: ArrayLike, *, alpha: float = 0.05, c: float = DEFAULT_C
                           ) -> dict[str, np.ndarray]:
    r"""PrPl-EB one-sided confidence sequences (module docstring) for values in [0, 1].

    Parameters
    ----------
    x
        Observations in [0, 1], in arrival order; a 2-D array is many independent sequences
        (one per row).
    alpha
        Level of each side, in (0, 1).
    c
        The cap on the bets, in (0, 1).

    Returns
    -------
    dict
        ``lower`` and ``upper`` (clipped to [0, 1]), and the pieces
        ``lam`` (the bets), ``sum_lam`` (:math:`\sum\lambda_i`), ``sum_lam_x``
        (:math:`\sum\lambda_i X_i`) and ``penalty`` (:math:`\sum v_i\psi_E(\lambda_i)`),
        each the shape of ``x``.

    Examples
    --------
    >>> cs = eb_confidence_sequence([1.0], alpha=0.05)
    >>> float(cs["lam"][0]), float(cs["lower"][0]), float(cs["upper"][0])   # one item: no info
    (0.5, 0.0, 1.0)
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if not 0 < c < 1:
        raise ValueError(f"c must be in (0, 1), got {c}")
    x = np.asarray(x, dtype=np.float64)
    if x.ndim not in (1, 2):
        raise ValueError(f"x must be 1-D or 2-D, got shape {x.shape}")
    if x.size and not (np.isfinite(x).all() and x.min() >= 0 and x.max() <= 1):
        raise ValueError("x must be finite and in [0, 1]")
    t = np.arange(1, x.shape[-1] + 1, dtype=np.float64)
    mu = (0.5 + np.cumsum(x, axis=-1)) / (t + 1)                    # mu_hat_t
    sigma2 = (0.25 + np.cumsum((x - mu) ** 2, axis=-1)) / (t + 1)     # sigma2_hat_t
    pad = [(0, 0)] * (x.ndim - 1) + [(1, 0)]
    mu_prev = np.pad(mu, pad, constant_values=0.5)[..., :-1]
    sigma2_prev = np.pad(sigma2, pad, constant_values=0.25)[..., :-1]
    log_a = math.log(1.0 / alpha)
    lam = np.minimum(np.sqrt(2 * log_a / (sigma2_prev * t * np.log1p(t))), c)
    v = 4.0 * (x - mu_prev) ** 2
    psi = (-np.log1p(-lam) - lam) / 4.0
    sum_lam = np.cumsum(lam, axis=-1)
    sum_lam_x = np.cumsum(lam * x, axis=-1)
    penalty = np.cumsum(v * psi, axis=-1)
    centre = sum_lam_x / sum_lam
    margin = (log_a + penalty) / sum_lam
    lower = np.clip(centre - margin, 0.0, 1.0)
    upper = np.clip(centre + margin, 0.0, 1.0)
    return {"lower": lower, "upper": upper, "lam": lam, "sum_lam": sum_lam,
            "sum_lam_x": sum_lam_x, "penalty": penalty}


@dataclass
class RiskMonitor:
    """The confidence sequence of the deployed selective error and its alarm."""

    target: float
    alpha: float
    errors: np.ndarray
    answered_index: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    log_wealth: np.ndarray
    n_labelled: int
    c: float

    @property
    def alarm(self) -> int | None:
        """Index (among the answered, labelled items) of the first :math:`L_t \\ge` target."""
        hits = np.flatnonzero(self.log_wealth >= math.log(1.0 / self.alpha))
        return int(hits[0]) if hits.size else None

    @property
    def p_value(self) -> float:
        """Anytime-valid p-value of "selective error <= target": min(1, 1/max K_t)."""
        if not self.log_wealth.size:
            return 1.0
        top = max(0.0, float(self.log_wealth.max()))
        return max(math.exp(-top), float(np.finfo(np.float64).tiny))

    def to_dict(self) -> dict:
        """JSON-ready summary: the bounds' paths, the alarm (and the labelled item it is),
        ``p_value`` and ``holds`` (no alarm)."""
        alarm = self.alarm
        n = int(self.errors.size)
        return {
            "test": "anytime-valid confidence sequence of the selective error (predictable "
                    "plug-in empirical Bernstein, Waudby-Smith & Ramdas 2024); alarm when "
                    "the lower bound reaches the target",
            "target": self.target, "alpha": self.alpha, "c": self.c,
            "n_labelled": self.n_labelled, "n_answered": n,
            "errors": int(self.errors.sum()),
            "selective_error": float(self.errors.mean()) if n else None,
            "lower": self.lower.tolist(), "upper": self.upper.tolist(),
            "final_lower": float(self.lower[-1]) if n else 0.0,
            "final_upper": float(self.upper[-1]) if n else 1.0,
            "alarm": alarm,
            "alarm_item": None if alarm is None else int(self.answered_index[alarm]),
            "p_value": self.p_value, "holds": alarm is None,
            "informative": n > 0,
            "note": None if n else "no answered, labelled item: nothing was tested",
        }


def monitor_risk(correct: ArrayLike, *, target: float, alpha: float = 0.05,
                 confidence: ArrayLike | None = None, threshold: float | None = None,
                 c: float = DEFAULT_C) -> RiskMonitor:
    r"""Monitor the selective error of deployed, later-labelled items against ``target``.

    Parameters
    ----------
    correct
        1 (right) / 0 (wrong) of each labelled item, in the order the labels arrived.
    target
        The promised selective error, in (0, 1).
    alpha
        Level of the alarm (and of each side of the sequence), in (0, 1).
    confidence, threshold
        Each item's confidence and the policy's threshold: the answered items are those with
        ``confidence >= threshold``. Without them every item counts as answered.
    c
        The cap on the bets.

    Returns
    -------
    RiskMonitor

    Examples
    --------
    >>> import numpy as np
    >>> wrong = (np.random.default_rng(0).uniform(size=2000) < 0.3)    # 30% errors
    >>> m = monitor_risk(~wrong, target=0.1)
    >>> m.alarm is not None and bool(m.lower[m.alarm] >= 0.1)
    True
    """
    if not 0 < target < 1:
        raise ValueError(f"target must be in (0, 1), got {target}")
    y = as_float_1d(correct, "correct", lo=0.0, hi=1.0)
    if (confidence is None) != (threshold is None):
        raise ValueError("give both confidence and threshold, or neither")
    if confidence is not None:
        conf = as_float_1d(confidence, "confidence")
        if conf.shape != y.shape:
            raise ValueError("confidence and correct must have one length")
        answered = np.flatnonzero(conf >= float(threshold))
    else:
        answered = np.arange(y.size)
    errors = 1.0 - y[answered]
    cs = eb_confidence_sequence(errors, alpha=alpha, c=c)
    log_wealth = cs["sum_lam_x"] - target * cs["sum_lam"] - cs["penalty"]
    return RiskMonitor(target=float(target), alpha=float(alpha), errors=errors,
                       answered_index=answered, lower=cs["lower"], upper=cs["upper"],
                       log_wealth=log_wealth, n_labelled=int(y.size), c=float(c))
