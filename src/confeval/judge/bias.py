r"""Does the judge prefer the answer shown first, or the longer one? Two tests of a judge's
bias, each on what the judge said and on how sure it was.

**Position** (:func:`position_bias`): the judge compares answers A and B of each item twice,
A shown first (order AB) and B shown first (order BA); each verdict names the answer it
prefers (``a``, ``b``, or ``tie``).

* *Flip rate*: the share of items whose verdict changes with the order, with its exact
  (Clopper–Pearson) interval.
* *First-slot preference*: :math:`\pi` = the probability that a verdict picks the answer in
  the first slot. Every item is judged in both orders, so each answer is first once and an
  unbiased judge has :math:`\pi = 1/2` whatever the answers' quality. Estimated by the share
  :math:`\hat\pi = F / J` of the :math:`J` verdicts that are not ties which picked the first
  slot, with the exact binomial test of :math:`\pi = 1/2` and the exact (Clopper–Pearson)
  interval (:func:`scipy.stats.binomtest`). It treats the verdicts as independent given the
  items (a judge sampling at a temperature): two verdicts on the same item that are more
  alike than that make it too narrow, which is why the sign test is given beside it.
* *Sign test*: among the items whose pick changed with the order, the share where the first
  slot won both times; under a judge that ignores the order this is 1/2 whatever the
  dependence between an item's two verdicts (the exact McNemar test).
* *Confidence by slot*: on the items picked the same way in both orders, the difference
  :math:`d_i` between the judge's confidence when its pick was shown first and when it was
  shown second (the same answer, the same item: only the slot differs). The mean difference
  with a seeded bootstrap interval; the Wilcoxon signed-rank test, exact (its permutation
  distribution) when there are at most 50 differences without zeros or ties, else its normal
  approximation; and the exact sign test.

**Length** (:func:`length_bias`): the judge's score against each answer's length, at a fixed
human score. Slopes are per ``per`` units of length (100 words by default):

* the judge's slope and the humans' own slope of score on length (humans may rightly prefer
  fuller answers), and the judge's *excess*, the difference of the two (the slope of judge
  minus human score on length);
* the judge's slope at a fixed human score: the length coefficient of the judge's score
  regressed on length and the human score as a factor (a mean per human score; a linear
  term when the human scores take more than 20 values), and the same of its confidence.

Every slope has a 95% percentile bootstrap interval over items (seeded; the same resamples for
every slope, so the excess's interval is the difference's own).

What has no information says so, and no p-value is then printed: no verdict that is not a tie,
no item that changed its pick, no difference of confidence, lengths that do not vary — ``None``
with a ``note``, never ``p = 0`` or ``p = 1`` made up.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .reruns import exact_interval

__all__ = ["EXACT_WILCOXON_MAX", "MAX_FACTOR_LEVELS", "VERDICTS", "length_bias",
           "position_bias", "slot_confidence_test"]

VERDICTS = ("a", "b", "tie")
"""What a pairwise verdict may say: answer A, answer B, or neither."""

EXACT_WILCOXON_MAX = 50
"""Up to this many differences (without zeros or ties) the signed-rank p-value is exact."""

MAX_FACTOR_LEVELS = 20
"""A human score with more distinct values than this is controlled for linearly, not as a
factor."""


def _verdicts(values: ArrayLike, what: str) -> np.ndarray:
    v = np.asarray(values).astype(str)
    v = np.char.lower(np.char.strip(v))
    bad = ~np.isin(v, VERDICTS)
    if bad.any():
        raise ValueError(f"{what}: {int(bad.sum())} verdict(s) not a, b or tie "
                         f"(e.g. {v[bad][0]!r})")
    return v


def _binomial(k: int, n: int, what: str) -> dict[str, Any]:
    """``{k, n, share, low, high, p_value}`` of an exact binomial test of 1/2, or the same
    with None and a note when n is 0."""
    from scipy import stats

    if n == 0:
        return {"k": 0, "n": 0, "share": None, "low": None, "high": None, "p_value": None,
                "note": f"no {what}: the test has no information"}
    res = stats.binomtest(int(k), int(n), 0.5)
    ci = res.proportion_ci(confidence_level=0.95, method="exact")
    return {"k": int(k), "n": int(n), "share": k / n, "low": float(ci.low),
            "high": float(ci.high), "p_value": float(res.pvalue)}


def slot_confidence_test(first: ArrayLike, second: ArrayLike, *, n_resamples: int = 1000,
                         seed: int = 0) -> dict[str, Any]:
    """Whether the judge is surer of the same pick when it is shown first: the paired
    differences ``first - second`` (module docstring).

    Returns
    -------
    dict
        ``n``, ``mean_first``, ``mean_second``, ``mean_difference`` {``estimate``, ``low``,
        ``high``}, ``wilcoxon`` {``statistic``, ``p_value``, ``method``: exact | approx},
        ``sign`` (exact binomial of positive against negative differences), and ``note``
        where a test has no information.
    """
    from scipy import stats

    from ..metrics import bootstrap_ci

    a, b = np.asarray(first, dtype=np.float64), np.asarray(second, dtype=np.float64)
    d = a - b
    out: dict[str, Any] = {"n": int(d.size)}
    if d.size == 0:
        out["note"] = "no item was picked the same way in both orders with a confidence"
        return out
    out.update(mean_first=float(a.mean()), mean_second=float(b.mean()))
    mean = {"estimate": float(d.mean()), "low": None, "high": None}
    if np.ptp(d) > 0 and n_resamples:
        res = bootstrap_ci(np.mean, d, n_resamples=n_resamples, seed=seed)
        mean.update(low=float(res.low), high=float(res.high))
    out["mean_difference"] = mean
    nonzero = d[d != 0]
    out["sign"] = _binomial(int((nonzero > 0).sum()), int(nonzero.size),
                            "difference of confidence between the slots")
    if nonzero.size == 0:
        out["wilcoxon"] = {"statistic": None, "p_value": None, "method": None}
        out["note"] = ("the judge's confidence is the same in both slots on every item: no "
                       "test has information")
        return out
    exact = (nonzero.size == d.size and d.size <= EXACT_WILCOXON_MAX
             and np.unique(np.abs(d)).size == d.size)
    res = stats.wilcoxon(d if exact else nonzero, method="exact" if exact else "approx")
    out["wilcoxon"] = {"statistic": float(res.statistic), "p_value": float(res.pvalue),
                       "method": "exact" if exact else "approx"}
    return out


def position_bias(verdict_ab: ArrayLike, verdict_ba: ArrayLike, *,
                  conf_ab: ArrayLike | None = None, conf_ba: ArrayLike | None = None,
                  length_a: ArrayLike | None = None, length_b: ArrayLike | None = None,
                  human: ArrayLike | None = None, n_resamples: int = 1000,
                  seed: int = 0) -> dict[str, Any]:
    """The position tests of a pairwise judge (module docstring).

    Parameters
    ----------
    verdict_ab, verdict_ba : array_like of str, shape (n,)
        The verdict with answer A shown first and with answer B shown first: ``a``, ``b`` or
        ``tie`` (naming the answer, not the slot).
    conf_ab, conf_ba : array_like, shape (n,), optional
        The judge's confidence in each verdict (e.g. its probability of the letter it gave).
    length_a, length_b : array_like, shape (n,), optional
        The answers' lengths: adds how often the judge picks the longer answer.
    human : array_like of str, shape (n,), optional
        The humans' pick (``a``, ``b``, ``tie``; empty for none): adds the judge's agreement
        with it, and how often the humans pick the longer answer.
    n_resamples, seed :
        The bootstrap of the mean confidence difference.

    Returns
    -------
    dict
        ``n_items``, ``ties`` {``ab``, ``ba``}, ``flips`` {``count``, ``n``, ``share``,
        ``low``, ``high``}, ``first_slot`` {``k``, ``n``, ``share``, ``low``, ``high``,
        ``p_value``}, ``sign_test`` (the same keys, over the items whose pick changed),
        and with confidences ``confidence_by_slot`` (:func:`slot_confidence_test`), with
        lengths ``longer`` {``judge``, [``human``]}, with human picks ``agreement``.
    """
    ab, ba = _verdicts(verdict_ab, "verdicts of order AB"), _verdicts(verdict_ba,
                                                                      "verdicts of order BA")
    if ab.shape != ba.shape or ab.ndim != 1:
        raise ValueError("both orders need a verdict for every item")
    n = ab.size
    if n < 2:
        raise ValueError(f"{n} item(s): the position tests need at least two")
    flipped = int((ab != ba).sum())
    first = int((ab == "a").sum() + (ba == "b").sum())       # the first slot's pick
    judged = int((ab != "tie").sum() + (ba != "tie").sum())
    first_both = int(((ab == "a") & (ba == "b")).sum())
    second_both = int(((ab == "b") & (ba == "a")).sum())
    out: dict[str, Any] = {
        "n_items": n, "ties": {"ab": int((ab == "tie").sum()), "ba": int((ba == "tie").sum())},
        "flips": {"count": flipped, "n": n, "share": flipped / n,
                  **exact_interval(flipped, n)},
        "first_slot": _binomial(first, judged, "verdict that is not a tie"),
        "sign_test": _binomial(first_both, first_both + second_both,
                               "item whose pick changed with the order"),
    }
    if conf_ab is not None and conf_ba is not None:
        ca, cb = np.asarray(conf_ab, dtype=np.float64), np.asarray(conf_ba, dtype=np.float64)
        same = (ab == ba) & (ab != "tie") & np.isfinite(ca) & np.isfinite(cb)
        first_conf = np.where(ab == "a", ca, cb)[same]       # the pick shown first
        second_conf = np.where(ab == "a", cb, ca)[same]
        out["confidence_by_slot"] = slot_confidence_test(first_conf, second_conf,
                                                         n_resamples=n_resamples, seed=seed)
    h = None if human is None else np.char.lower(np.char.strip(
        np.asarray(human).astype(str)))
    if length_a is not None and length_b is not None:
        la, lb = np.asarray(length_a, dtype=np.float64), np.asarray(length_b, dtype=np.float64)
        longer = np.where(la > lb, "a", np.where(lb > la, "b", ""))
        differ = longer != ""
        picks = np.concatenate([ab[differ], ba[differ]])
        target = np.concatenate([longer[differ], longer[differ]])
        decided = picks != "tie"
        out["longer"] = {"judge": _binomial(int((picks[decided] == target[decided]).sum()),
                                            int(decided.sum()),
                                            "verdict between answers of different lengths")}
        if h is not None:
            sure = differ & np.isin(h, ("a", "b"))
            out["longer"]["human"] = _binomial(int((h[sure] == longer[sure]).sum()),
                                               int(sure.sum()), "human pick between answers "
                                               "of different lengths")
    if h is not None:
        known = np.isin(h, VERDICTS)
        picks = np.concatenate([ab[known], ba[known]])
        truth = np.concatenate([h[known], h[known]])
        k = int((picks == truth).sum())
        out["agreement"] = {"k": k, "n": int(picks.size),
                            "share": k / picks.size if picks.size else None,
                            **(exact_interval(k, picks.size) or {"low": None, "high": None})}
    return out


# ------------------------------------------------------------------ length
def _slopes(x: np.ndarray, ys: Sequence[np.ndarray], groups: np.ndarray | None,
            control: np.ndarray | None, w: np.ndarray) -> np.ndarray:
    """Weighted least-squares slopes of each ``y`` on ``x`` (rows of ``w``: one weighting per
    resample), within the groups (a mean per group) or with ``control`` as a covariate.
    Returns (len(ys), resamples); NaN where x does not vary."""
    out = []
    if groups is not None:
        onehot = (groups[:, None] == np.unique(groups)[None, :]).astype(np.float64)
        sw = w @ onehot
        swx = (w * x) @ onehot
        with np.errstate(invalid="ignore", divide="ignore"):
            mx = np.where(sw > 0, swx / sw, 0.0)
        sxx = (w * x * x).sum(axis=1) - (mx * swx).sum(axis=1)
        for y in ys:
            swy = (w * y) @ onehot
            sxy = (w * x * y).sum(axis=1) - (mx * swy).sum(axis=1)
            out.append(sxy / sxx)
    elif control is not None:
        total = w.sum(axis=1)

        def cov(a, b):
            return (w * a * b).sum(axis=1) / total - ((w * a).sum(axis=1) / total) * (
                (w * b).sum(axis=1) / total)

        sxx, shh, sxh = cov(x, x), cov(control, control), cov(x, control)
        for y in ys:
            sxy, shy = cov(x, y), cov(control, y)
            out.append((sxy * shh - sxh * shy) / (sxx * shh - sxh ** 2))
    else:
        total = w.sum(axis=1)
        mx = (w * x).sum(axis=1) / total
        sxx = (w * x * x).sum(axis=1) - total * mx ** 2
        for y in ys:
            sxy = (w * x * y).sum(axis=1) - mx * (w * y).sum(axis=1)
            out.append(sxy / sxx)
    with np.errstate(invalid="ignore", divide="ignore"):
        result = np.asarray(out, dtype=np.float64)
    return np.where(np.isfinite(result), result, np.nan)


def _slope_dict(estimate: float, reps: np.ndarray | None, per: float) -> dict[str, Any]:
    from ..metrics import percentile_interval

    if not math.isfinite(estimate):
        return {"estimate": None, "low": None, "high": None,
                "note": "the lengths do not vary within the human scores: no slope"}
    out: dict[str, Any] = {"estimate": estimate * per, "low": None, "high": None}
    if reps is not None:
        low, high, undefined = percentile_interval(reps, 0.95)
        if math.isfinite(low) and math.isfinite(high):
            out.update(low=low * per, high=high * per)
        if undefined:
            out["undefined_resamples"] = int(undefined)
    return out


def length_bias(judge: ArrayLike, human: ArrayLike, length: ArrayLike, *,
                confidence: ArrayLike | None = None, per: float = 100.0,
                n_resamples: int = 1000, seed: int = 0) -> dict[str, Any]:
    """The judge's score (and confidence) against answer length, beside the humans' own
    (module docstring).

    Parameters
    ----------
    judge, human : array_like, shape (n,)
        The judge's and the human score of each answer.
    length : array_like, shape (n,)
        Each answer's length (words, characters: the unit of ``per``).
    confidence : array_like, shape (n,), optional
        The judge's confidence in its score.
    per : float
        Slopes are per this many units of length.
    n_resamples, seed :
        The bootstrap over items (0: no intervals).

    Returns
    -------
    dict
        ``n``, ``per``, ``length`` {``min``, ``median``, ``max``}, ``control`` ("levels" or
        "linear"), ``judge_slope``, ``human_slope``, ``excess_slope``,
        ``judge_slope_at_fixed_human`` and, with a confidence,
        ``confidence_slope_at_fixed_human``: each {``estimate``, ``low``, ``high``}.
    """
    from ..metrics import resample_counts

    f = np.asarray(judge, dtype=np.float64)
    y = np.asarray(human, dtype=np.float64)
    x = np.asarray(length, dtype=np.float64)
    if not (f.shape == y.shape == x.shape) or f.ndim != 1:
        raise ValueError("judge, human and length need one value per item")
    if not (np.isfinite(f).all() and np.isfinite(y).all() and np.isfinite(x).all()):
        raise ValueError("judge, human and length must be finite numbers")
    if f.size < 3:
        raise ValueError(f"{f.size} item(s): a slope and its interval need at least three")
    if np.ptp(x) == 0:
        raise ValueError(f"every answer has the same length ({x[0]:g}): length can explain "
                         "nothing (no information)")
    if not (math.isfinite(per) and per > 0):
        raise ValueError(f"per must be a positive number, got {per!r}")
    levels = np.unique(y)
    factor = levels.size <= MAX_FACTOR_LEVELS
    ys_plain = [f, y, f - y]
    ys_fixed = [f] + ([np.asarray(confidence, dtype=np.float64)] if confidence is not None
                      else [])
    if confidence is not None and not (ys_fixed[1].shape == f.shape
                                       and np.isfinite(ys_fixed[1]).all()):
        raise ValueError("confidence needs one finite value per item")
    ones = np.ones((1, f.size))
    plain = _slopes(x, ys_plain, None, None, ones)[:, 0]
    fixed = _slopes(x, ys_fixed, y if factor else None, None if factor else y, ones)[:, 0]
    reps_plain = reps_fixed = None
    if n_resamples:
        rng = np.random.default_rng(seed)
        parts_p, parts_f = [], []
        for block in resample_counts(f.size, n_resamples, rng, scheme="multinomial"):
            parts_p.append(_slopes(x, ys_plain, None, None, block))
            parts_f.append(_slopes(x, ys_fixed, y if factor else None,
                                   None if factor else y, block))
        reps_plain, reps_fixed = np.concatenate(parts_p, axis=1), np.concatenate(parts_f,
                                                                                 axis=1)

    def one(values, reps, i):
        return _slope_dict(float(values[i]), None if reps is None else reps[i], per)

    out: dict[str, Any] = {
        "n": int(f.size), "per": float(per),
        "length": {"min": float(x.min()), "median": float(np.median(x)), "max": float(x.max())},
        "control": "levels" if factor else "linear",
        "judge_slope": one(plain, reps_plain, 0), "human_slope": one(plain, reps_plain, 1),
        "excess_slope": one(plain, reps_plain, 2),
        "judge_slope_at_fixed_human": one(fixed, reps_fixed, 0)}
    if confidence is not None:
        out["confidence_slope_at_fixed_human"] = one(fixed, reps_fixed, 1)
    return out
