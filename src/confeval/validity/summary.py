"""The calibration summary a policy stores, and the two checks run against it.

A certified threshold's promise holds for new items exchangeable with the calibration items.
To test that later, without the calibration file, ``policy.json`` keeps a bounded summary of
the calibration confidences (:func:`summarise_calibration`):

.. code-block:: text

    {"format": "confeval-calibration-summary", "version": 1,
     "quantity": "confidence",          # what the values are
     "n": 4377,                         # calibration items
     "stored": 4377,                    # values kept (<= cap)
     "cap": 5000, "subsampled": false, "seed": null,
     "distinct": 4360,                  # distinct stored values (ties when < stored)
     "values": [0.21, 0.25, ...]}       # the stored values, sorted ascending (float64)

**Size bound.** At most ``cap`` values (default 5,000; at most 100,000), written as JSON floats
(each at most 24 characters: the shortest repr that reads back the same float64), so the summary
is at most about 26 bytes × cap + 300 bytes — 130 kB at the default cap.

**Above the cap: a seeded subsample, not quantiles.** When n > cap the summary keeps ``cap``
values drawn uniformly without replacement (``numpy.random.default_rng(seed).choice``), chosen
without looking at the values. A uniformly random subset of the calibration items is itself
exchangeable with new items whenever the calibration items are, so *every* test here stays
exact — the exact and permutation batch tests, the conformal p-values and the martingale's
alarm by Ville's inequality — with the subsample as the calibration set. Only power is lost
(the tests see ``cap`` calibration values, not n). A grid of quantiles would be smaller, but a
test against quantiles treats the calibration's empirical distribution as the truth and loses
the finite-sample validity this module exists for.

Values are stored exactly (float64 repr), so tied confidences (a verbalised 0.05 grid) stay
tied and the tests treat them as ties.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from numpy.typing import ArrayLike

from .._validation import as_float_1d
from .martingale import DEFAULT_JUMP, conformal_martingale
from .twosample import two_sample_test

__all__ = ["DEFAULT_CAP", "MAX_CAP", "SUMMARY_FORMAT", "batch_validity", "calibration_values",
           "monitor_stream", "summarise_calibration"]

SUMMARY_FORMAT = "confeval-calibration-summary"
"""The ``format`` field of a calibration summary."""

SUMMARY_VERSION = 1

DEFAULT_CAP = 5_000
"""Values stored by default (module docstring: about 130 kB of JSON)."""

MAX_CAP = 100_000
"""The largest cap accepted."""


def summarise_calibration(confidence: ArrayLike, *, cap: int = DEFAULT_CAP, seed: int = 0,
                          quantity: str = "confidence") -> dict:
    """The JSON-ready calibration summary of ``confidence`` (module docstring).

    Parameters
    ----------
    confidence
        The calibration values, 1-D and finite (at least one).
    cap
        The most values stored, 1 to ``MAX_CAP``.
    seed
        Seed of the subsample when ``n > cap`` (recorded; None in the summary otherwise).
    quantity
        What the values are (recorded, for the reader).

    Examples
    --------
    >>> s = summarise_calibration([0.9, 0.5, 0.9, 0.7])
    >>> s["values"], s["n"], s["distinct"], s["subsampled"]
    ([0.5, 0.7, 0.9, 0.9], 4, 3, False)
    >>> s = summarise_calibration(list(range(10)), cap=3, seed=1)
    >>> s["stored"], s["n"], s["subsampled"], s["seed"]
    (3, 10, True, 1)
    """
    cap = int(cap)
    if not 1 <= cap <= MAX_CAP:
        raise ValueError(f"cap must be in [1, {MAX_CAP}], got {cap}")
    values = as_float_1d(confidence, "confidence")
    n = int(values.size)
    if not n:
        raise ValueError("confidence is empty: nothing to summarise")
    subsampled = n > cap
    if subsampled:
        values = values[np.random.default_rng(seed).choice(n, cap, replace=False)]
    values = np.sort(values)
    return {"format": SUMMARY_FORMAT, "version": SUMMARY_VERSION, "quantity": str(quantity),
            "n": n, "stored": int(values.size), "cap": cap, "subsampled": subsampled,
            "seed": int(seed) if subsampled else None,
            "distinct": int(np.count_nonzero(np.diff(values)) + 1),
            "values": values.tolist()}


def calibration_values(summary: Mapping | ArrayLike) -> np.ndarray:
    """The calibration values of a summary (checked: format, version, sorted, finite, as
    many as ``stored``), or of a plain array of values."""
    if not isinstance(summary, Mapping):
        values = as_float_1d(summary, "calibration")
        if not values.size:
            raise ValueError("calibration is empty")
        return values
    if summary.get("format") != SUMMARY_FORMAT:
        raise ValueError(f"not a calibration summary (format {summary.get('format')!r}, "
                         f"expected {SUMMARY_FORMAT!r})")
    if summary.get("version") != SUMMARY_VERSION:
        raise ValueError(f"calibration summary version {summary.get('version')!r} is not "
                         f"{SUMMARY_VERSION}")
    values = as_float_1d(summary.get("values", []), "summary values")
    if not values.size or values.size != summary.get("stored"):
        raise ValueError(f"summary holds {values.size} values, says {summary.get('stored')}")
    if np.any(np.diff(values) < 0):
        raise ValueError("summary values are not sorted")
    return values


def _subsample_note(summary: Mapping | ArrayLike) -> str | None:
    if isinstance(summary, Mapping) and summary.get("subsampled"):
        return (f"calibration summarised by a seeded subsample of {summary['stored']:,} of "
                f"{summary['n']:,} values (a random subsample of exchangeable values is "
                f"exchangeable with new items too, so the test stays valid; its power is that "
                f"of {summary['stored']:,} values)")
    return None


def batch_validity(summary: Mapping | ArrayLike, batch_conf: ArrayLike, *,
                   alpha: float = 0.05, seed: int = 0, statistic: str = "ks",
                   method: str = "auto", n_permutations: int = 1000) -> dict:
    """Test a batch of new confidences against the calibration summary
    (:func:`~confeval.validity.twosample.two_sample_test`).

    Returns
    -------
    dict
        ``p_value``, ``holds`` (``p_value > alpha``: no evidence of a change), ``statistic``
        (its value: KS distance or mean conformal p-value), ``statistic_name``, ``test`` (a
        sentence), ``method`` (``exact``, ``asymptotic`` or ``permutation``), ``alpha``,
        ``n_calibration`` (values tested against), ``n_batch``, ``ties``, ``informative``,
        ``n_permutations`` and ``seed`` (permutation only), ``note``. An empty batch gives
        ``p_value`` 1, ``holds`` True and ``informative`` False (nothing was tested).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> s = summarise_calibration(rng.beta(5, 2, size=2000))
    >>> batch_validity(s, rng.beta(5, 2, size=300))["holds"]
    True
    >>> r = batch_validity(s, rng.beta(2, 2, size=300))      # less confident
    >>> r["holds"], r["p_value"] < 1e-10
    (False, True)
    """
    cal = calibration_values(summary)
    batch = as_float_1d(batch_conf, "batch confidence")
    names = {"ks": "two-sample Kolmogorov-Smirnov", "rank_sum": "rank sum of conformal "
             "p-values (Mann-Whitney)"}
    if not batch.size:
        if not 0 < alpha < 1:
            raise ValueError(f"alpha must be in (0, 1), got {alpha}")
        return {"p_value": 1.0, "holds": True, "statistic": None, "statistic_name": statistic,
                "test": names.get(statistic, statistic), "method": None,
                "alpha": float(alpha), "n_calibration": int(cal.size), "n_batch": 0,
                "ties": False, "informative": False, "n_permutations": None, "seed": None,
                "note": "empty batch: nothing was tested"}
    r = two_sample_test(cal, batch, statistic=statistic, method=method, alpha=alpha,
                        n_permutations=n_permutations, seed=seed)
    notes = [x for x in (r.note, _subsample_note(summary)) if x]
    return {"p_value": r.p_value, "holds": r.holds, "statistic": r.value,
            "statistic_name": r.statistic, "test": f"{names[r.statistic]}, {r.method} p-value",
            "method": r.method, "alpha": r.alpha, "n_calibration": r.n_calibration,
            "n_batch": r.n_batch, "ties": r.ties, "informative": r.informative,
            "n_permutations": r.n_permutations, "seed": r.seed,
            "note": "; ".join(notes) if notes else None}


def monitor_stream(summary: Mapping | ArrayLike, stream_conf: ArrayLike, *,
                   alpha: float = 0.05, seed: int = 0, jump: float = DEFAULT_JUMP) -> dict:
    """Watch a stream of new confidences (in arrival order) with the conformal test
    martingale (:func:`~confeval.validity.martingale.conformal_martingale`) started from the
    calibration summary.

    Returns
    -------
    dict
        ``path`` (:math:`M_t` after each item, capped at 1e300), ``alarm`` (index of the first
        :math:`M_t \\ge 1/\\alpha`, or None), ``holds`` (no alarm), ``p_value`` (anytime-valid,
        ``min(1, 1/max M_t)``), ``threshold`` (1/alpha), ``max``, ``log10_max``, ``final``,
        ``alpha``, ``betting``, ``jump``, ``seed``, ``n_calibration``, ``n_stream``,
        ``informative``, ``note``, ``test``.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> s = summarise_calibration(rng.beta(5, 2, size=2000))
    >>> monitor_stream(s, rng.beta(5, 2, size=500))["alarm"] is None
    True
    >>> monitor_stream(s, rng.beta(2, 2, size=500))["alarm"]
    19
    """
    cal = calibration_values(summary)
    out = conformal_martingale(cal, stream_conf, alpha=alpha, jump=jump, seed=seed).to_dict()
    note = _subsample_note(summary)
    if note:
        out["note"] = f"{out['note']}; {note}" if out["note"] else note
    return out
