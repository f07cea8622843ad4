r"""Step-level confidence metrics of process judges (ConfProBench: CRS, CSS, CCS).

A process judge gives every reasoning step a probability ``p`` that it is correct. As in the
paper (Eqs. 1–2), the predicted label is :math:`\hat l = 1` if :math:`p \ge 0.5` (a tie at
0.5 counts as *correct*) and the confidence is :math:`c = p` if :math:`\hat l = 1`, else
:math:`1 - p`, so :math:`c \in [0.5, 1]`.

``confidence_robustness`` (CRS, Eqs. 3–6) compares c on an original step and on the same step
after a meaning-preserving perturbation; ``confidence_sensitivity`` (CSS, Eqs. 7–8) contrasts
mean p on correct steps with mean p on steps of each error type; ``confidence_calibration``
(CCS, Eqs. 9–11) combines the ECE of c against 1[l̂ = label] with the gap between the ECEs of
ground-truth-correct and -incorrect steps.

Conventions made explicit
-------------------------
* Thresholds are strict and tolerant: a change ``|c - c'|`` counts as exceeding ε (or δ) only
  if it is larger than ε + 1e-9. Verbalised confidences move in steps of exactly 0.01, and in
  binary floating point 0.86 - 0.85 = 0.010000000000000009; without the tolerance such a step
  would count as a change by rounding error alone.
* ACCM is the mean |c - c'| over the pairs that changed (0 when none changed), as Eq. 4.
* ECE uses equal-width bins closed on the right with the package's 1e-9 edge tolerance
  (:func:`confeval.metrics.bin_indices`); default M = 10.
* CSS averages Δp over the error types present (non-empty type on a ground-truth-incorrect
  step); an incorrect step without a type enters no Δp.
* Every function takes optional non-negative per-row ``weights``: the item bootstrap of the
  ``steps`` suite resamples items by reweighting their rows, which gives exactly the metrics of
  the resampled data set without copying it.

References
----------
ConfProBench: a confidence evaluation benchmark for MLLM-based process judges (2025),
Section 3.3 and Appendix C.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._validation import as_binary, as_unit_interval, same_length
from .calibration import uniform_bin_indices

__all__ = ["THRESHOLD_TOL", "ccs_from_parts", "confidence_calibration",
           "confidence_robustness", "confidence_sensitivity", "crs_from_parts",
           "encode_error_types", "sensitivity_from_codes", "step_confidence"]

THRESHOLD_TOL = 1e-9


def step_confidence(p: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Predicted label l̂ (1 if p >= 0.5) and confidence c (p, or 1 - p when l̂ = 0).

    Examples
    --------
    >>> l, c = step_confidence([0.9, 0.5, 0.2])
    >>> l.tolist(), c.round(2).tolist()
    ([1, 1, 0], [0.9, 0.5, 0.8])
    """
    p = as_unit_interval(p, "p_correct")
    label = (p >= 0.5).astype(np.int64)
    return label, np.where(label == 1, p, 1.0 - p)


def _weights(weights: ArrayLike | None, n: int) -> np.ndarray:
    if weights is None:
        return np.ones(n)
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != (n,) or (w < 0).any() or not np.isfinite(w).all():
        raise ValueError("weights must be n non-negative finite numbers")
    return w


def _mean(values: np.ndarray, w: np.ndarray) -> float:
    total = w.sum()
    return float(values @ w / total) if total > 0 else float("nan")


def confidence_robustness(c_original: ArrayLike, c_perturbed: ArrayLike, *,
                          epsilon: float = 0.01, delta: float = 0.2, scale: float = 5.0,
                          weights3: tuple[float, float, float] = (0.4, 0.4, 0.2),
                          weights: ArrayLike | None = None) -> dict[str, float]:
    """CCR, ACCM, SCCR and CRS over pairs of confidences (original, perturbed).

    ``weights3`` are the paper's w1, w2, w3; ``weights`` are optional per-pair weights.

    Examples
    --------
    >>> r = confidence_robustness([0.9, 0.8, 0.7, 0.6], [0.9, 0.81, 0.95, 0.6])
    >>> r["ccr"], round(r["accm"], 12), r["sccr"], round(r["crs"], 12)  # 0.8 -> 0.81: no change
    (0.25, 0.25, 0.25, 0.15)
    """
    c = as_unit_interval(c_original, "c_original")
    c2 = as_unit_interval(c_perturbed, "c_perturbed")
    n = same_length(c_original=c, c_perturbed=c2)
    if n == 0:
        raise ValueError("robustness needs at least one (original, perturbed) pair")
    w = _weights(weights, n)
    diff = np.abs(c - c2)
    changed = diff > epsilon + THRESHOLD_TOL
    ccr = _mean(changed.astype(np.float64), w)
    w_changed = w * changed
    accm = float(diff @ w_changed / w_changed.sum()) if w_changed.sum() > 0 else 0.0
    sccr = _mean((diff > delta + THRESHOLD_TOL).astype(np.float64), w)
    crs = crs_from_parts(ccr, accm, sccr, scale=scale, weights3=weights3)
    return {"crs": float(crs), "ccr": ccr, "accm": accm, "sccr": sccr}


def crs_from_parts(ccr, accm, sccr, *, scale: float = 5.0,
                   weights3: tuple[float, float, float] = (0.4, 0.4, 0.2)):
    """CRS = w1 (1 - CCR) + w2 (1 - s ACCM) + w3 (1 - s SCCR) (Eq. 6); works on arrays."""
    w1, w2, w3 = weights3
    return w1 * (1 - ccr) + w2 * (1 - scale * accm) + w3 * (1 - scale * sccr)


def ccs_from_parts(ece, delta_ece, *, scale: float = 5.0):
    """CCS = 0.5 (1 - s ECE) + 0.5 (1 - ΔECE) (Eq. 11); works on arrays."""
    return 0.5 * (1 - scale * ece) + 0.5 * (1 - delta_ece)


def confidence_sensitivity(p: ArrayLike, label: ArrayLike, error_type: ArrayLike, *,
                           weights: ArrayLike | None = None) -> dict:
    """Δp per error type (mean p on correct steps minus mean p on steps of that type) and
    CSS, their mean over the types present.

    ``error_type`` holds strings; empty (or None) on correct steps. Returns ``css``,
    ``delta_p`` ({type: Δp}), ``p_correct_mean`` and ``n_by_type``; ``css`` is NaN when there
    are no correct steps or no typed incorrect steps.

    Examples
    --------
    >>> r = confidence_sensitivity([0.9, 0.8, 0.3, 0.5, 0.6],
    ...                            [1, 1, 0, 0, 0], ["", "", "reasoning", "reasoning", "knowledge"])
    >>> {k: round(v, 12) for k, v in r["delta_p"].items()}, round(r["css"], 12)
    ({'knowledge': 0.25, 'reasoning': 0.45}, 0.35)
    """
    p = as_unit_interval(p, "p_correct")
    y = as_binary(label, "label")
    types = np.asarray(error_type, dtype=object)
    n = same_length(p_correct=p, label=y, error_type=types)
    w = _weights(weights, n)
    codes, names = encode_error_types(types, y)
    out = sensitivity_from_codes(p, y, codes, names.size, w)
    delta = {name: float(out["delta"][k]) for k, name in enumerate(names.tolist())
             if np.isfinite(out["delta"][k])}
    return {"css": out["css"], "delta_p": delta, "p_correct_mean": out["p_correct_mean"],
            "n_by_type": {name: int(c) for name, c in zip(names.tolist(),
                                                          np.bincount(codes[codes >= 0],
                                                                      minlength=names.size))}}


def encode_error_types(error_type: np.ndarray, label: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Integer code per step (-1: correct step or no type) and the sorted type names; a type
    counts only on a ground-truth-incorrect step."""
    import pandas as pd  # only here: the metrics load without pandas

    text = pd.Series(error_type, dtype=object).fillna("").astype(str).str.strip().to_numpy()
    typed = (np.asarray(label) == 0) & (text != "")
    names, inverse = np.unique(text[typed].astype(str), return_inverse=True)
    codes = np.full(text.size, -1, dtype=np.int64)
    codes[typed] = inverse
    return codes, names


def sensitivity_from_codes(p: np.ndarray, label: np.ndarray, codes: np.ndarray, n_types: int,
                           w: np.ndarray) -> dict:
    """Δp per type code (NaN for a type with no weight) and CSS, from encoded error types."""
    ok = label == 1
    p_ok = _mean(p[ok], w[ok]) if ok.any() else float("nan")
    typed = codes >= 0
    sums = np.bincount(codes[typed], weights=p[typed] * w[typed], minlength=n_types)
    totals = np.bincount(codes[typed], weights=w[typed], minlength=n_types)
    with np.errstate(invalid="ignore", divide="ignore"):
        delta = np.where(totals > 0, p_ok - sums / totals, np.nan)
    present = np.isfinite(delta)
    css = float(delta[present].mean()) if present.any() and np.isfinite(p_ok) else float("nan")
    return {"css": css, "delta": delta, "p_correct_mean": p_ok}


def _weighted_ece(conf: np.ndarray, hit: np.ndarray, w: np.ndarray, n_bins: int) -> float:
    total = w.sum()
    if total <= 0:
        return float("nan")
    idx = uniform_bin_indices(conf, n_bins)
    gap = np.bincount(idx, weights=w * (hit - conf), minlength=n_bins)
    return float(np.abs(gap).sum() / total)


def confidence_calibration(p: ArrayLike, label: ArrayLike, *, n_bins: int = 10,
                           scale: float = 5.0, weights: ArrayLike | None = None) -> dict:
    """ECE of the step confidence c against 1[l̂ = label], the ECEs on ground-truth-correct
    and -incorrect steps, ΔECE = |ECE_correct - ECE_incorrect| and
    CCS = 0.5 (1 - s ECE) + 0.5 (1 - ΔECE).

    A class with no steps has ECE NaN, and then ΔECE and CCS are NaN too.

    Examples
    --------
    >>> r = confidence_calibration([0.9, 0.9, 0.3, 0.6], [1, 0, 0, 0])
    >>> {k: round(v, 12) for k, v in r.items()}
    {'ece': 0.425, 'ece_correct': 0.1, 'ece_incorrect': 0.6, 'delta_ece': 0.5, 'ccs': -0.3125}
    """
    p = as_unit_interval(p, "p_correct")
    y = as_binary(label, "label")
    n = same_length(p_correct=p, label=y)
    if n == 0:
        raise ValueError("calibration needs at least one step")
    w = _weights(weights, n)
    pred, conf = step_confidence(p)
    hit = (pred == y).astype(np.float64)
    ece = _weighted_ece(conf, hit, w, n_bins)
    ece_c = _weighted_ece(conf[y == 1], hit[y == 1], w[y == 1], n_bins)
    ece_i = _weighted_ece(conf[y == 0], hit[y == 0], w[y == 0], n_bins)
    delta = abs(ece_c - ece_i)
    ccs = ccs_from_parts(ece, delta, scale=scale)
    return {"ece": ece, "ece_correct": ece_c, "ece_incorrect": ece_i, "delta_ece": delta,
            "ccs": float(ccs)}
