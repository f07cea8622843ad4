r"""An online test of exchangeability for a stream: a conformal test martingale.

Each new item :math:`s_t` of the stream gets a randomised conformal p-value against everything
seen before it — the calibration values and the earlier stream items, :math:`h_t = n + t - 1`
values in all:

.. math::

    p_t = \frac{\#\{i < t : z_i > s_t\} + U_t\,(\#\{i < t : z_i = s_t\} + 1)}{h_t + 1},
    \qquad U_t \sim \mathrm{Uniform}(0, 1) \text{ i.i.d.}

Under exchangeability of the whole sequence (calibration then stream) the p-values are
independent and uniform on [0, 1], ties included (Vovk, Nouretdinov and Gammerman 2003, Thm 1;
the randomisation is what makes them exactly uniform when values repeat, as verbalised
confidences on a 0.05 grid do). The :math:`U_t` come from ``numpy.random.default_rng(seed)``, one
per item in stream order (the same draws as MAPIE's ``OnlineMartingaleTest`` with
``random_state=seed``).

**Betting function: the simple jumper** (Vovk, Gammerman and Shafer 2005, §7.1; MAPIE's
``"jumper_martingale"``). Three experts bet with :math:`f_\epsilon(p) = 1 + \epsilon(p - 1/2)`,
:math:`\epsilon \in \{-1, 0, 1\}` (each integrates to 1 over [0, 1]); before each bet a share
``jump`` :math:`J` of the capital is redistributed evenly among them:

.. math::

    w^{(\epsilon)}_t = \Big((1 - J)\, w^{(\epsilon)}_{t-1} + \tfrac{J}{3} M_{t-1}\Big)
    f_\epsilon(p_t), \qquad M_t = \sum_\epsilon w^{(\epsilon)}_t, \quad M_0 = 1,
    \; w^{(\epsilon)}_0 = 1/3.

It bets both ways — on p-values near 0 (the stream's values larger than before) and near 1
(smaller: a model less confident on new items) — and the jumps let it switch sides when the
stream does, which a single power martingale :math:`\prod \epsilon p_t^{\epsilon - 1}` (one side
only) cannot. The path is computed with the weights renormalised each step and :math:`\log M_t`
accumulated, so it never overflows; it equals MAPIE's unnormalised recursion to rounding.

**The alarm (Ville's inequality).** :math:`M_t` is a nonnegative martingale with
:math:`M_0 = 1` under exchangeability, so :math:`P(\sup_t M_t \ge 1/\alpha) \le \alpha`
(Ville 1939): raising the alarm at the first :math:`t` with :math:`M_t \ge 1/\alpha` has false
alarm probability at most :math:`\alpha` however long the stream is watched, and
:math:`p = \min(1, 1/\max_{s \le t} M_s)` is an anytime-valid p-value.

What it detects is a *change*: each item joins the history, so once a shifted stream has
settled, its new items look like the recent past and the martingale stops growing (an alarm
already raised stands). To ask whether a fixed batch differs from the calibration set, the
batch test is more powerful (``tests/validity/test_shared_data.py`` measures both).

MAPIE rejects when :math:`M_t > 1/\alpha`; the two differ only if :math:`M_t` equals
:math:`1/\alpha` exactly.

References
----------
Vovk, Nouretdinov and Gammerman (2003), "Testing exchangeability on-line", ICML. Vovk,
Gammerman and Shafer (2005), *Algorithmic Learning in a Random World*, Springer, §7.1. Vovk
(2021), "Testing randomness online", Statistical Science 36. Ville (1939), *Étude critique de
la notion de collectif*. Fedorova, Gammerman, Nouretdinov and Vovk (2012), "Plug-in martingales
for testing exchangeability on-line", ICML.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from .._validation import as_float_1d

__all__ = ["BETTING", "MartingaleResult", "conformal_martingale", "jumper_log_martingale",
           "online_p_values"]

BETTING = ("jumper",)
"""The betting functions offered (module docstring)."""

DEFAULT_JUMP = 0.01
"""The simple jumper's J (MAPIE's and Vovk et al.'s default)."""

PATH_CAP = 1e300
"""Martingale values above this are reported as this in paths (the alarm uses the logs)."""

_BLOCK = 512
"""Stream items compared with one another in blocks of this many (memory ~ _BLOCK^2)."""


def online_p_values(calibration: ArrayLike, stream: ArrayLike, *,
                    seed: int | np.random.Generator | None = 0) -> np.ndarray:
    r"""Randomised conformal p-value of each stream item against the calibration values and
    the earlier stream items (module docstring), larger values being the stranger ones.

    The counts are exact integers: against the sorted calibration set by binary search,
    against the earlier stream items block by block (a merged sorted copy of the earlier
    blocks, and the strict lower triangle within a block). Time O(m log m + m B) for a stream
    of m items, B = 512.

    Examples
    --------
    >>> u = np.random.default_rng(0).uniform(size=2)
    >>> p = online_p_values([1.0, 2.0, 3.0], [4.0, 0.0], seed=0)
    >>> bool(p[0] == u[0] / 4), bool(p[1] == (4 + u[1]) / 5)   # 4 > all 3; 0 < all 4 before
    (True, True)
    """
    cal = np.sort(as_float_1d(calibration, "calibration"), kind="stable")
    s = as_float_1d(stream, "stream")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    u = rng.uniform(size=s.size)
    right = np.searchsorted(cal, s, side="right")
    greater = (cal.size - right).astype(np.float64)
    equal = (right - np.searchsorted(cal, s, side="left")).astype(np.float64)
    earlier = np.empty(0)
    for b0 in range(0, s.size, _BLOCK):
        block = s[b0:b0 + _BLOCK]
        if earlier.size:
            r = np.searchsorted(earlier, block, side="right")
            greater[b0:b0 + block.size] += earlier.size - r
            equal[b0:b0 + block.size] += r - np.searchsorted(earlier, block, side="left")
        before = np.tri(block.size, k=-1, dtype=bool)       # [t, j]: j earlier than t
        greater[b0:b0 + block.size] += ((block[None, :] > block[:, None]) & before).sum(axis=1)
        equal[b0:b0 + block.size] += ((block[None, :] == block[:, None]) & before).sum(axis=1)
        ordered = np.sort(block)
        earlier = np.insert(earlier, np.searchsorted(earlier, ordered), ordered)
    history = cal.size + np.arange(s.size, dtype=np.float64)
    # the same floating operations as MAPIE's compute_p_value
    return (greater + u * (equal + 1)) / (history + 1.0)


def jumper_log_martingale(p_values: ArrayLike, *, jump: float = DEFAULT_JUMP) -> np.ndarray:
    r""":math:`\log M_t` of the simple jumper martingale over ``p_values`` (module docstring),
    one value per p-value.

    Examples
    --------
    With equal weights the three bets average to 1; after p = 1 the weights are (1/6, 1/3,
    1/2), mixed to (0.168333, 0.333333, 0.498333), and the next p = 1 pays
    0.168333 × 0.5 + 0.333333 + 0.498333 × 1.5 = 1.165:

    >>> import math
    >>> [round(math.exp(v), 12) for v in jumper_log_martingale([0.5, 1.0, 1.0])]
    [1.0, 1.0, 1.165]
    """
    if not 0 < jump < 1:
        raise ValueError(f"jump must be in (0, 1), got {jump}")
    p = as_float_1d(p_values, "p_values", lo=0.0, hi=1.0).tolist()
    keep, share = 1.0 - jump, jump / 3.0
    w_down = w_flat = w_up = 1.0 / 3.0
    log_m, out = 0.0, []
    log = math.log
    for pt in p:
        d = pt - 0.5
        a = (keep * w_down + share) * (1.0 - d)
        b = keep * w_flat + share
        c = (keep * w_up + share) * (1.0 + d)
        total = a + b + c
        log_m += log(total)
        out.append(log_m)
        w_down, w_flat, w_up = a / total, b / total, c / total
    return np.asarray(out, dtype=np.float64)


@dataclass
class MartingaleResult:
    """A conformal test martingale over a stream: its conformal p-values, :math:`\\log M_t`,
    the level and the alarm (the first index with :math:`M_t \\ge 1/\\alpha`, or None)."""

    p_values: np.ndarray
    log_path: np.ndarray
    alpha: float
    alarm: int | None
    betting: str
    jump: float
    seed: int | None
    n_calibration: int

    @property
    def path(self) -> np.ndarray:
        """:math:`M_t`, values above ``PATH_CAP`` reported as ``PATH_CAP``."""
        return np.minimum(np.exp(np.minimum(self.log_path, 700.0)), PATH_CAP)

    @property
    def p_value(self) -> float:
        """Anytime-valid p-value :math:`\\min(1, 1/\\max_t M_t)` (1 for an empty stream)."""
        if not self.log_path.size:
            return 1.0
        return float(math.exp(-max(0.0, float(self.log_path.max()))))

    def to_dict(self) -> dict:
        """JSON-ready: the path and the alarm, ``p_value`` and ``holds`` (no alarm)."""
        largest = float(self.log_path.max()) if self.log_path.size else 0.0
        return {
            "test": "conformal test martingale (simple jumper), alarm by Ville's inequality",
            "betting": self.betting, "jump": self.jump, "alpha": self.alpha,
            "threshold": 1.0 / self.alpha, "n_calibration": self.n_calibration,
            "n_stream": int(self.log_path.size), "seed": self.seed,
            "alarm": self.alarm, "holds": self.alarm is None,
            "p_value": max(self.p_value, float(np.finfo(np.float64).tiny)),
            "max": float(min(math.exp(min(largest, 700.0)), PATH_CAP)),
            "log10_max": largest / math.log(10.0),
            "final": float(self.path[-1]) if self.log_path.size else 1.0,
            "path": self.path.tolist(),
            "informative": bool(self.log_path.size > 0),
            "note": None if self.log_path.size else "empty stream: nothing was tested",
        }


def conformal_martingale(calibration: ArrayLike, stream: ArrayLike, *, alpha: float = 0.05,
                         betting: str = "jumper", jump: float = DEFAULT_JUMP,
                         seed: int | None = 0) -> MartingaleResult:
    r"""Watch ``stream`` for a departure from exchangeability with ``calibration``.

    Parameters
    ----------
    calibration
        The calibration values (confidences or scores), the start of the history.
    stream
        The new values in arrival order.
    alpha
        Level: the alarm is the first index with :math:`M_t \ge 1/\alpha`; under
        exchangeability it is raised with probability at most ``alpha`` (Ville).
    betting
        ``"jumper"`` (the only one: module docstring).
    jump
        The jumper's J in (0, 1).
    seed
        Seed of the p-values' randomisation.

    Returns
    -------
    MartingaleResult

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> cal = rng.uniform(size=500)
    >>> conformal_martingale(cal, rng.uniform(size=300)).alarm is None
    True
    >>> conformal_martingale(cal, rng.uniform(0.0, 0.5, size=300)).alarm
    16
    """
    if betting not in BETTING:
        raise ValueError(f"betting must be one of {BETTING}, got {betting!r}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    cal = as_float_1d(calibration, "calibration")
    p = online_p_values(cal, stream, seed=seed)
    log_path = jumper_log_martingale(p, jump=jump)
    hits = np.flatnonzero(log_path >= math.log(1.0 / alpha))
    return MartingaleResult(p_values=p, log_path=log_path, alpha=float(alpha),
                            alarm=int(hits[0]) if hits.size else None, betting=betting,
                            jump=float(jump), seed=seed, n_calibration=int(cal.size))
