"""A verdict per model or judge (a comparison: per metric): one or two sentences, computed
from a result's numbers and their 95% intervals, that open its report section and its terminal
table.

:data:`VERDICTS` maps a section kind to ``fn(result) -> sentence`` (None when the result has
not the numbers to judge); the HTML section and the terminal both call
:func:`section_verdicts` (a comparison's terminal: :func:`compare_verdict` on the same tables,
:func:`comparison_results`), so the two always say the same. Every rule claims no more than the
intervals support: a result without intervals (``--bootstrap 0``) gets its numbers and the words
"not judged", never an adjective. The rules and their thresholds (the constants below) are
documented in docs/concepts.md ("Verdicts") and pinned by tests/report/test_verdicts.py.

Pure Python (no numpy, no matplotlib): printing a terminal table loads no heavy library.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .._registry import Registry
from .._text import display_names

__all__ = ["CHANCE_AUROC", "MIN_CONFIDENCE_GAP", "RESULTS_OF", "SIGNIFICANCE", "TEST_NAMES",
           "UNINFORMATIVE_SHARE", "VERDICTS", "Z95", "comparison_results", "compare_verdict",
           "p_text", "register_verdict", "section_verdicts", "wilson"]

Verdict = Callable[[Mapping[str, Any]], "str | None"]

VERDICTS: Registry[Verdict] = Registry("verdict")
"""Section kind -> ``fn(result) -> sentence or None``."""

register_verdict = VERDICTS.register

RESULTS_OF: Registry[Callable[[Mapping[str, Any]], Mapping[str, Any]]] = Registry(
    "verdict results", {"compare": lambda document: comparison_results(document)})
"""Section kind -> ``fn(results) -> {name: result}`` for the kinds whose results are one
document rather than one result per input: what their verdicts are about (a comparison:
one verdict per metric, :func:`comparison_results`)."""

MIN_CONFIDENCE_GAP = 0.02
"""|mean confidence - accuracy| from which a clear gap is called over- or underconfident
(below it, and clear, "slightly"): a gap the accuracy interval excludes can be a fraction of a
point on a large sample, true but of no consequence. Compared with a tolerance of 1e-9
(0.69 - 0.67 is 0.019999999999999907 in floating point)."""

CHANCE_AUROC = 0.5
"""The AUROC of a confidence that cannot tell right answers from wrong ones."""

SIGNIFICANCE = 0.05
"""The p-value under which the best confidence measure is called clearly ahead of the next."""

UNINFORMATIVE_SHARE = 0.5
"""An interval method whose intervals (mean over seeds) are at least this share
"uninformative" (wider than three quarters of the scale) has its coverage called
uninformative: it covers because it spans almost every score."""

Z95 = 1.959963984540054
"""The standard normal quantile of a two-sided 95% interval."""


# ---------------------------------------------------------------- numbers and intervals

def _defined(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) \
        and math.isfinite(value)


def _value(value: Any) -> float | None:
    """A number, or the mean of a ``{mean, std}`` summary over seeds; None when undefined."""
    if isinstance(value, Mapping):
        value = value.get("mean")
    return float(value) if _defined(value) else None


def _ci(result: Mapping[str, Any], key: str) -> tuple[float, float] | None:
    """``result["ci"][key]`` as (low, high), None when it is absent or undefined."""
    ci = (result.get("ci") or {}).get(key) or {}
    low, high = ci.get("low"), ci.get("high")
    return (float(low), float(high)) if _defined(low) and _defined(high) else None


def _num(value: float) -> str:
    """Two decimals; three for a value that two would show as 0.00 (an interval bound of
    0.001 must not read as one that touches 0)."""
    return f"{value:.3f}" if 0 < abs(value) < 0.005 else f"{value:.2f}"


def _percent(values: Sequence[float]) -> str:
    low, high = f"{min(values):.0%}", f"{max(values):.0%}"
    return low if low == high else f"{low[:-1]}-{high}"


def _span(ci: tuple[float, float] | None) -> str:
    return "" if ci is None else f" [{_num(ci[0])}, {_num(ci[1])}]"


OUTSIDE = "†"
"""After an interval whose value lies outside it (:data:`OUTSIDE_NOTE` says why)."""

OUTSIDE_NOTE = ("† the value lies outside its own 95% interval: resampling biases the metric "
                "(binned ECE, for one, rises on resamples, whose duplicated rows add noise to "
                "every bin, so a well-calibrated confidence's interval can lie above its ECE)")
"""The footnote of :data:`OUTSIDE`, printed once under verdicts that use it."""


def _with_ci(name: str, value: float, ci: tuple[float, float] | None) -> str:
    # outside as printed: 0.01225 under 0.01230 shows "0.01 [0.01, 0.04]", which is inside
    shown = None if ci is None else [float(_num(x)) for x in (ci[0], value, ci[1])]
    outside = shown is not None and not shown[0] <= shown[1] <= shown[2]
    return f"{name} {_num(value)}{_span(ci)}{OUTSIDE if outside else ''}"


def marked_outside(line: str) -> bool:
    """Whether a verdict holds an interval marked :data:`OUTSIDE` (a name holding the
    character is no mark)."""
    return f"]{OUTSIDE}" in line


def _range(values: Sequence[float]) -> str:
    """"0.97" when the values agree to two decimals, else "0.97-1.00"."""
    low, high = _num(min(values)), _num(max(values))
    return low if low == high else f"{low}-{high}"


def _names(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def wilson(share: float, n: int) -> tuple[float, float]:
    """The Wilson 95% interval of a proportion ``share`` observed on ``n`` items.

    >>> [round(x, 3) for x in wilson(1.0, 60)]
    [0.94, 1.0]
    """
    z2 = Z95 * Z95
    centre = (share + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 / (1 + z2 / n) * math.sqrt(share * (1 - share) / n + z2 / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def _against(ci: tuple[float, float], reference: float) -> str:
    """"above", "below" or "within": where a 95% interval lies against a reference value
    (an interval touching it includes it)."""
    if ci[0] > reference:
        return "above"
    if ci[1] < reference:
        return "below"
    return "within"


# ---------------------------------------------------------------- confidence

def calibration_clause(result: Mapping[str, Any]) -> str | None:
    """Stated confidence against accuracy. Overconfident when the mean confidence exceeds the
    accuracy by at least :data:`MIN_CONFIDENCE_GAP` and the accuracy's 95% interval lies wholly
    below it; underconfident the other way; "slightly" when the interval excludes the mean
    confidence but the gap is smaller; "no clear gap" when the interval holds it. The mean
    confidence is taken as known: an average of stated numbers varies less than an accuracy of
    0/1 answers, and the accuracy interval is the one the bootstrap gives."""
    accuracy, stated = _value(result.get("accuracy")), _value(result.get("mean_confidence"))
    if accuracy is None or stated is None:
        return None
    if "ece" in result and result["ece"] is None and not 0 <= stated <= 1:
        # --any-confidence: a log-likelihood or a score, no probability to set against the
        # accuracy (its ECE and Brier are "–"); only its ranking is judged
        return (f"its confidence is no probability (mean {_num(stated)}), so calibration is "
                f"not judged; right {_num(accuracy)}{_span(_ci(result, 'accuracy'))}")
    acc_ci = _ci(result, "accuracy")
    numbers = f"states {_num(stated)}, right {_num(accuracy)}{_span(acc_ci)}"
    ece = _value(result.get("ece"))
    if ece is not None:
        numbers += f" ({_with_ci('ECE', ece, _ci(result, 'ece'))})"
    if acc_ci is None:
        return f"{numbers}; calibration not judged (no interval)"
    where = _against(acc_ci, stated)
    if where == "within":
        return f"no clear gap between mean confidence and accuracy: {numbers}"
    word = "overconfident" if where == "below" else "underconfident"
    if abs(stated - accuracy) < MIN_CONFIDENCE_GAP - 1e-9:
        word = "slightly " + word
    return f"{word}: {numbers}"


ANSWERS = ("ranks its right answers above its wrong ones",
           "ranks its wrong answers above its right ones", "cannot tell right from wrong")
"""What an AUROC above, below or around chance says of a confidence in answers."""

GOLD_OPTION = ("ranks the gold option above the others", "ranks other options above the gold one",
               "cannot tell the gold option from the others")
"""The same of a confidence measure over multiple-choice options."""


def discrimination_clause(result: Mapping[str, Any], says: tuple[str, str, str] = ANSWERS
                          ) -> str | None:
    """Whether the confidence ranks right answers above wrong ones: by where the AUROC's 95%
    interval lies against :data:`CHANCE_AUROC` (an interval that includes 0.5: "cannot
    tell"); ``says`` is the reading of above, below and around chance."""
    auroc = _value(result.get("auroc"))
    if auroc is None:
        return _undefined_auroc(result) if "auroc" in result else None
    ci = _ci(result, "auroc")
    numbers = _with_ci("AUROC", auroc, ci)
    if ci is None:
        return f"{numbers}; ranking not judged (no interval)"
    above, below, around = says
    reading = {"above": above, "below": below, "within": around}[_against(ci, CHANCE_AUROC)]
    return f"{reading} ({numbers})"


def _undefined_auroc(result: Mapping[str, Any]) -> str:
    """Why the AUROC is undefined, from the accuracy: one class (every answer right, or
    every one wrong), or a correctness that is graded rather than 0/1 (an accuracy strictly
    between 0 and 1 with no AUROC)."""
    accuracy = _value(result.get("accuracy"))
    if accuracy == 1:
        return "AUROC undefined (every answer right)"
    if accuracy == 0:
        return "AUROC undefined (every answer wrong)"
    if accuracy is not None:
        return "AUROC undefined (the correctness is graded, not 0/1)"
    return "AUROC undefined (every answer right, or every answer wrong)"


@register_verdict("confidence")
def confidence_verdict(result: Mapping[str, Any]) -> str | None:
    """Calibration (:func:`calibration_clause`), then ranking
    (:func:`discrimination_clause`)."""
    clauses = [calibration_clause(result), discrimination_clause(result)]
    return "; ".join(c for c in clauses if c) or None


# ---------------------------------------------------------------- agreement

def bias_half_width(result: Mapping[str, Any]) -> float | None:
    """A conservative 95% half-width of the mean bias (judge minus reference), from numbers
    the result has: every difference d lies within the scale's range R (the confusion
    matrix's labels span every score given), so Var(d) <= E[d^2] <= R * E|d| = R * MAE, and
    the half-width is z * sqrt(R * MAE / n). None without a scale or n."""
    labels = [float(v) for v in ((result.get("confusion") or {}).get("labels") or [])
              if _defined(v)]
    mae, n = _value(result.get("mae")), result.get("n")
    if len(labels) < 2 or mae is None or not isinstance(n, int) or n < 2:
        return None
    return Z95 * math.sqrt((max(labels) - min(labels)) * mae / n)


@register_verdict("agreement")
def agreement_verdict(result: Mapping[str, Any]) -> str | None:
    """Whether the judge's scores rise with the reference's (Pearson's 95% interval against
    0), and whether it scores higher or lower on average (the mean bias against its
    conservative interval, :func:`bias_half_width`)."""
    clauses = [_correlation_clause(result), _bias_clause(result)]
    return "; ".join(c for c in clauses if c) or None


def _correlation_clause(result: Mapping[str, Any]) -> str | None:
    pearson = _value(result.get("pearson"))
    if pearson is None:
        return ("Pearson undefined: its scores or the reference's do not vary"
                if "pearson" in result else None)
    ci = _ci(result, "pearson")
    numbers = _with_ci("Pearson", pearson, ci)
    if ci is None:
        return f"{numbers}; not judged (no interval)"
    where = _against(ci, 0.0)
    if where == "above":
        return f"its scores rise with the reference scores ({numbers})"
    if where == "below":
        return f"its scores fall as the reference scores rise ({numbers})"
    return f"no clear relation to the reference scores ({numbers})"


def _bias_clause(result: Mapping[str, Any]) -> str | None:
    bias = _value(result.get("bias"))
    if bias is None:
        return None
    half = bias_half_width(result)
    if half is None:
        return f"mean bias {_num(bias)} (judge minus reference; not judged)"
    numbers = f"{_num(abs(bias))} on average (± {_num(half)})"
    if bias - half > 0:
        return f"scores higher than the reference by {numbers}"
    if bias + half < 0:
        return f"scores lower than the reference by {numbers}"
    return f"no clear bias (mean judge minus reference {_num(bias)} ± {_num(half)})"


# ---------------------------------------------------------------- conformal sets

def _coverage_status(coverage: float, target: float, n_test: int) -> str:
    """Where the Wilson 95% interval of a coverage on ``n_test`` test items lies against the
    target: "above", "below" or "within"."""
    return _against(wilson(coverage, n_test), target)


_AT_TARGET = {"within": "at", "above": "above", "below": "below"}


def _coverage_groups(coverages: Mapping[str, float], target: float, n_test: int) -> str:
    """"lac and raps cover at their target 0.90 (0.97), aps above it (1.00)": the scores
    grouped by where their coverage lies against the target."""
    groups: dict[str, list[str]] = {}
    for name, coverage in coverages.items():
        groups.setdefault(_coverage_status(coverage, target, n_test), []).append(name)
    parts = []
    for status in ("below", "within", "above"):
        names = groups.get(status)
        if not names:
            continue
        values = _range([coverages[n] for n in names])
        verb = "covers" if len(names) == 1 else "cover"
        if not parts:
            parts.append(f"{_names(names)} {verb} {_AT_TARGET[status]} the target "
                         f"{_num(target)} ({values} of {n_test:,} test items)")
        else:
            parts.append(f"{_names(names)} {_AT_TARGET[status]} it ({values})")
    return ", ".join(parts)


@register_verdict("sets")
def sets_verdict(result: Mapping[str, Any]) -> str | None:
    """Each score's coverage against the target (its Wilson 95% interval on the test items
    against 1 - alpha: below, at, above), and the smallest mean set among the scores that do
    not cover below it."""
    scores = result.get("scores") or {}
    n_test = result.get("n_test")
    target = _value(result.get("coverage_target"))
    if target is None and _defined(result.get("alpha")):
        target = 1 - float(result["alpha"])
    coverages = {s: _value(m.get("coverage")) for s, m in scores.items()}
    coverages = {s: c for s, c in coverages.items() if c is not None}
    if not coverages or target is None or not isinstance(n_test, int) or n_test < 1:
        return None
    sentence = _coverage_groups(coverages, target, n_test)
    sizes = {s: _value(scores[s].get("set_size")) for s in coverages
             if _coverage_status(coverages[s], target, n_test) != "below"}
    sizes = {s: v for s, v in sizes.items() if v is not None}
    if sizes:
        best = min(sizes, key=sizes.__getitem__)
        what = "smallest sets" if len(sizes) > 1 else "sets"
        sentence += f"; {what}: {best}, {_num(sizes[best])} options on average"
    return sentence


# ---------------------------------------------------------------- conformal intervals

def _uninformative_share(method: Mapping[str, Any]) -> float | None:
    bands = (method.get("diagnostics") or {}).get("informativeness_adj") or {}
    return _value((bands.get("uninformative") or {}).get("share"))


@register_verdict("intervals")
def intervals_verdict(result: Mapping[str, Any]) -> str | None:
    """The interval methods' coverage against 1 - alpha (Wilson 95% interval on the test items
    of a split) and whether their intervals say anything: when every method has at least
    :data:`UNINFORMATIVE_SHARE` of its intervals wider than three quarters of the scale, its
    coverage is called what it is, a consequence of spanning the scale. Then the rating-set
    methods' coverage and size."""
    methods = result.get("methods") or {}
    n, alpha = result.get("n"), result.get("alpha")
    if not isinstance(n, int) or not _defined(alpha):
        return None
    target = 1 - float(alpha)
    n_test = max(1, round(n * (1 - float(result.get("cal_fraction") or 0.5))))
    interval = {m: v for m, v in methods.items() if "width_raw" in v}
    rating = {m: v for m, v in methods.items() if "set_size" in v}
    clauses = [_interval_clause(interval, target, n_test, result.get("point") or {}),
               _rating_clause(rating, target, n_test)]
    return "; ".join(c for c in clauses if c) or None


def _interval_clause(methods: Mapping[str, Mapping], target: float, n_test: int,
                     point: Mapping[str, Any]) -> str | None:
    coverage = {m: _value(v.get("coverage_raw")) for m, v in methods.items()}
    coverage = {m: c for m, c in coverage.items() if c is not None}
    if not coverage:
        return None
    shares = {m: _uninformative_share(methods[m]) for m in coverage}
    # the raw width beside the raw coverage (the interval the guarantee is about); the
    # adjusted one, when it reads differently, in brackets: the uninformative shares are of
    # the adjusted intervals, the scores a reader can be told
    widths = {m: _value(methods[m].get("width_raw")) for m in coverage}
    adjusted = {m: _value(methods[m].get("width_adj")) for m in coverage}
    if all(s is not None and s >= UNINFORMATIVE_SHARE for s in shares.values()):
        judge = _value(point.get("pearson"))
        tail = "" if judge is None else \
            f"; the judge's ratings have Pearson {_num(judge)} with the reference"
        width = _widths_said([w for w in widths.values() if w is not None],
                             [w for w in adjusted.values() if w is not None])
        every = "every interval method covers" if len(coverage) > 1 else \
            f"{next(iter(coverage))} covers"
        return (f"{every} {_range(list(coverage.values()))} (target {_num(target)}), but its "
                f"intervals say little: {_percent(list(shares.values()))} of them, adjusted "
                f"to whole scores, span more than three quarters of the scale{width}{tail}")
    sentence = _coverage_groups(coverage, target, n_test)
    covering = [m for m in coverage if widths[m] is not None
                and _coverage_status(coverage[m], target, n_test) != "below"]
    if covering:
        best = min(covering, key=widths.__getitem__)
        share = shares[best]
        said = "" if share is None else f", {share:.0%} of them uninformative"
        width = _widths_said([widths[best]], [] if adjusted[best] is None else [adjusted[best]])
        sentence += f"; narrowest that covers: {best}{width}{said}"
    wide = [m for m, s in shares.items() if s is not None and s >= UNINFORMATIVE_SHARE]
    if wide:
        sentence += (f"; {_names(wide)} say{'s' if len(wide) == 1 else ''} little: "
                     f"{_percent([shares[m] for m in wide])} of "
                     f"{'its' if len(wide) == 1 else 'their'} intervals, adjusted to whole "
                     "scores, span more than three quarters of the scale")
    return sentence


def _widths_said(raw: list[float], adjusted: list[float]) -> str:
    """", mean width 2.18 (2.85 adjusted to whole scores)"; the adjusted part only where it
    reads differently; "" without a width."""
    if not raw:
        return ""
    text = f", mean width {_range(raw)}"
    if adjusted and _range(adjusted) != _range(raw):
        text += f" ({_range(adjusted)} adjusted to whole scores)"
    return text


def _rating_clause(methods: Mapping[str, Mapping], target: float, n_test: int) -> str | None:
    """The rating-set methods by the same coverage rule, and the smallest mean set among
    those that do not cover below the target."""
    coverage = {m: _value(v.get("coverage")) for m, v in methods.items()}
    coverage = {m: c for m, c in coverage.items() if c is not None}
    if not coverage:
        return None
    sentence = "rating sets: " + _coverage_groups(coverage, target, n_test)
    sizes = {m: _value(methods[m].get("set_size")) for m in coverage
             if _coverage_status(coverage[m], target, n_test) != "below"}
    sizes = {m: v for m, v in sizes.items() if v is not None}
    if sizes:
        best = min(sizes, key=sizes.__getitem__)
        sentence += f"; smallest: {best}, {_num(sizes[best])} ratings on average"
    return sentence


# ---------------------------------------------------------------- process judges

@register_verdict("steps")
def steps_verdict(result: Mapping[str, Any]) -> str | None:
    """Sensitivity (whether P(correct) drops from right steps to wrong ones: CSS's 95% interval
    against 0), robustness under meaning-preserving rewrites (CCR, the share of steps whose
    confidence moved, and CRS), and calibration (CCS with ECE)."""
    clauses = [_sensitivity_clause(result), _robustness_clause(result),
               _step_calibration_clause(result)]
    return "; ".join(c for c in clauses if c) or None


def _sensitivity_clause(result: Mapping[str, Any]) -> str | None:
    css = _value(result.get("css"))
    if css is None:
        return None
    ci = _ci(result, "css")
    numbers = _with_ci("CSS", css, ci)
    if ci is None:
        return f"{numbers}; sensitivity not judged (no interval)"
    where = _against(ci, 0.0)
    if where == "above":
        return f"its confidence drops on wrong steps ({numbers})"
    if where == "below":
        return f"its confidence rises on wrong steps ({numbers})"
    return f"its confidence does not clearly drop on wrong steps ({numbers})"


def _robustness_clause(result: Mapping[str, Any]) -> str | None:
    ccr, crs = _value(result.get("ccr")), _value(result.get("crs"))
    if ccr is None or crs is None:
        return "no rewritten steps: robustness not measured" if "crs" in result else None
    moved = f"{_num(ccr)}{_span(_ci(result, 'ccr'))}"
    return (f"under rewrites its confidence moves on {moved} of steps "
            f"(CCR; {_with_ci('CRS', crs, _ci(result, 'crs'))})")


def _step_calibration_clause(result: Mapping[str, Any]) -> str | None:
    ccs, ece = _value(result.get("ccs")), _value(result.get("ece"))
    if ccs is None:
        return None
    tail = "" if ece is None else f" ({_with_ci('ECE', ece, _ci(result, 'ece'))})"
    return f"{_with_ci('CCS', ccs, _ci(result, 'ccs'))}{tail}"


# ---------------------------------------------------------------- confidence measures

@register_verdict("measures")
def measures_verdict(result: Mapping[str, Any]) -> str | None:
    """The measure ranked first: whether its AUROC's 95% interval lies above
    :data:`CHANCE_AUROC` (it tells the gold option from the others), whether it is clearly
    ahead of the next (paired p-value under :data:`SIGNIFICANCE`), and how many measures have
    an interval above chance."""
    ranking = result.get("ranking") or []
    measures = result.get("measures") or {}
    if not ranking or ranking[0].get("measure") not in measures:
        return None
    best = ranking[0]["measure"]
    clause = discrimination_clause(measures[best], GOLD_OPTION)
    if clause is None:
        return None
    sentence = f"best measure {best}: {clause}"
    ahead = _ahead_clause(ranking[0])
    if ahead:
        sentence += f", {ahead}"
    above = [m for m, v in measures.items()
             if (ci := _ci(v, "auroc")) is not None and ci[0] > CHANCE_AUROC]
    if any(_ci(v, "auroc") is not None for v in measures.values()):
        sentence += (f"; {len(above)} of {len(measures)} measures have an AUROC interval above "
                     f"{_num(CHANCE_AUROC)}")
    return sentence


def _ahead_clause(first: Mapping[str, Any]) -> str | None:
    nxt = first.get("vs_next") or {}
    p = _value(nxt.get("p_value"))
    if p is None or not nxt.get("measure"):
        return None
    if p < SIGNIFICANCE:
        return f"clearly ahead of {nxt['measure']} (p {p:.3f})"
    return f"not clearly ahead of {nxt['measure']} (p {p:.2f})"


# ---------------------------------------------------------------- error diagnosis

@register_verdict("diagnose")
def diagnose_verdict(result: Mapping[str, Any]) -> str | None:
    """Strict accuracy (its Wilson 95% interval) against the accuracy of random guessing; and
    what always naming the most common type would score."""
    accuracy = _value(result.get("accuracy_strict"))
    n = result.get("n")
    if accuracy is None:
        return None
    ci = (float(result["ci"]["low"]), float(result["ci"]["high"])) \
        if _defined((result.get("ci") or {}).get("low")) \
        and _defined((result.get("ci") or {}).get("high")) else None
    items = f" on {n:,} items" if isinstance(n, int) else ""
    numbers = f"strict accuracy {_num(accuracy)}{_span(ci)}{items}"
    baselines = result.get("baselines") or {}
    chance = _value((baselines.get("random") or {}).get("expected"))
    if chance is None:
        sentence = numbers
    elif ci is None:
        sentence = f"{numbers}, random guessing {_num(chance)}: not judged (no interval)"
    else:
        where = {"above": "above", "below": "below",
                 "within": "not distinguishable from"}[_against(ci, chance)]
        sentence = f"{numbers}: {where} random guessing ({_num(chance)})"
    majority = baselines.get("majority") or {}
    if _defined(majority.get("accuracy")) and majority.get("type"):
        sentence += (f"; always answering {majority['type']} would score "
                     f"{_num(majority['accuracy'])}")
    return sentence


# ---------------------------------------------------------------- certified thresholds

@register_verdict("guarantee")
def guarantee_verdict(result: Mapping[str, Any]) -> str | None:
    """The guarantee's own sentence (written by the guarantee, which knows its method)."""
    sentence = result.get("guarantee")
    return str(sentence) if sentence else None


@register_verdict("conformal")
def conformal_verdict(result: Mapping[str, Any]) -> str | None:
    """A stored conformal predictor's promise (``NAME calibrate``)."""
    sentence = result.get("promise")
    return str(sentence) if sentence else None


@register_verdict("validity")
def validity_verdict(result: Mapping[str, Any]) -> str | None:
    """Whether a policy's promise still applies (``guarantee apply --report``): the check's
    own sentence, and the labels' when records carried them."""
    validity = result.get("validity")
    if not isinstance(validity, Mapping) or not validity.get("sentence"):
        return None
    risk = validity.get("risk")
    extra = f"; {risk['sentence']}" if isinstance(risk, Mapping) and risk.get("sentence") \
        else ""
    return f"{validity['sentence']}{extra}"


# ---------------------------------------------------------------- comparisons

TEST_NAMES = {"mcnemar_exact": "exact McNemar", "delong": "DeLong",
              "paired_bootstrap": "paired bootstrap"}
"""How a comparison's pairwise tests are named in its verdicts and report."""

NOT_TESTED = {"too_few_resamples": "too few distinct resamples",
              "too_few_defined": "too few resamples where the difference is defined",
              "no_variance": "the difference does not vary across resamples",
              "undefined": "the difference is undefined"}
"""Why a pair has no p-value (``confeval.metrics.compare.UNTESTED``), in a few words."""

SHOWN_PEERS = 3
"""Models named in a many-model verdict among those not separated from the first (the rest
counted)."""


def p_text(p: float, alpha: float = SIGNIFICANCE) -> str:
    """A p-value as a verdict states it: "p < 0.001", "p = 1", else two significant digits —
    more where two would round it to the other side of ``alpha`` (0.0496 is "p = 0.0496", not
    "p = 0.05").

    >>> p_text(0.0004), p_text(1.0), p_text(0.51), p_text(0.0496), p_text(0.00406)
    ('p < 0.001', 'p = 1', 'p = 0.51', 'p = 0.0496', 'p = 0.0041')
    """
    if p < 0.001:
        return "p < 0.001"
    if p >= 1:
        return "p = 1"
    for digits in range(2, 7):
        text = f"{p:.{digits}g}"
        if (float(text) < alpha) == (p < alpha):
            break
    return f"p = {text}"


def _num3(value: float) -> str:
    """Three decimals, as the comparison tables show them; two significant digits for a
    value that three decimals would show as 0.000."""
    return f"{value:.2g}" if 0 < abs(value) < 0.0005 else f"{value:.3f}"


def comparison_results(document: Mapping[str, Any]) -> dict[str, dict]:
    """The results a comparison's verdicts are about: one per metric, ``{metric: table}``,
    each table with the comparison's ``significance`` (its ``options``'; default
    :data:`SIGNIFICANCE`); for ``--suite auto`` every suite's, named ``"suite: metric"``."""
    subs = document.get("suites")
    if isinstance(subs, Mapping):
        return {f"{suite}: {metric}": table for suite, sub in subs.items()
                if isinstance(sub, Mapping)
                for metric, table in comparison_results(sub).items()}
    alpha = _value((document.get("options") or {}).get("significance"))
    metrics = document.get("metrics")
    if not isinstance(metrics, Mapping):
        return {}
    return {str(metric): {**table, "significance": alpha or SIGNIFICANCE}
            for metric, table in metrics.items() if isinstance(table, Mapping)}


def _ranked(models: Mapping[str, Mapping]) -> list[str]:
    """Model names best first: by rank (ties in the order given, as the comparison lists
    them); a model without a rank last."""
    def rank(name: str) -> float:
        value = models[name].get("rank") if isinstance(models[name], Mapping) else None
        return float(value) if _defined(value) else math.inf
    return sorted(models, key=rank)


def _oriented(pair: Mapping[str, Any], first: str) -> tuple[float, float | None, float | None]:
    """(difference, low, high) of a pair as ``first`` minus the other model."""
    diff, low, high = (_value(pair.get(k)) for k in ("diff", "low", "high"))
    if pair.get("a") == first:
        return diff, low, high
    return -diff, (None if high is None else -high), (None if low is None else -low)


@dataclass(frozen=True)
class _Gap:
    """One model against another in a comparison: the direction ("higher", "lower" or
    "equal"), "by 0.041 [0.024, 0.056]" (empty when equal), the p-value clause "p < 0.001
    (exact McNemar)" (or why there is none) and whether the pair is separated (its
    Holm-adjusted p-value below the level; a pair without one separates nothing)."""

    word: str
    size: str
    test: str
    separated: bool


def _gap(pair: Mapping[str, Any] | None, first: str, n_pairs: int, alpha: float
         ) -> _Gap | None:
    """``first`` against the pair's other model; None without a difference."""
    if not isinstance(pair, Mapping) or _value(pair.get("diff")) is None:
        return None
    diff, low, high = _oriented(pair, first)
    word, size = "equal", ""
    if diff != 0:
        word = "higher" if diff > 0 else "lower"
        ends = (low, high) if diff > 0 else (None if high is None else -high,
                                             None if low is None else -low)
        span = "" if None in ends else f" [{_num3(ends[0])}, {_num3(ends[1])}]"
        size = f"by {_num3(abs(diff))}{span}"
    test = TEST_NAMES.get(str(pair.get("test")), str(pair.get("test")))
    p = _value(pair.get("p_holm"))
    if p is None:
        why = NOT_TESTED.get(str(pair.get("untested")), "not tested")
        return _Gap(word, size, f"no p-value ({test}: {why})", False)
    holm = f", Holm over {n_pairs:,} pairs" if n_pairs > 1 else ""
    return _Gap(word, size, f"{p_text(p, alpha)} ({test}{holm})", p < alpha)


def _value_text(row: Mapping[str, Any]) -> str:
    value = _value(row.get("value"))
    return "undefined" if value is None else _num3(value)


def _rank_text(row: Mapping[str, Any]) -> str:
    low, high = row.get("rank_low"), row.get("rank_high")
    return f", rank interval {low:g}–{high:g}" if _defined(low) and _defined(high) else ""


def _relation(gap: _Gap, other: str) -> str:
    """"lower than B 0.059 by 0.037 [0.025, 0.049], p < 0.001 (paired bootstrap)"."""
    if gap.word == "equal":
        return f"equal to {other}, {gap.test}"
    return f"{gap.word} than {other} {gap.size}, {gap.test}"


@register_verdict("compare")
def compare_verdict(table: Mapping[str, Any]) -> str | None:
    """One metric of a comparison (a table of :func:`comparison_results`). Two models: which
    is better, by how much with the difference's 95% interval, and the pair's p-value and test
    (a coverage, ranked by its distance to a target: which is closer, never "better", since
    the tests compare the coverages themselves)
    — "better" only when the Holm-adjusted p-value is below the significance level (the rule
    of the group letters), else "no clear difference" with the same numbers; a pair without a
    p-value says why, never p = 0. More models: the first-ranked model with its value and rank
    interval, the models no test separates from it, its difference from the next with that
    pair's p-value, and how many pairs are separated."""
    models, pairs = table.get("models"), table.get("pairs")
    if not isinstance(models, Mapping) or len(models) < 2 or not isinstance(pairs, Sequence):
        return None
    alpha = _value(table.get("significance")) or SIGNIFICANCE
    ranked = _ranked(models)
    shown = display_names(ranked)
    by_pair = {frozenset((p.get("a"), p.get("b"))): p for p in pairs if isinstance(p, Mapping)}
    gaps = {n: _gap(by_pair.get(frozenset((ranked[0], n))), ranked[0], len(pairs), alpha)
            for n in ranked[1:]}
    first, second = ranked[:2]
    if gaps[second] is None:
        return None
    named = {n: f"{shown[n]} {_value_text(models[n])}" for n in ranked}
    target = _value(table.get("target"))
    if len(models) == 2:
        said = _relation(gaps[second], named[second])
        if target is not None:
            # a coverage: its tests compare the values, not their distances to the target,
            # so a separated pair shows the coverages differ, not which keeps the promise
            return f"{shown[first]} is closer to {target:g}: {_value_text(models[first])}, " \
                   f"{said}"
        return f"{shown[first]} is better: {_value_text(models[first])}, {said}" \
            if gaps[second].separated and gaps[second].word != "equal" \
            else f"no clear difference: {named[first]}, {said}"
    peers = [n for n in ranked[1:] if gaps[n] is None or not gaps[n].separated]
    place = "ranks first" if target is None else f"is closest to {target:g}"
    head = f"{shown[first]} {place} ({_value_text(models[first])}" \
           f"{_rank_text(models[first])})"
    if peers:
        listed = ", ".join(named[n] for n in peers[:SHOWN_PEERS])
        more = f" and {len(peers) - SHOWN_PEERS:,} more" if len(peers) > SHOWN_PEERS else ""
        head += f", not separated from {len(peers):,} other{'s' if len(peers) > 1 else ''} " \
                f"({listed}{more})"
    else:
        head += ", separated from every other model"
    count = 0
    for pair in by_pair.values():
        gap = _gap(pair, str(pair.get("a")), len(pairs), alpha)
        count += bool(gap and gap.separated)
    return (f"{head}; {_relation(gaps[second], 'the next, ' + named[second])}; "
            f"{count:,} of {len(pairs):,} pairs separated")

# ---------------------------------------------------------------- judges: reruns, bias

def _share_with_ci(block: Mapping[str, Any], key: str = "share") -> tuple[float, tuple | None]:
    low, high = block.get("low"), block.get("high")
    ci = (float(low), float(high)) if _defined(low) and _defined(high) else None
    return float(block[key]), ci


@register_verdict("judge_reruns")
def judge_reruns_verdict(result: Mapping[str, Any]) -> str | None:
    """Whether the judge's scores are stable across reruns: "stable" when no item changed its
    score (the exact 95% interval then bounds the share that would), else the share of items
    that did with its interval and the mean flip rate; Krippendorff's alpha with its interval;
    then, with human scores, whether rerun agreement ranks right answers above wrong ones
    (:func:`discrimination_clause`) beside the score-token confidence."""
    flipping = result.get("items_flipping")
    if not isinstance(flipping, Mapping) or not _defined(flipping.get("share")):
        return None
    share, ci = _share_with_ci(flipping)
    k = result.get("reruns")
    reruns = f"{k} reruns" if isinstance(k, int) else \
        f"{k[0]}-{k[1]} reruns" if isinstance(k, list) and len(k) == 2 else "its reruns"
    if flipping.get("count") == 0:
        bound = f" (at most {_num(ci[1])} of items would, 95%)" if ci else ""
        clauses = [f"stable: no item changed its score across {reruns}{bound}"]
    else:
        flip = result.get("flip_rate") or {}
        rate = _value(flip.get("estimate"))
        tail = "" if rate is None else (
            f"; a rerun differs from the majority score {_num(rate)}"
            f"{_span(_share_with_ci(flip, 'estimate')[1])} of the time")
        clauses = [f"{flipping['count']:,} of {flipping['n']:,} items changed their score "
                   f"across {reruns} ({_num(share)}{_span(ci)}){tail}"]
    alpha = result.get("alpha") or {}
    value = _value(alpha.get("estimate"))
    if value is not None:
        clauses.append(f"Krippendorff's alpha ({alpha.get('level')}) "
                       f"{_num(value)}{_span(_share_with_ci(alpha, 'estimate')[1])}")
    measures = (result.get("as_confidence") or {}).get("measures") or {}
    names = {"rerun_agreement": "as a confidence, rerun agreement",
             "score_token": "the score-token probability"}
    for key, name in names.items():
        if key in measures:
            clause = discrimination_clause(measures[key])
            if clause:
                clauses.append(f"{name} {clause}")
    return "; ".join(clauses)


def _test_clause(block: Mapping[str, Any], above: str, below: str, around: str) -> str | None:
    """Where an exact binomial share's 95% interval lies against 1/2, with its p-value; what
    has no information says so."""
    if not isinstance(block, Mapping):
        return None
    if block.get("share") is None:
        return block.get("note")
    share, ci = _share_with_ci(block)
    p = block.get("p_value")
    numbers = f"{_num(share)}{_span(ci)}, p {p_cell(p)}"
    if ci is None:
        return f"{numbers}; not judged (no interval)"
    reading = {"above": above, "below": below, "within": around}[_against(ci, 0.5)]
    return f"{reading} ({numbers})"


def p_cell(p: Any) -> str:
    """A p-value as a table or a section's sentence prints it: three decimals, never "0" (a
    tiny one is "< 0.001"), "–" for none (None, NaN: a test without information).

    >>> p_cell(0.0004), p_cell(0.0123), p_cell(float("nan")), p_cell(None)
    ('< 0.001', '0.012', '–', '–')
    """
    if not _defined(p):
        return "–"
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


@register_verdict("judge_position")
def judge_position_verdict(result: Mapping[str, Any]) -> str | None:
    """The first-slot preference against 1/2 (its exact 95% interval; p of the exact binomial
    test), the share of items whose verdict changed with the order, and, with confidences,
    whether the judge is surer of the same pick in the first slot (the mean difference's 95%
    interval against 0)."""
    clause = _test_clause(result.get("first_slot"), "prefers the answer shown first",
                          "prefers the answer shown second", "no clear preference for a slot")
    if clause is None:
        return None
    clauses = [clause]
    flips = result.get("flips")
    if isinstance(flips, Mapping) and _defined(flips.get("share")):
        share, ci = _share_with_ci(flips)
        clauses.append(f"{flips['count']:,} of {flips['n']:,} verdicts changed with the order "
                       f"({_num(share)}{_span(ci)})")
    slot = result.get("confidence_by_slot")
    if isinstance(slot, Mapping):
        diff = slot.get("mean_difference") or {}
        value = _value(diff.get("estimate"))
        if value is not None:
            ci = _share_with_ci(diff, "estimate")[1]
            p = (slot.get("wilcoxon") or {}).get("p_value")
            numbers = f"first minus second {_num(value)}{_span(ci)}, signed-rank p {p_cell(p)}"
            if ci is None:
                clauses.append(f"confidence by slot: {numbers}")
            else:
                where = _against(ci, 0.0)
                word = {"above": "surer of the same pick when it is shown first",
                        "below": "surer of the same pick when it is shown second",
                        "within": "no clear difference of confidence between the slots"}[where]
                clauses.append(f"{word} ({numbers})")
        elif slot.get("note"):
            clauses.append(str(slot["note"]))
    longer = (result.get("longer") or {}).get("judge")
    clause = _test_clause(longer, "picks the longer answer more often than not",
                          "picks the shorter answer more often than not",
                          "no clear preference for length") if longer else None
    if clause:
        clauses.append(clause)
    return "; ".join(clauses)


def _slope_clause(block: Any, what: str) -> str | None:
    if not isinstance(block, Mapping):
        return None
    value = _value(block.get("estimate"))
    if value is None:
        return block.get("note")
    ci = _share_with_ci(block, "estimate")[1]
    numbers = f"{_num(value)}{_span(ci)}"
    if ci is None:
        return f"{what} {numbers}; not judged (no interval)"
    where = _against(ci, 0.0)
    reading = {"above": "rises", "below": "falls", "within": "does not clearly change"}[where]
    return f"{what} {reading} with length ({numbers})"


def _excess_clause(block: Any) -> str | None:
    """The judge's slope minus the humans' own: its 95% interval against 0."""
    if not isinstance(block, Mapping) or _value(block.get("estimate")) is None:
        return None
    value = float(block["estimate"])
    ci = _share_with_ci(block, "estimate")[1]
    numbers = f"{_num(value)}{_span(ci)}"
    if ci is None:
        return f"judge minus humans' slope {numbers}; not judged (no interval)"
    where = _against(ci, 0.0)
    return {"above": f"its slope exceeds the humans' own ({numbers})",
            "below": f"its slope falls short of the humans' own ({numbers})",
            "within": f"no clear excess over the humans' own slope ({numbers})"}[where]


@register_verdict("judge_length")
def judge_length_verdict(result: Mapping[str, Any]) -> str | None:
    """The judge's score against length at a fixed human score, its excess over the humans'
    own slope, and its confidence at a fixed human score: each slope's 95% bootstrap
    interval against 0."""
    per = result.get("per")
    unit = result.get("length_unit") or "units"
    if not _defined(per):
        return None
    where = f"per {per:g} {unit}"
    clauses = [_slope_clause(result.get("judge_slope_at_fixed_human"),
                             f"at a fixed human score its score ({where})"),
               _excess_clause(result.get("excess_slope")),
               _slope_clause(result.get("confidence_slope_at_fixed_human"),
                             "at a fixed human score its confidence")]
    return "; ".join(c for c in clauses if c) or None


# ---------------------------------------------------------------- judge trust card

CARD_LABELS = {"ranking": "ranking", "scoring": "per-item scores",
               "accept": "accept/abstain", "mean": "the mean", "reruns": "rerun stability",
               "position": "position bias", "length": "length bias"}
"""The card's aspects, in its order, as it names them."""

CARD_METRICS = {"ranking": "Spearman", "scoring": "width, coverage",
                "accept": "accepted", "mean": "mean", "reruns": "alpha",
                "position": "first slot", "length": "slope"}
"""The number each aspect shows (:attr:`CardLine.number`)."""

RANKING_BANDS = (0.4, 0.7)
"""Spearman's rho below the first is a weak ranking agreement, from it to the second
moderate, from the second on strong (the usual reading of a correlation's size); a 95%
interval across a band's edge is said as a span ("weak to moderate")."""

_STRENGTH = ("weak", "moderate", "strong")


@dataclass(frozen=True)
class CardLine:
    """One aspect of a judge's card: the number behind it (with its interval), a few words
    that read it, and the verdict sentence."""

    number: str
    reading: str
    verdict: str


def _band(value: float) -> int:
    return sum(value >= edge for edge in RANKING_BANDS)


def _ranking_line(a: Mapping[str, Any]) -> CardLine | None:
    rho = _value((a.get("spearman") or {}).get("estimate"))
    tau = _value((a.get("kendall") or {}).get("estimate"))
    if rho is None or tau is None:
        return CardLine("–", "undefined", "Spearman and Kendall undefined: the judge's or "
                                          "the humans' scores do not vary")
    rho_ci = _share_with_ci(a["spearman"], "estimate")[1]
    tau_ci = _share_with_ci(a["kendall"], "estimate")[1]
    numbers = (f"Spearman {_num(rho)}{_span(rho_ci)}, Kendall tau-b {_num(tau)}"
               f"{_span(tau_ci)}; {a.get('n', 0):,} items")
    number = f"{_num(rho)}{_span(rho_ci)}"
    if rho_ci is None:
        return CardLine(number, "not judged", f"{numbers}; not judged (no interval)")
    where = _against(rho_ci, 0.0)
    if where == "below":
        return CardLine(number, "reversed", f"orders items against the humans ({numbers})")
    if where == "within":
        return CardLine(number, "none clear", f"no clear ranking agreement with the humans "
                                              f"({numbers})")
    low, high = _band(rho_ci[0]), _band(rho_ci[1])
    strength = _STRENGTH[low] if low == high else f"{_STRENGTH[low]} to {_STRENGTH[high]}"
    how = f"{_STRENGTH[low]}ly" if low == high else \
        f"{_STRENGTH[low]}ly to {_STRENGTH[high]}ly"
    return CardLine(number, strength, f"orders items as the humans do, {how} ({numbers})")


def _scoring_line(a: Mapping[str, Any]) -> CardLine | None:
    coverage, width = _value(a.get("coverage")), _value(a.get("width"))
    target, n_test = _value(a.get("target")), a.get("n_test")
    if coverage is None or width is None or target is None or not isinstance(n_test, int):
        return None
    span, share = _value(a.get("scale_range")), _value(a.get("uninformative_share"))
    level = f"{target:.0%}"
    seeds = a.get("seeds") or []
    where = _coverage_status(coverage, target, max(n_test, 1))
    splits = f"{len(seeds)} split{'s' if len(seeds) != 1 else ''}"
    numbers = (f"{a.get('method')}, {splits}: coverage {_num(coverage)} of {n_test:,} test "
               "items each")
    width_text = f"mean width {_num(width)}" + (f" of a {span:g}-point range" if span else "")
    number = f"{_num(width)}, {_num(coverage)}"
    if where == "below":
        return CardLine(number, "undercovers", f"its {level} intervals cover less than "
                        f"promised: per-item intervals cannot be relied on ({numbers}, "
                        f"{width_text})")
    if share is not None and share >= UNINFORMATIVE_SHARE:
        return CardLine(number, "uninformative", f"its {level} intervals cover only by "
                        f"spanning the scale: {share:.0%} are wider than three quarters of it, "
                        f"so a single score says little ({numbers}, {width_text})")
    of = "" if not span else f" ({width / span:.0%} of the scale)"
    return CardLine(number, "covers", f"its {level} intervals cover {_AT_TARGET[where]} the "
                    f"target, {_num(width)} points wide on average{of}: trust a single score "
                    f"only as such a range ({numbers})")


def _accept_line(a: Mapping[str, Any]) -> CardLine | None:
    target, tolerance = _value(a.get("target")), _value(a.get("tolerance"))
    n = a.get("n_calibration")
    if target is None or tolerance is None or not isinstance(n, int):
        return None
    delta = _value(a.get("delta"))
    odds = "" if delta is None else f", with probability {1 - delta:g}"
    if a.get("threshold") is None:
        best = _value(a.get("best_achievable_bound"))
        said = "" if best is None else f"; the best bound this data certifies is {_num3(best)}"
        return CardLine("–", "none certified",
                        f"no confidence threshold certifies at most {target:g} of accepted "
                        f"scores more than {tolerance:g} from the human's{odds} ({n:,} items"
                        f"{said}): review every score")
    rate = float(a.get("answer_rate") or 0.0)
    answered = a.get("answered", 0)
    rest = "every item accepted" if answered == n else "review the rest"
    return CardLine(f"{rate:.0%}", f"error <= {target:g}",
                    f"accept its score when its confidence is at least "
                    f"{float(a['threshold']):.6g}: {answered:,} of {n:,} items ({rate:.0%}) "
                    f"accepted, at most {target:g} of them more than {tolerance:g} from the "
                    f"human's{odds} (bound {_num3(float(a['bound']))}); {rest}")


def _mean_line(a: Mapping[str, Any]) -> CardLine | None:
    estimate, own = _value(a.get("estimate")), _value(a.get("judge_mean"))
    if estimate is None or own is None:
        return None
    low, high = _value(a.get("low")), _value(a.get("high"))
    level = _value(a.get("level")) or 0.9
    n = a.get("n_labelled", 0)
    if low is None or high is None:
        return CardLine(_num(estimate), "not judged", f"the mean {_num3(estimate)} has no "
                        f"interval ({a.get('note') or 'no variance'}); its own mean "
                        f"{_num3(own)}")
    interval = f"{_num3(estimate)} [{_num3(low)}, {_num3(high)}]"
    if a.get("method") == "classical":
        what = f"the humans' mean of {n:,} items, {interval} ({level:.0%})"
    else:
        what = (f"the corrected mean {interval} (PPI++, {level:.0%}, {n:,} human labels, "
                f"lambda {_num(float(a.get('lambda') or 0))})")
    where = "above" if own > high else "below" if own < low else "within"
    reading = {"above": "own mean too high", "below": "own mean too low",
               "within": "own mean agrees"}[where]
    head = {"above": f"its own mean {_num3(own)} overstates the humans': {what}",
            "below": f"its own mean {_num3(own)} understates the humans': {what}",
            "within": f"its own mean {_num3(own)} agrees with {what}"}[where]
    classical = a.get("classical") or {}
    if a.get("method") == "ppi++" and _value(classical.get("width")) and \
            _value(a.get("width")) is not None:
        gain = 1 - float(a["width"]) / float(classical["width"])
        head += (f"; the judge narrows the humans-only interval by {gain:.0%}" if gain > 0
                 else "; the judge does not narrow the humans-only interval")
    drawn = a.get("labels_drawn")
    if drawn:
        truth = _value(drawn.get("human_mean_all_labelled"))
        if truth is not None:
            inside = "inside" if low <= truth <= high else "outside"
            head += (f"; {drawn.get('kept', 0):,} labels drawn (seed {drawn.get('seed')}): the "
                     f"mean of all the human scores, {_num3(truth)}, is {inside} it")
    elif a.get("method") == "classical":
        head += "; every item has a human score, so nothing is corrected"
    return CardLine(f"{_num(estimate)} [{_num(low)}, {_num(high)}]", reading, head)


def _reruns_line(a: Mapping[str, Any]) -> CardLine | None:
    verdict = judge_reruns_verdict(a)
    flipping = a.get("items_flipping") or {}
    if verdict is None or not _defined(flipping.get("share")):
        return None
    alpha = a.get("alpha") or {}
    value = _value(alpha.get("estimate"))
    number = "–" if value is None else \
        f"{_num(value)}{_span(_share_with_ci(alpha, 'estimate')[1])}"
    reading = "stable" if flipping.get("count") == 0 else \
        f"{float(flipping['share']):.0%} of items change"
    return CardLine(number, reading, verdict)


def _position_line(a: Mapping[str, Any]) -> CardLine | None:
    verdict = judge_position_verdict(a)
    first = a.get("first_slot") or {}
    if verdict is None:
        return None
    if first.get("share") is None:
        return CardLine("–", "no information", verdict)
    share, ci = _share_with_ci(first)
    reading = "not judged" if ci is None else {
        "above": "prefers first", "below": "prefers second",
        "within": "no clear preference"}[_against(ci, 0.5)]
    return CardLine(f"{_num(share)}{_span(ci)}", reading, verdict)


def _length_line(a: Mapping[str, Any]) -> CardLine | None:
    verdict = judge_length_verdict(a)
    slope = a.get("judge_slope_at_fixed_human") or {}
    value = _value(slope.get("estimate"))
    if verdict is None or value is None:
        return None
    ci = _share_with_ci(slope, "estimate")[1]
    reading = "not judged" if ci is None else {
        "above": "favours longer", "below": "favours shorter",
        "within": "no clear effect"}[_against(ci, 0.0)]
    return CardLine(f"{_num(value)}{_span(ci)}", reading, verdict)


_CARD_RULES: dict[str, Callable[[Mapping[str, Any]], CardLine | None]] = {
    "ranking": _ranking_line, "scoring": _scoring_line, "accept": _accept_line,
    "mean": _mean_line, "reruns": _reruns_line, "position": _position_line,
    "length": _length_line}


def card_lines(card: Mapping[str, Any]) -> dict[str, CardLine]:
    """Every aspect of a judge's card (``confeval judge card``) as a :class:`CardLine`, in the
    card's order: an aspect not measured says so and why; one whose numbers are missing
    is left out."""
    aspects = card.get("aspects") or {}
    out = {}
    for aspect in CARD_LABELS:
        found = aspects.get(aspect)
        if not isinstance(found, Mapping):
            continue
        if not found.get("measured"):
            out[aspect] = CardLine("–", "not measured",
                                   f"not measured: {found.get('why') or 'no data'}")
            continue
        line = _CARD_RULES[aspect](found)
        if line is not None:
            out[aspect] = line
    return out


def card_verdicts(card: Mapping[str, Any]) -> dict[str, str]:
    """{aspect: verdict sentence} of a judge's card (:func:`card_lines`)."""
    return {aspect: line.verdict for aspect, line in card_lines(card).items()}


@register_verdict("judge_card")
def judge_card_verdict(card: Mapping[str, Any]) -> str | None:
    """The card in one line: each measured aspect's reading with its number, then the
    aspects not measured."""
    lines = card_lines(card)
    shown = [f"{CARD_LABELS[a]}: {line.reading}" + (
        "" if line.number == "–" else f" ({CARD_METRICS[a]} {line.number})")
        for a, line in lines.items() if line.reading != "not measured"]
    missing = [CARD_LABELS[a] for a, line in lines.items() if line.reading == "not measured"]
    if missing:
        shown.append(f"not measured: {_names(missing)}")
    return "; ".join(shown) or None


# ---------------------------------------------------------------- a section's verdicts

def section_verdicts(section: Mapping[str, Any]) -> dict[str, str]:
    """{result name: verdict} of every result of a section whose kind has a verdict rule and
    whose result has the numbers for it, in the section's order; empty otherwise. A section
    whose results are one document (a comparison: :data:`RESULTS_OF`) has its verdicts about
    what that document holds (a comparison's metrics)."""
    kind = str(section.get("kind"))
    rule = VERDICTS.get(kind)
    results = section.get("results") or {}
    if rule is None or not isinstance(results, Mapping):
        return {}
    if kind in RESULTS_OF:
        results = RESULTS_OF[kind](results)
    out = {}
    for name, result in results.items():
        sentence = rule(result) if isinstance(result, Mapping) else None
        if sentence:
            out[str(name)] = sentence
    return out
