r"""Batch tests of exchangeability: are a batch's values drawn like the calibration values?

The null hypothesis is that the ``n`` calibration values and the ``m`` batch values are
exchangeable (jointly, in any order equally likely), which is the condition every promise of a
certified threshold or a conformal set rests on. Under it, conditionally on the pooled multiset
of ``N = n + m`` values, every choice of which ``m`` of them form the batch is equally likely:
the permutation distribution. Every p-value here is computed against that distribution (exactly,
by Monte Carlo with the +1 correction, or by its large-sample limit) and is valid in finite
samples except the asymptotic ones, which are accurate for the sizes they are used at (and
conservative with ties).

Two statistics, both two-sided:

``"ks"`` (the default) — two-sample Kolmogorov–Smirnov,

.. math::

    D = \max_z \left| \hat F_{\mathrm{cal}}(z) - \hat F_{\mathrm{batch}}(z) \right|,
    \qquad \hat F(z) = \tfrac{1}{k}\#\{i : x_i \le z\},

evaluated at every pooled value, so a block of tied values moves both empirical CDFs at once
(kept as the integer :math:`K = n m D` so that ties in the statistic are compared exactly).
It is an omnibus test: it reacts to any change in the distribution of the confidence (a drop,
a new spread, a new mode of overconfident items), and the promise of a threshold depends on the
whole distribution above it. Hence the default.

``"rank_sum"`` — the mean conformal p-value of the batch items against the calibration set,

.. math::

    p_j = \frac{\#\{i : c_i > s_j\} + \tfrac{1}{2}(\#\{i : c_i = s_j\} + 1)}{n + 1},
    \qquad T = \frac{1}{m}\sum_j p_j = \frac{U + m/2}{m (n + 1)},

where :math:`U = \#\{(i, j) : c_i > s_j\} + \tfrac12\#\{(i,j) : c_i = s_j\}` is the
Mann–Whitney statistic of the calibration against the batch (``scipy.stats.mannwhitneyu``'s
``U1`` with ``x`` = calibration). Under the null :math:`E[T] = 1/2`. It is more powerful than KS
against a pure shift of location (the whole batch less confident) and blind to changes that keep
the mean rank (a batch more spread out), hence not the default.

Methods (``method=``):

* ``"exact"`` — the exact permutation p-value :math:`P(T^* \ge T_{\mathrm{obs}})`. KS without
  ties: the Smirnov distribution as ``scipy.stats.ks_2samp(method="exact")`` computes it (Hodges
  1958). KS with ties: a lattice-path recursion over the pooled sorted values that checks the
  statistic only where a block of tied values ends (the permutation distribution given the
  ties, which is what a permutation test of tied data estimates; the no-ties formula would
  overstate the p-value). Rank sum without ties: the Mann–Whitney distribution by the recursion
  :math:`P_{a,b}(u) = \frac{a}{a+b}P_{a-1,b}(u-b) + \frac{b}{a+b}P_{a,b-1}(u)`.
* ``"asymptotic"`` — KS: ``kstwo.sf(D, round(nm/(n+m)))`` (as ``scipy.stats.ks_2samp``'s
  ``"asymp"``; conservative with ties). Rank sum: the normal approximation of :math:`U` with the
  tie-corrected variance :math:`\frac{nm}{12}\big((N+1) - \frac{\sum_g (t_g^3 - t_g)}{N(N-1)}\big)`
  and a continuity correction of 1/2 (as ``scipy.stats.mannwhitneyu``'s ``"asymptotic"``).
* ``"permutation"`` — ``B`` random reassignments of the pooled values (seeded), with the +1
  correction :math:`p = (1 + \#\{b : T^*_b \ge T_{\mathrm{obs}}\}) / (B + 1)`, valid in finite
  samples for any ``B`` and any ties (Phipson and Smyth 2010).
* ``"auto"`` (default) — exact where it is cheap: KS without ties when ``max(n, m) <= 10,000``
  (scipy's own limit), KS with ties when ``N <= 20,000`` and ``N (min(n, m) + 1) <= 5e7``; rank
  sum without ties when ``n m <= 2,500``; otherwise asymptotic.

A p-value is never reported as 0: one that underflows is reported as the smallest normal float
(``2.2e-308``); the exact p-value of an observed arrangement is at least :math:`1/\binom{N}{m}`.
A test that cannot reach ``alpha`` with these sizes says so (``informative`` is False): all
values equal (no test has information), or :math:`2/\binom{N}{m} > \alpha` (no arrangement is
rare enough), or a permutation test with :math:`1/(B+1) > \alpha`.

References
----------
Smirnov (1939), "On the estimation of the discrepancy between empirical curves of distribution
for two independent samples", Bull. Moscow Univ. 2. Hodges (1958), "The significance probability
of the Smirnov two-sample test", Arkiv för Matematik 3. Mann and Whitney (1947), "On a test of
whether one of two random variables is stochastically larger than the other", Ann. Math. Stat.
18. Phipson and Smyth (2010), "Permutation p-values should never be zero", SAGMB 9. Vovk,
Gammerman and Shafer (2005), *Algorithmic Learning in a Random World* (conformal p-values).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import asdict, dataclass

import numpy as np
from numpy.typing import ArrayLike

from .._validation import as_float_1d

__all__ = ["STATISTICS", "METHODS", "TwoSampleResult", "conformal_p_values", "ks_exact_p_value",
           "ks_statistic", "monte_carlo_p_value", "rank_sum_statistic", "two_sample_test"]

STATISTICS = ("ks", "rank_sum")
"""The batch statistics: two-sample Kolmogorov–Smirnov (default) and the mean conformal
p-value (the Mann–Whitney rank sum)."""

METHODS = ("auto", "exact", "asymptotic", "permutation")
"""How the p-value is computed (module docstring)."""

P_FLOOR = float(np.finfo(np.float64).tiny)
"""The smallest p-value reported (a p-value that underflows is reported as this, never 0)."""

KS_EXACT_NO_TIES_MAX = 10_000
"""``auto``: KS without ties is exact when both sizes are at most this (scipy's limit)."""

KS_EXACT_TIES_MAX_N = 20_000
"""``auto``: KS with ties is exact when ``n + m`` is at most this ..."""

KS_EXACT_TIES_MAX_CELLS = 5e7
"""... and ``(n + m) (min(n, m) + 1)`` (the lattice cells the recursion visits) at most this."""

RANK_SUM_EXACT_MAX_CELLS = 2_500
"""``auto``: the rank sum without ties is exact when ``n m`` is at most this."""

@dataclass
class TwoSampleResult:
    """One batch test: the statistic's value, its p-value and how it was computed.

    ``holds`` is ``p_value > alpha``: no evidence at level ``alpha`` that the batch differs from
    the calibration set (which is not evidence that it does not)."""

    statistic: str
    value: float
    p_value: float
    method: str
    alpha: float
    holds: bool
    n_calibration: int
    n_batch: int
    ties: bool
    informative: bool
    n_permutations: int | None = None
    seed: int | None = None
    note: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def _sorted_sample(x: ArrayLike, name: str) -> np.ndarray:
    return np.sort(as_float_1d(x, name), kind="stable")


def _ks_integer(cal: np.ndarray, batch: np.ndarray) -> int:
    """K = n m D for sorted samples, evaluated at every pooled value (right-continuous ECDFs,
    so a tie block moves both at once). Integer, so that equal statistics compare equal."""
    n, m = cal.size, batch.size
    z = np.concatenate([cal, batch])
    in_cal = np.searchsorted(cal, z, side="right").astype(np.int64)
    in_batch = np.searchsorted(batch, z, side="right").astype(np.int64)
    return int(np.max(np.abs(in_cal * m - in_batch * n)))


def ks_statistic(calibration: ArrayLike, batch: ArrayLike) -> float:
    r"""Two-sample Kolmogorov–Smirnov statistic :math:`D = \max_z |\hat F_1(z) - \hat F_2(z)|`
    over every pooled value (ties move both empirical CDFs at once).

    Examples
    --------
    At 0.3 the calibration's CDF is 1 and the batch's 1/2:

    >>> ks_statistic([0.1, 0.2, 0.3], [0.2, 0.4])
    0.5
    """
    cal, batch = _sorted_sample(calibration, "calibration"), _sorted_sample(batch, "batch")
    if not cal.size or not batch.size:
        raise ValueError("calibration and batch must not be empty")
    return _ks_integer(cal, batch) / (cal.size * batch.size)


def _greater_equal(cal_sorted: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(#{c > v}, #{c = v}) for each value v against sorted c."""
    right = np.searchsorted(cal_sorted, values, side="right")
    left = np.searchsorted(cal_sorted, values, side="left")
    return cal_sorted.size - right, right - left


def conformal_p_values(calibration: ArrayLike, values: ArrayLike, *, ties: str = "mid",
                       seed: int | np.random.Generator | None = 0) -> np.ndarray:
    r"""Conformal p-value of each value against the calibration set, larger values being the
    stranger ones (the score is the value itself; pass ``-confidence`` for the other side).

    .. math::

        p = \frac{\#\{i : c_i > s\} + \theta\,(\#\{i : c_i = s\} + 1)}{n + 1}

    with :math:`\theta = 1/2` (``ties="mid"``, deterministic: the mean of the randomised
    p-value), :math:`\theta = 1` (``"conservative"``: the usual conformal p-value,
    :math:`P(p \le a) \le a`) or :math:`\theta = U \sim \mathrm{Uniform}(0, 1)` drawn from
    ``numpy.random.default_rng(seed)`` (``"randomised"``: exactly uniform under
    exchangeability, ties included; Vovk et al. 2005, §2.3).

    Examples
    --------
    >>> conformal_p_values([1.0, 2.0, 2.0, 3.0], [2.0, 4.0], ties="conservative").tolist()
    [0.8, 0.2]
    >>> conformal_p_values([1.0, 2.0, 2.0, 3.0], [2.0], ties="mid").tolist()
    [0.5]
    """
    cal = _sorted_sample(calibration, "calibration")
    v = as_float_1d(values, "values")
    greater, equal = _greater_equal(cal, v)
    if ties == "mid":
        theta: np.ndarray | float = 0.5
    elif ties == "conservative":
        theta = 1.0
    elif ties == "randomised":
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        theta = rng.uniform(size=v.size)
    else:
        raise ValueError(f"ties must be 'mid', 'conservative' or 'randomised', got {ties!r}")
    return (greater + theta * (equal + 1.0)) / (cal.size + 1.0)


def _twice_u(cal_sorted: np.ndarray, batch: np.ndarray) -> int:
    """2 U, U = #{c > s} + #{c = s}/2 over pairs (an integer once doubled)."""
    greater, equal = _greater_equal(cal_sorted, batch)
    return int(2 * greater.sum() + equal.sum())


def rank_sum_statistic(calibration: ArrayLike, batch: ArrayLike) -> float:
    r"""The mean mid conformal p-value of the batch against the calibration set,
    :math:`T = (U + m/2) / (m (n + 1))` (module docstring); 1/2 expected under exchangeability,
    below 1/2 when the batch's values are larger.

    Examples
    --------
    >>> rank_sum_statistic([1.0, 2.0, 3.0], [2.0])
    0.5
    >>> rank_sum_statistic([1.0, 2.0, 3.0], [5.0, 6.0])
    0.125
    """
    cal, batch_sorted = _sorted_sample(calibration, "calibration"), _sorted_sample(batch,
                                                                                    "batch")
    if not cal.size or not batch_sorted.size:
        raise ValueError("calibration and batch must not be empty")
    m = batch_sorted.size
    return (_twice_u(cal, batch_sorted) / 2 + m / 2) / (m * (cal.size + 1))


def monte_carlo_p_value(observed: float, null: ArrayLike) -> float:
    r"""Monte Carlo p-value with the +1 correction,
    :math:`p = (1 + \#\{b : T_b \ge T_{\mathrm{obs}}\}) / (1 + B)`: the observed arrangement
    counts as one of the ``B + 1`` exchangeable draws, so :math:`P(p \le a) \le a` for every
    ``B`` and the p-value is never 0 (Phipson and Smyth 2010).

    Examples
    --------
    >>> monte_carlo_p_value(3.0, [1.0, 3.0, 5.0, 2.0])
    0.6
    """
    null = np.asarray(null)
    return float((1 + np.count_nonzero(null >= observed)) / (1 + null.size))


def _log_binom(n: int, k: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def ks_exact_p_value(calibration: ArrayLike, batch: ArrayLike) -> float:
    r"""The exact permutation p-value :math:`P(D^* \ge D_{\mathrm{obs}})` of the two-sample KS
    statistic given the pooled values, ties kept (with no ties: the Smirnov distribution), by
    the lattice recursion of :func:`_ks_exact_lattice`. Time about ``(n + m)`` numpy steps.

    Examples
    --------
    >>> round(ks_exact_p_value([0.0, 0.0, 0.0], [1.0]), 12)     # the 1 in the batch: 1 in 4
    0.25
    """
    cal, bat = _sorted_sample(calibration, "calibration"), _sorted_sample(batch, "batch")
    if not cal.size or not bat.size:
        raise ValueError("calibration and batch must not be empty")
    k_obs = _ks_integer(cal, bat)
    if k_obs == 0:
        return 1.0
    return _ks_exact_lattice(np.sort(np.concatenate([cal, bat])), cal.size, bat.size, k_obs)


def _ks_exact_lattice(pooled: np.ndarray, n: int, m: int, k_obs: int) -> float:
    """Exact permutation P(K* >= k_obs) given the pooled sorted values, ties kept.

    Walk the lattice of paths that take the pooled values in sorted order, each value to the
    smaller sample (``a`` of them so far, size ``small``) or the larger (``b``, size
    ``large``); every path is one arrangement, all ``C(N, small)`` equally likely. After the
    last value of a tie block, a path with ``|a large - b small| >= k_obs`` has reached the
    observed statistic: its count times the number of its completions is added to the p-value
    and the path is dropped. Counts are rescaled every 64 steps (their log scale kept); the
    p-value sums exp(log count + log completions - log C(N, small)), never a difference (no
    cancellation for small p-values)."""
    from scipy.special import gammaln

    small, large = min(n, m), max(n, m)
    big_n = n + m
    is_end = np.zeros(big_n + 1, dtype=bool)
    is_end[np.flatnonzero(pooled[1:] != pooled[:-1]) + 1] = True
    is_end = is_end.tolist()
    log_fact_arr = gammaln(np.arange(big_n + 1, dtype=np.float64) + 1.0)
    log_fact = log_fact_arr.tolist()
    log_total = log_fact[big_n] - log_fact[small] - log_fact[large]
    counts, nxt = np.zeros(small + 1), np.zeros(small + 1)
    counts[0] = 1.0
    log_scale, p = 0.0, 0.0
    exp, log = math.exp, math.log
    low_zero, high_zero = -1, 1   # counts[a] == 0 for a <= low_zero and for a >= high_zero
    for k in range(1, big_n + 1):  # k values placed
        hi = k if k < small else small
        np.add(counts[1:hi + 1], counts[:hi], out=nxt[1:hi + 1])
        nxt[0] = counts[0]
        counts, nxt = nxt, counts
        high_zero += 1
        lo = k - large
        if lo > 0:
            counts[lo - 1] = 0.0   # more than large values to the larger sample: no such path
        else:
            lo = 0
        if is_end[k]:
            # a large - (k - a) small <= -k_obs  <=>  a <= (k small - k_obs) / N; the other
            # side symmetric
            a_lo = min((k * small - k_obs) // big_n, hi)
            a_hi = max(-((-(k * small + k_obs)) // big_n), lo)
            base = log_scale + log_fact[big_n - k] - log_total
            for r0, r1 in ((max(lo, low_zero + 1), a_lo), (a_hi, min(hi, high_zero - 1))):
                if r1 < r0:
                    continue
                block = counts[r0:r1 + 1]
                if r1 - r0 < 8:   # the usual case: a node or two crossed since the last check
                    for a, c in enumerate(block.tolist(), r0):
                        if c > 0.0:
                            p += exp(log(c) + base - log_fact[small - a]
                                     - log_fact[big_n - k - small + a])
                else:
                    nz = np.flatnonzero(block)
                    a = nz + r0
                    p += float(np.exp(np.log(block[nz]) + base - log_fact_arr[small - a]
                                      - log_fact_arr[big_n - k - small + a]).sum())
                block[:] = 0.0
            low_zero = max(low_zero, a_lo)
            high_zero = min(high_zero, a_hi)
        if k & 63 == 0:
            top = float(counts.max())
            if top > 0.0:
                counts /= top
                log_scale += log(top)
    return min(p, 1.0)


def _ks_exact_no_ties(cal: np.ndarray, batch: np.ndarray) -> float | None:
    """scipy's exact Smirnov p-value (Hodges 1958) for data without ties; None when scipy
    cannot compute it exactly (it would fall back to its asymptotic form)."""
    from scipy import stats

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        p = float(stats.ks_2samp(cal, batch, method="exact").pvalue)
    if any(issubclass(w.category, RuntimeWarning) for w in caught) or not 0 <= p <= 1:
        return None
    return p


def _ks_asymptotic(n: int, m: int, d: float) -> float:
    """Two-sided Smirnov p-value by the one-sample Kolmogorov distribution at the effective
    size round(n m / (n + m)), as ``scipy.stats.ks_2samp(method="asymp")``."""
    from scipy.stats import kstwo

    big, small = max(n, m), min(n, m)
    en = max(1.0, float(np.round(big * small / (big + small))))
    return float(np.clip(kstwo.sf(d, en), 0.0, 1.0))


def _mann_whitney_exact(n: int, m: int, twice_u: int) -> float:
    """Two-sided exact Mann–Whitney p-value without ties, ``2 P(U* >= max(U, nm - U))``
    clipped to 1 (as scipy's ``"exact"``). The distribution of U = #{x > y} for sizes (a, b):
    the largest pooled value is an x with probability a/(a+b), and then exceeds all b y's.
    The distribution for sizes (n, m) is that for (m, n) (U and nm - U are equally
    distributed), so the smaller size indexes the rows kept."""
    big, small = max(n, m), min(n, m)
    size = n * m + 1
    # rows[b] = distribution of U for sizes (a, b), b = 0..small; a = 0: U = 0
    rows = np.zeros((small + 1, size))
    rows[:, 0] = 1.0
    for a in range(1, big + 1):
        new = np.zeros_like(rows)
        new[0, 0] = 1.0
        for b in range(1, small + 1):
            new[b, b:] = a / (a + b) * rows[b, :size - b]
            new[b] += b / (a + b) * new[b - 1]
        rows = new
    pmf = rows[small]
    u_big = max(twice_u, 2 * n * m - twice_u) // 2
    return float(min(1.0, 2.0 * pmf[u_big:].sum()))


def _mann_whitney_asymptotic(n: int, m: int, twice_u: int, tie_term: float) -> float:
    """Two-sided normal approximation of U with the tie-corrected variance and a continuity
    correction of 1/2, as ``scipy.stats.mannwhitneyu(method="asymptotic")``."""
    big_n = n + m
    u_big = max(twice_u, 2 * n * m - twice_u) / 2
    sd = math.sqrt(n * m / 12 * ((big_n + 1) - tie_term / (big_n * (big_n - 1))))
    if sd == 0.0:
        return 1.0
    z = (u_big - n * m / 2 - 0.5) / sd
    return float(min(1.0, math.erfc(z / math.sqrt(2.0))))


def _permutation_null(pooled: np.ndarray, n: int, m: int, statistic: str, n_perm: int,
                      rng: np.random.Generator) -> np.ndarray:
    """The statistic (as the integer the observed one is compared with) under ``n_perm``
    random arrangements of the sorted pooled values. Each arrangement draws which positions
    of the pool hold the smaller sample, uniformly without replacement
    (``Generator.choice(N, min(n, m), replace=False)``): every arrangement equally likely."""
    from .._numeric import mid_ranks

    big_n = n + m
    small = min(n, m)
    batch_is_small = m <= n
    out = np.empty(n_perm, dtype=np.int64)
    if statistic == "ks":
        # K = max_k |k m - N b_k| (b_k batch items among the first k pooled values) is the
        # largest excursion of the walk that steps +m at a calibration value and -n at a
        # batch value, read where a tie block ends
        ends = None if pooled.size < 2 or not np.any(pooled[1:] == pooled[:-1]) else \
            np.append(np.flatnonzero(pooled[1:] != pooled[:-1]), big_n - 1)
        large_step, small_step = (m, -n) if batch_is_small else (-n, m)
        steps = np.full(big_n, large_step, dtype=np.int64)
        for b in range(n_perm):
            chosen = rng.choice(big_n, small, replace=False, shuffle=False)
            steps[chosen] = small_step
            walk = np.cumsum(steps)
            steps[chosen] = large_step
            if ends is not None:
                walk = walk[ends]
            out[b] = max(int(walk.max()), -int(walk.min()))
    else:
        twice_ranks = np.rint(2.0 * mid_ranks(pooled)).astype(np.int64)
        total = int(twice_ranks.sum())
        centre = m * (big_n + 1)
        for b in range(n_perm):
            chosen = rng.choice(big_n, small, replace=False, shuffle=False)
            twice_s = int(twice_ranks[chosen].sum())
            if not batch_is_small:
                twice_s = total - twice_s
            out[b] = abs(twice_s - centre)
    return out


def _observed_rank_dev(pooled_cal: np.ndarray, batch: np.ndarray) -> int:
    """|2 S - m (N + 1)|, S the batch's mid-rank sum in the pool (an integer)."""
    n, m = pooled_cal.size, batch.size
    twice_u = _twice_u(pooled_cal, batch)          # U = #{c > s} + ties / 2
    # S = rank sum of the batch = U_batch + m (m + 1) / 2 with U_batch = n m - U
    twice_s = 2 * n * m - twice_u + m * (m + 1)
    return abs(twice_s - m * (n + m + 1))


def _choose(statistic: str, method: str, n: int, m: int, ties: bool) -> str:
    if method != "auto":
        return method
    big_n, small = n + m, min(n, m)
    if statistic == "ks":
        if not ties and max(n, m) <= KS_EXACT_NO_TIES_MAX:
            return "exact"
        if ties and big_n <= KS_EXACT_TIES_MAX_N and big_n * (small + 1) <= \
                KS_EXACT_TIES_MAX_CELLS:
            return "exact"
        return "asymptotic"
    if not ties and n * m <= RANK_SUM_EXACT_MAX_CELLS:
        return "exact"
    return "asymptotic"


def two_sample_test(calibration: ArrayLike, batch: ArrayLike, *, statistic: str = "ks",
                    method: str = "auto", alpha: float = 0.05, n_permutations: int = 1000,
                    seed: int | None = 0) -> TwoSampleResult:
    r"""Test whether ``batch`` is exchangeable with ``calibration`` (module docstring).

    Parameters
    ----------
    calibration, batch
        1-D finite values (confidences or nonconformity scores); neither empty.
    statistic
        ``"ks"`` (default: omnibus) or ``"rank_sum"`` (the mean conformal p-value).
    method
        ``"auto"``, ``"exact"``, ``"asymptotic"`` or ``"permutation"``. ``"exact"`` for the
        rank sum needs data without ties (a :class:`ValueError` otherwise: use
        ``"permutation"``).
    alpha
        Level of ``holds`` (``p_value > alpha``), in (0, 1).
    n_permutations
        ``B`` for ``"permutation"``.
    seed
        Seed of ``numpy.random.default_rng`` for ``"permutation"`` (the other methods draw
        nothing).

    Returns
    -------
    TwoSampleResult

    Examples
    --------
    >>> r = two_sample_test([0.1, 0.2, 0.3, 0.4], [0.5, 0.6, 0.7, 0.8])
    >>> r.value, round(r.p_value, 6), r.method     # 2 / C(8, 4)
    (1.0, 0.028571, 'exact')
    >>> r = two_sample_test([0.1, 0.2, 0.3, 0.4], [0.5, 0.6, 0.7, 0.8], method="permutation",
    ...                     n_permutations=99, seed=0)
    >>> r.p_value >= 1 / 100
    True
    """
    if statistic not in STATISTICS:
        raise ValueError(f"statistic must be one of {STATISTICS}, got {statistic!r}")
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    cal, bat = _sorted_sample(calibration, "calibration"), _sorted_sample(batch, "batch")
    n, m = cal.size, bat.size
    if not n or not m:
        raise ValueError("calibration and batch must not be empty")
    pooled = np.sort(np.concatenate([cal, bat]), kind="stable")
    ties = bool(np.any(pooled[1:] == pooled[:-1]))
    chosen = _choose(statistic, method, n, m, ties)
    if chosen == "permutation" and int(n_permutations) < 1:
        raise ValueError(f"n_permutations must be at least 1, got {n_permutations}")
    if statistic == "rank_sum" and chosen == "exact" and ties:
        raise ValueError("the exact rank-sum distribution is computed without ties; use "
                         "method='permutation' (exact given the ties) or 'asymptotic'")
    big_n = n + m
    floor = math.log(2.0) - _log_binom(big_n, m)      # log of the smallest exact p-value
    note = None
    informative = floor <= math.log(alpha)
    if not informative:
        note = (f"no arrangement of {n} + {m} values is rarer than alpha: the test cannot "
                "reject at this level")

    if statistic == "ks":
        k_obs = _ks_integer(cal, bat)
        value = k_obs / (n * m)
    else:
        twice_u = _twice_u(cal, bat)
        value = (twice_u / 2 + m / 2) / (m * (n + 1))

    if pooled[0] == pooled[-1]:
        p = 1.0
        informative = False
        note = "every value is the same: the test has no information (p = 1)"
    elif chosen == "permutation":
        rng = np.random.default_rng(seed)
        observed = k_obs if statistic == "ks" else _observed_rank_dev(cal, bat)
        null = _permutation_null(pooled, n, m, statistic, int(n_permutations), rng)
        p = monte_carlo_p_value(observed, null)
        if 1.0 / (int(n_permutations) + 1) > alpha:
            informative = False
            note = (f"{n_permutations} permutations cannot give a p-value below "
                    f"1/{int(n_permutations) + 1} > alpha")
    elif statistic == "ks" and k_obs == 0:
        p = 1.0   # every arrangement reaches D = 0: exactly 1, not a sum of rounded terms
    elif statistic == "ks":
        p = None
        if chosen == "exact":
            p = (_ks_exact_lattice(pooled, n, m, k_obs) if ties
                     else _ks_exact_no_ties(cal, bat))
            if p is None:
                chosen = "asymptotic"
        if p is None:
            p = _ks_asymptotic(n, m, value)
    elif chosen == "exact":
        p = _mann_whitney_exact(n, m, twice_u)
    else:
        _, counts = np.unique(pooled, return_counts=True)
        tie_term = float(np.sum(counts.astype(np.float64) ** 3 - counts))
        p = _mann_whitney_asymptotic(n, m, twice_u, tie_term)
    p = max(float(p), P_FLOOR)
    return TwoSampleResult(
        statistic=statistic, value=float(value), p_value=p, method=chosen, alpha=float(alpha),
        holds=bool(p > alpha), n_calibration=n, n_batch=m, ties=ties, informative=informative,
        n_permutations=int(n_permutations) if chosen == "permutation" else None,
        seed=seed if chosen == "permutation" else None, note=note)
