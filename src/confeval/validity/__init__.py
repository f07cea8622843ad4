"""Validity checks: do new items still look like the calibration items?

Every promise confeval makes — a certified threshold's selective error (``confeval guarantee``),
a conformal set's or interval's coverage — holds for new items *exchangeable* with the
calibration items. This package tests that condition on the quantity the promise depends on
(the confidence, or a nonconformity score), and watches the promise itself once labels arrive.

:func:`batch_validity` / :func:`two_sample_test` (:mod:`.twosample`) — is a batch of new
confidences drawn like the calibration confidences? A two-sided permutation test: the
two-sample Kolmogorov–Smirnov statistic by default (omnibus: any change of the distribution),
or the rank sum of the batch's conformal p-values (Mann–Whitney: most power for a pure shift).
Exact p-values where they are cheap (the Smirnov distribution; with ties, a lattice recursion
exact given the ties), Monte Carlo permutations with the +1 correction on request, the
asymptotic distributions otherwise.

:func:`monitor_stream` / :func:`conformal_martingale` (:mod:`.martingale`) — an online test: each
new item's randomised conformal p-value against everything before it, a simple jumper
martingale (Vovk et al.) betting on them, and an alarm when it reaches 1/alpha — by Ville's
inequality a false alarm has probability at most alpha however long the stream is watched.

:func:`monitor_risk` (:mod:`.risk`) — with late labels: an anytime-valid confidence sequence
(predictable plug-in empirical Bernstein, Waudby-Smith and Ramdas 2024) for the deployed
selective error among answered items, with an alarm when its lower bound reaches the target.

:func:`summarise_calibration` (:mod:`.summary`) — the bounded, JSON-ready calibration summary a
``policy.json`` stores (the sorted values, or a seeded subsample of at most ``cap`` of them: a
random subsample of exchangeable values is still exchangeable with new items, so the tests stay
valid, with the power of ``cap`` values).

A p-value here is the probability, were the new items exchangeable with the calibration items,
of a discrepancy at least as large as the one seen. A small one is evidence that they are not
(the promise may not carry over); a large one is not evidence that they are (``holds`` means
"no evidence of a change at level alpha"). No p-value is reported as 0, and a test that cannot
reach alpha with its sizes says so (``informative``).

References
----------
Vovk, Nouretdinov and Gammerman (2003), "Testing exchangeability on-line", ICML. Vovk (2021),
"Testing randomness online", Statistical Science 36 (conformal test martingales). Vovk,
Gammerman and Shafer (2005), *Algorithmic Learning in a Random World*. Ville (1939), *Étude
critique de la notion de collectif*. Waudby-Smith and Ramdas (2024), "Estimating means of bounded
random variables by betting", JRSS B 86. Angelopoulos, Barber and Bates (2024), "Theoretical
foundations of conformal prediction", arXiv:2411.11824. Phipson and Smyth (2010),
"Permutation p-values should never be zero", SAGMB 9.
"""

from __future__ import annotations

from .martingale import (
    MartingaleResult,
    conformal_martingale,
    jumper_log_martingale,
    online_p_values,
)
from .risk import RiskMonitor, eb_confidence_sequence, monitor_risk
from .summary import (
    DEFAULT_CAP,
    MAX_CAP,
    SUMMARY_FORMAT,
    batch_validity,
    calibration_values,
    monitor_stream,
    summarise_calibration,
)
from .twosample import (
    STATISTICS,
    TwoSampleResult,
    conformal_p_values,
    ks_exact_p_value,
    ks_statistic,
    monte_carlo_p_value,
    rank_sum_statistic,
    two_sample_test,
)

__all__ = ["DEFAULT_CAP", "MAX_CAP", "STATISTICS", "SUMMARY_FORMAT", "MartingaleResult",
           "RiskMonitor", "TwoSampleResult", "batch_validity", "calibration_values",
           "conformal_martingale", "conformal_p_values", "eb_confidence_sequence",
           "jumper_log_martingale", "ks_exact_p_value", "ks_statistic", "monitor_risk",
           "monitor_stream", "monte_carlo_p_value", "online_p_values", "rank_sum_statistic",
           "summarise_calibration", "two_sample_test"]
