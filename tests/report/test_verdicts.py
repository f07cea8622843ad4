"""The verdict rules (confeval.report.verdicts) on constructed results: each rule's cases, its
borderline (an interval that touches the reference includes it; a gap of exactly the minimum
counts), and no adjective without an interval. The numbers are written out, so every test
is deterministic."""

from __future__ import annotations

import math

import pytest

from confeval.report.verdicts import (
    MIN_CONFIDENCE_GAP,
    OUTSIDE,
    OUTSIDE_NOTE,
    VERDICTS,
    Z95,
    bias_half_width,
    calibration_clause,
    card_lines,
    discrimination_clause,
    section_verdicts,
    wilson,
)


def _confidence(accuracy=0.67, acc_ci=(0.65, 0.69), stated=0.86, ece=0.20,
                ece_ci=(0.18, 0.22), auroc=0.74, auroc_ci=(0.71, 0.76)) -> dict:
    ci = {}
    for key, span in (("accuracy", acc_ci), ("ece", ece_ci), ("auroc", auroc_ci)):
        if span is not None:
            ci[key] = {"low": span[0], "high": span[1], "std_error": 0.01}
    return {"n": 2000, "accuracy": accuracy, "mean_confidence": stated, "ece": ece,
            "auroc": auroc, "ci": ci}


# ---------------------------------------------------------------- confidence

def test_the_overconfident_judge_of_the_issue_reads_as_written():
    assert VERDICTS["confidence"](_confidence()) == (
        "overconfident: states 0.86, right 0.67 [0.65, 0.69] (ECE 0.20 [0.18, 0.22]); "
        "ranks its right answers above its wrong ones (AUROC 0.74 [0.71, 0.76])")


def test_a_value_outside_its_own_interval_is_marked_for_the_footnote():
    # the demo's verbalised judge: ECE 0.011 under its resamples' [0.016, 0.040]
    text = VERDICTS["confidence"](_confidence(stated=0.66, accuracy=0.66, acc_ci=(0.64, 0.68),
                                              ece=0.011, ece_ci=(0.016, 0.040)))
    assert "(ECE 0.01 [0.02, 0.04]†)" in text and text.count(OUTSIDE) == 1
    assert OUTSIDE_NOTE.startswith(OUTSIDE)
    # inside, or on a bound: no mark
    assert OUTSIDE not in VERDICTS["confidence"](_confidence(ece=0.18, ece_ci=(0.18, 0.22)))


def test_underconfident_when_the_accuracy_interval_lies_above_the_stated_confidence():
    text = calibration_clause(_confidence(accuracy=0.67, acc_ci=(0.65, 0.69), stated=0.58))
    assert text.startswith("underconfident: states 0.58, right 0.67 [0.65, 0.69]")


@pytest.mark.parametrize("acc_ci, stated", [((0.65, 0.69), 0.69), ((0.58, 0.62), 0.58)])
def test_an_accuracy_interval_touching_the_stated_confidence_is_no_clear_gap(acc_ci, stated):
    text = calibration_clause(_confidence(accuracy=0.67 if stated > 0.6 else 0.60,
                                          acc_ci=acc_ci, stated=stated))
    assert text.startswith("no clear gap between mean confidence and accuracy: ")
    assert "overconfident" not in text and "underconfident" not in text


def test_a_gap_of_exactly_the_minimum_is_called_by_its_direction():
    # 0.69 - 0.67 is 0.019999999999999907 in floating point: still the minimum gap
    assert 0.69 - 0.67 < MIN_CONFIDENCE_GAP
    text = calibration_clause(_confidence(accuracy=0.67, acc_ci=(0.66, 0.68), stated=0.69))
    assert text.startswith("overconfident: ")


def test_a_clear_gap_under_the_minimum_is_slight():
    text = calibration_clause(_confidence(accuracy=0.670, acc_ci=(0.665, 0.675), stated=0.68))
    assert text.startswith("slightly overconfident: states 0.68, right 0.67")
    text = calibration_clause(_confidence(accuracy=0.670, acc_ci=(0.665, 0.675), stated=0.66))
    assert text.startswith("slightly underconfident: ")


def test_without_intervals_the_numbers_are_given_and_nothing_is_judged():
    text = VERDICTS["confidence"](_confidence(acc_ci=None, ece_ci=None, auroc_ci=None))
    assert text == ("states 0.86, right 0.67 (ECE 0.20); calibration not judged (no "
                    "interval); AUROC 0.74; ranking not judged (no interval)")


@pytest.mark.parametrize("auroc_ci, reading", [
    ((0.50, 0.60), "cannot tell right from wrong"),         # touches 0.5: includes it
    ((0.48, 0.53), "cannot tell right from wrong"),
    ((0.501, 0.60), "ranks its right answers above its wrong ones"),
    ((0.30, 0.499), "ranks its wrong answers above its right ones"),
    ((0.40, 0.50), "cannot tell right from wrong"),
])
def test_the_auroc_interval_against_chance(auroc_ci, reading):
    text = discrimination_clause(_confidence(auroc=sum(auroc_ci) / 2, auroc_ci=auroc_ci))
    assert text.startswith(reading + " (AUROC ")


def test_an_undefined_auroc_is_said_and_a_bound_near_zero_keeps_its_third_decimal():
    assert discrimination_clause({"auroc": None}) == \
        "AUROC undefined (every answer right, or every answer wrong)"
    # the accuracy says which: one class, or a graded correctness (not 0/1)
    assert discrimination_clause({"auroc": None, "accuracy": 1.0}) == \
        "AUROC undefined (every answer right)"
    assert discrimination_clause({"auroc": float("nan"), "accuracy": 0.0}) == \
        "AUROC undefined (every answer wrong)"
    assert discrimination_clause({"auroc": None, "accuracy": 0.26}) == \
        "AUROC undefined (the correctness is graded, not 0/1)"
    # 0.001 printed as 0.00 would read as an interval touching 0
    text = VERDICTS["steps"]({"css": 0.0078, "ci": {"css": {"low": 0.001, "high": 0.022}}})
    assert text == "its confidence drops on wrong steps (CSS 0.01 [0.001, 0.02])"


# ---------------------------------------------------------------- agreement

def _agreement(pearson_ci=(0.82, 0.85), bias=-0.014, mae=0.5, n=2000, labels=(1, 2, 3, 4, 5)):
    return {"n": n, "pearson": 0.83, "bias": bias, "mae": mae,
            "confusion": {"labels": list(labels), "matrix": []},
            "ci": {"pearson": {"low": pearson_ci[0], "high": pearson_ci[1]}}}


def test_the_bias_interval_is_bounded_by_the_scale_and_the_mae():
    # |d| <= 4 on a 1-5 scale, so Var(d) <= 4 * MAE
    assert bias_half_width(_agreement()) == pytest.approx(Z95 * math.sqrt(4 * 0.5 / 2000))
    assert bias_half_width(_agreement(labels=())) is None


@pytest.mark.parametrize("bias, reading", [
    (-0.014, "no clear bias (mean judge minus reference -0.01 ± 0.06)"),
    (0.10, "scores higher than the reference by 0.10 on average (± 0.06)"),
    (-0.10, "scores lower than the reference by 0.10 on average (± 0.06)"),
])
def test_the_bias_against_its_interval(bias, reading):
    assert VERDICTS["agreement"](_agreement(bias=bias)) == (
        "its scores rise with the reference scores (Pearson 0.83 [0.82, 0.85]); " + reading)


def test_a_bias_equal_to_its_half_width_is_not_clear():
    half = bias_half_width(_agreement())
    assert "no clear bias" in VERDICTS["agreement"](_agreement(bias=half))


@pytest.mark.parametrize("span, reading", [
    ((0.0, 0.2), "no clear relation to the reference scores"),
    ((0.01, 0.2), "its scores rise with the reference scores"),
    ((-0.3, -0.1), "its scores fall as the reference scores rise"),
])
def test_the_correlation_against_zero(span, reading):
    assert VERDICTS["agreement"](_agreement(pearson_ci=span)).startswith(reading)


# ---------------------------------------------------------------- conformal sets

def test_wilson_intervals():
    assert [round(x, 4) for x in wilson(0.5, 100)] == [0.4038, 0.5962]
    assert [round(x, 4) for x in wilson(1.0, 60)] == [0.9398, 1.0]


def test_each_score_is_placed_against_its_target_and_the_smallest_covering_set_named():
    result = {"n_test": 60, "alpha": 0.1, "scores": {
        "tight": {"coverage": 0.80, "set_size": 1.2},      # Wilson high 0.885 < 0.9
        "lac": {"coverage": 0.9667, "set_size": 4.77},     # [0.886, 0.991]: at the target
        "aps": {"coverage": {"mean": 1.0, "std": 0.0}, "set_size": {"mean": 6.0, "std": 0}}}}
    assert VERDICTS["sets"](result) == (
        "tight covers below the target 0.90 (0.80 of 60 test items), lac at it (0.97), aps "
        "above it (1.00); smallest sets: lac, 4.77 options on average")


def test_sets_without_a_target_or_test_items_get_no_verdict():
    assert VERDICTS["sets"]({"scores": {"lac": {"coverage": 0.9}}}) is None


# ---------------------------------------------------------------- conformal intervals

def _interval_method(coverage, width, share, adjusted=None):
    return {"coverage_raw": {"mean": coverage, "std": 0.0}, "width_raw": {"mean": width},
            "coverage_adj": {"mean": coverage},
            "width_adj": {"mean": width if adjusted is None else adjusted, "std": 0.0},
            "diagnostics": {"informativeness_adj": {"uninformative": {
                "share": {"mean": share, "std": 0.0}}}}}


def test_intervals_that_span_the_scale_cover_and_say_so():
    result = {"n": 20, "alpha": 0.1, "cal_fraction": 0.5, "point": {"pearson": -0.3145},
              "methods": {"naive": _interval_method(1.0, 4.0, 1.0),
                          "ordinal_aps": _interval_method(1.0, 3.87, 0.87)}}
    assert VERDICTS["intervals"](result) == (
        "every interval method covers 1.00 (target 0.90), but its intervals say little: "
        "87-100% of them, adjusted to whole scores, span more than three quarters of the "
        "scale, mean width 3.87-4.00; the judge's ratings have Pearson -0.31 with the "
        "reference")


def test_half_uninformative_counts_as_uninformative_and_less_does_not():
    half = {"n": 200, "alpha": 0.1, "methods": {"cqr": _interval_method(0.9, 2.5, 0.5)}}
    assert "cqr covers 0.90 (target 0.90), but its intervals say little: 50%" in \
        VERDICTS["intervals"](half)
    informative = {"n": 200, "alpha": 0.1, "methods": {
        "cqr": _interval_method(0.9, 2.5, 0.49), "lvd": _interval_method(0.8, 1.5, 0.1),
        "naive": _interval_method(0.99, 3.8, 0.5)}}
    # 100 test items (half of 200): lvd's 0.80 lies below 0.90, cqr's 0.90 at it, naive's
    # 0.99 above it; naive alone is uninformative
    assert VERDICTS["intervals"](informative) == (
        "lvd covers below the target 0.90 (0.80 of 100 test items), cqr at it (0.90), naive "
        "above it (0.99); narrowest that covers: cqr, mean width 2.50, 49% of them "
        "uninformative; naive says little: 50% of its intervals, adjusted to whole scores, "
        "span more than three quarters of the scale")


def test_the_width_beside_a_raw_coverage_is_the_raw_width_the_adjusted_one_in_brackets():
    """A newcomer read "covers at 0.90 (0.93); narrowest: r2ccp, mean width 2.85": 0.93 was
    the raw coverage and 2.85 the adjusted width (the raw one 2.18)."""
    result = {"n": 200, "alpha": 0.1, "methods": {
        "r2ccp": _interval_method(0.93, 2.18, 0.1, adjusted=2.85),
        "naive": _interval_method(0.92, 2.5, 0.2, adjusted=2.7)}}
    # narrowest by the raw width (2.18 against 2.50), as the coverage is the raw one
    assert "narrowest that covers: r2ccp, mean width 2.18 (2.85 adjusted to whole scores), " \
        "10% of them uninformative" in VERDICTS["intervals"](result)


def test_rating_set_methods_are_placed_against_the_target_with_their_size():
    result = {"n": 20, "alpha": 0.1, "methods": {
        "lac": {"coverage": {"mean": 0.88}, "set_size": {"mean": 4.55}},
        "aps": {"coverage": {"mean": 1.0}, "set_size": {"mean": 5.0}}}}
    # 10 test items: 0.88 and 1.00 both within their Wilson intervals' reach of 0.90
    assert VERDICTS["intervals"](result) == (
        "rating sets: lac and aps cover at the target 0.90 (0.88-1.00 of 10 test items); "
        "smallest: lac, 4.55 ratings on average")


# ---------------------------------------------------------------- steps, measures, diagnose

@pytest.mark.parametrize("span, reading", [
    ((0.0, 0.02), "its confidence does not clearly drop on wrong steps"),
    ((0.41, 0.45), "its confidence drops on wrong steps"),
    ((-0.1, -0.01), "its confidence rises on wrong steps"),
])
def test_step_sensitivity_against_zero(span, reading):
    result = {"css": sum(span) / 2, "crs": None, "ccs": 0.81, "ece": 0.07,
              "ci": {"css": {"low": span[0], "high": span[1]}}}
    assert VERDICTS["steps"](result) == (f"{reading} (CSS {sum(span) / 2:.2f} "
                                         f"[{span[0]:.2f}, {span[1]:.2f}]); no rewritten steps: "
                                         "robustness not measured; CCS 0.81 (ECE 0.07)")


def _measures(best_ci, p_value):
    def measure(low, high):
        return {"auroc": (low + high) / 2, "ci": {"auroc": {"low": low, "high": high}}}
    return {"measures": {"SL": measure(*best_ci), "P(true)": measure(0.45, 0.55),
                         "Deg(J)": measure(0.52, 0.60)},
            "ranking": [{"rank": 1, "measure": "SL",
                         "vs_next": {"measure": "Deg(J)", "p_value": p_value}}]}


def test_the_best_measure_clearly_above_chance_and_clearly_ahead():
    assert VERDICTS["measures"](_measures((0.71, 0.87), 0.049)) == (
        "best measure SL: ranks the gold option above the others (AUROC 0.79 [0.71, 0.87]), "
        "clearly ahead of Deg(J) (p 0.049); 2 of 3 measures have an AUROC interval above 0.50")


def test_a_best_measure_whose_interval_touches_chance_cannot_tell_and_p_at_the_level_is_not_clear():
    text = VERDICTS["measures"](_measures((0.50, 0.60), 0.05))
    assert text.startswith("best measure SL: cannot tell the gold option from the others "
                           "(AUROC 0.55 [0.50, 0.60]), not clearly ahead of Deg(J) (p 0.05)")
    assert text.endswith("; 1 of 3 measures have an AUROC interval above 0.50")


@pytest.mark.parametrize("span, reading", [
    ((0.06, 0.41), "not distinguishable from"), ((0.19, 0.41), "not distinguishable from"),
    ((0.20, 0.41), "above"), ((0.01, 0.18), "below")])
def test_strict_accuracy_against_random_guessing(span, reading):
    result = {"n": 17, "accuracy_strict": 0.176, "ci": {"low": span[0], "high": span[1]},
              "baselines": {"random": {"expected": 0.19},
                            "majority": {"type": "kde", "accuracy": 0.353}}}
    assert VERDICTS["diagnose"](result) == (
        f"strict accuracy 0.18 [{span[0]:.2f}, {span[1]:.2f}] on 17 items: {reading} random "
        "guessing (0.19); always answering kde would score 0.35")


def test_the_guarantee_sentence_is_its_verdict():
    sentence = "No threshold is certified: the best bound is 0.21 > 0.15."
    assert VERDICTS["guarantee"]({"guarantee": sentence}) == sentence


def test_the_validity_sentences_are_its_verdict():
    holds = "promise holds: no evidence of a shift (p = 0.4; ...)"
    kept = "promise kept so far: the error ... (target 0.1, ...)"
    assert VERDICTS["validity"]({"validity": {"sentence": holds, "risk": None}}) == holds
    assert VERDICTS["validity"]({"validity": {"sentence": holds, "risk": {"sentence": kept}}}
                                ) == f"{holds}; {kept}"
    assert VERDICTS["validity"]({"counts": {}}) is None


def test_a_section_lists_the_verdicts_it_can_compute_and_nothing_for_other_kinds():
    section = {"kind": "confidence", "results": {"a.csv": _confidence(), "b.csv": {"n": 3}}}
    assert list(section_verdicts(section)) == ["a.csv"]
    assert section_verdicts({"kind": "future", "results": {"a": {}}}) == {}
    assert section_verdicts({"kind": "compare", "results": {"models": []}}) == {}


# ---------------------------------------------------------------- comparisons

def _two(p, *, diff=-0.03, low=-0.05, high=-0.01, test="paired_bootstrap", untested=None,
         values=(0.02, 0.05)) -> dict:
    """Two models' ECE (lower is better): B first with 0.02, A 0.05; the pair B − A."""
    pair = {"a": "B", "b": "A", "diff": diff, "low": low, "high": high, "p": p,
            "p_holm": p, "test": test}
    if untested:
        pair["untested"] = untested
    return {"higher_is_better": False, "pairs": [pair],
            "models": {"A": {"value": values[1], "rank": 2, "rank_low": 1, "rank_high": 2},
                       "B": {"value": values[0], "rank": 1, "rank_low": 1, "rank_high": 2}}}


def test_two_models_the_better_one_by_how_much_with_its_interval_and_p():
    assert VERDICTS["compare"](_two(0.004)) == (
        "B is better: 0.020, lower than A 0.050 by 0.030 [0.010, 0.050], p = 0.004 "
        "(paired bootstrap)")


@pytest.mark.parametrize("p, shown", [(0.06, "p = 0.06"), (0.05, "p = 0.05"),
                                      (0.0502, "p = 0.05"), (0.51, "p = 0.51")])
def test_two_models_not_separated_at_or_above_the_level_give_the_same_numbers(p, shown):
    assert VERDICTS["compare"](_two(p)) == (
        f"no clear difference: B 0.020, lower than A 0.050 by 0.030 [0.010, 0.050], {shown} "
        "(paired bootstrap)")


def test_a_p_value_just_under_the_level_keeps_the_digits_that_say_so():
    assert VERDICTS["compare"](_two(0.0496)).endswith(", p = 0.0496 (paired bootstrap)")
    assert VERDICTS["compare"](_two(0.0496)).startswith("B is better: ")


def test_a_pair_without_a_p_value_says_why_and_never_p_zero():
    text = VERDICTS["compare"](_two(None, untested="too_few_resamples"))
    assert text == ("no clear difference: B 0.020, lower than A 0.050 by 0.030 [0.010, 0.050], "
                    "no p-value (paired bootstrap: too few distinct resamples)")
    assert "p = 0" not in text and "p <" not in text


def test_two_equal_models_are_no_clear_difference_with_p_one():
    table = _two(1.0, diff=0.0, low=0.0, high=0.0, test="mcnemar_exact", values=(0.673, 0.673))
    assert VERDICTS["compare"](table) == ("no clear difference: B 0.673, equal to A 0.673, "
                                          "p = 1 (exact McNemar)")


def test_a_coverage_is_closer_to_its_target_never_better():
    # Qwen-VL 0.889 against cogvlm 0.915 at 1 - alpha = 0.9: the exact McNemar test separates
    # the coverages, not their distances to 0.9, so no "better" however small p is
    table = _two(0.0012, diff=-0.026, low=-0.041, high=-0.011, test="mcnemar_exact",
                 values=(0.889, 0.915))
    table.update(higher_is_better=None, target=0.9)
    assert VERDICTS["compare"](table) == (
        "B is closer to 0.9: 0.889, lower than A 0.915 by 0.026 [0.011, 0.041], p = 0.0012 "
        "(exact McNemar)")
    three = {**_three(0.0003), "higher_is_better": None, "target": 0.75}
    assert VERDICTS["compare"](three).startswith(
        "A is closest to 0.75 (0.800, rank interval 1–1), separated from every other model")


def test_the_outside_mark_is_on_the_numbers_as_printed_and_not_on_names():
    from confeval.report.verdicts import _with_ci, marked_outside

    assert _with_ci("ECE", 0.011, (0.016, 0.040)) == "ECE 0.01 [0.02, 0.04]†"
    # 0.01225 under 0.01230: printed "0.01 [0.01, 0.04]", inside as the reader sees it
    assert _with_ci("ECE", 0.01225, (0.0123, 0.039)) == "ECE 0.01 [0.01, 0.04]"
    assert marked_outside("judge: ECE 0.01 [0.02, 0.04]† ...")
    assert not marked_outside("model†: ECE 0.02 [0.01, 0.04]")


def _three(p_ab: float) -> dict:
    """Three models' accuracy: A 0.80, B 0.70, C 0.69; B and C never separated."""
    def row(value, rank, low, high):
        return {"value": value, "rank": rank, "rank_low": low, "rank_high": high}

    def pair(a, b, diff, p):
        return {"a": a, "b": b, "diff": diff, "low": diff - 0.05, "high": diff + 0.05,
                "p": p / 3, "p_holm": p, "test": "mcnemar_exact"}

    return {"higher_is_better": True,
            "models": {"C": row(0.69, 3, 2, 3), "A": row(0.80, 1, 1, 2 if p_ab >= 0.05 else 1),
                       "B": row(0.70, 2, 1, 3)},
            "pairs": [pair("A", "B", 0.10, p_ab), pair("A", "C", 0.11, 0.0002),
                      pair("B", "C", 0.01, 0.8)]}


def test_many_models_the_first_its_rank_interval_the_next_and_the_pairs_separated():
    assert VERDICTS["compare"](_three(0.0003)) == (
        "A ranks first (0.800, rank interval 1–1), separated from every other model; higher "
        "than the next, B 0.700 by 0.100 [0.050, 0.150], p < 0.001 (exact McNemar, Holm over "
        "3 pairs); 2 of 3 pairs separated")
    assert VERDICTS["compare"](_three(0.2)) == (
        "A ranks first (0.800, rank interval 1–2), not separated from 1 other (B 0.700); "
        "higher than the next, B 0.700 by 0.100 [0.050, 0.150], p = 0.2 (exact McNemar, Holm "
        "over 3 pairs); 1 of 3 pairs separated")


def test_a_comparison_has_a_verdict_per_metric_at_its_own_level():
    document = {"suite": "score", "options": {"significance": 0.01},
                "metrics": {"ece": _two(0.004), "brier": _two(0.02)}}
    verdicts = section_verdicts({"kind": "compare", "results": document})
    assert list(verdicts) == ["ece", "brier"]
    assert verdicts["ece"].startswith("B is better: ")
    assert verdicts["brier"].startswith("no clear difference: ")   # 0.02 >= 0.01
    auto = section_verdicts({"kind": "compare", "results": {"suites": {"score": document}}})
    assert list(auto) == ["score: ece", "score: brier"] and auto["score: ece"] == verdicts["ece"]
    # a table without the pair's numbers (a foreign document) has no verdict, and no error
    assert VERDICTS["compare"]({"models": {"A": {}, "B": {}}, "pairs": [{"a": "A"}]}) is None

# ---------------------------------------------------------------- judges: reruns and bias
def _reruns(count=3, n=40, low=0.02, high=0.2, alpha=(0.8, 0.7, 0.9)):
    return {"reruns": 5, "items_flipping": {"count": count, "n": n, "share": count / n,
                                            "low": low, "high": high},
            "flip_rate": {"estimate": 0.03, "low": 0.01, "high": 0.05},
            "alpha": {"estimate": alpha[0], "low": alpha[1], "high": alpha[2],
                      "level": "ordinal"}}


def test_reruns_stable_only_when_no_item_changed_and_the_exact_bound_is_said():
    text = VERDICTS["judge_reruns"](_reruns(count=0, low=0.0, high=0.088))
    assert text.startswith("stable: no item changed its score across 5 reruns (at most 0.09 "
                           "of items would, 95%)"), text
    text = VERDICTS["judge_reruns"](_reruns())
    assert text.startswith("3 of 40 items changed their score across 5 reruns (0.07 [0.02, "
                           "0.20]); a rerun differs from the majority score 0.03 [0.01, 0.05]")
    assert "Krippendorff's alpha (ordinal) 0.80 [0.70, 0.90]" in text


def _position(k, n, low, high, p):
    return {"first_slot": {"k": k, "n": n, "share": k / n, "low": low, "high": high,
                           "p_value": p},
            "flips": {"count": 10, "n": 50, "share": 0.2, "low": 0.1, "high": 0.34}}


def test_first_slot_share_against_one_half_and_p_never_zero():
    text = VERDICTS["judge_position"](_position(70, 100, 0.6, 0.79, 1e-6))
    assert text.startswith("prefers the answer shown first (0.70 [0.60, 0.79], p < 0.001)")
    text = VERDICTS["judge_position"](_position(52, 100, 0.42, 0.62, 0.76))
    assert text.startswith("no clear preference for a slot (0.52 [0.42, 0.62], p 0.760)")
    none = {"first_slot": {"share": None, "p_value": None,
                           "note": "no verdict that is not a tie: the test has no information"}}
    assert VERDICTS["judge_position"](none).startswith("no verdict that is not a tie")


def test_length_slopes_against_zero():
    result = {"per": 100.0, "length_unit": "words",
              "judge_slope_at_fixed_human": {"estimate": 0.3, "low": 0.1, "high": 0.5},
              "excess_slope": {"estimate": 0.02, "low": -0.1, "high": 0.12}}
    text = VERDICTS["judge_length"](result)
    assert text == ("at a fixed human score its score (per 100 words) rises with length "
                    "(0.30 [0.10, 0.50]); no clear excess over the humans' own slope (0.02 "
                    "[-0.10, 0.12])")


# ---------------------------------------------------------------- judge trust card

def _card(**aspects) -> dict:
    return {"aspects": aspects}


def _ranking(rho_ci, tau_ci=(0.2, 0.3), rho=None, tau=0.25, n=500) -> dict:
    rho = sum(rho_ci) / 2 if rho is None and rho_ci else (rho if rho is not None else 0.5)
    return {"measured": True, "n": n,
            "spearman": {"estimate": rho, "low": rho_ci and rho_ci[0],
                         "high": rho_ci and rho_ci[1]},
            "kendall": {"estimate": tau, "low": tau_ci and tau_ci[0],
                        "high": tau_ci and tau_ci[1]}}


@pytest.mark.parametrize(("rho_ci", "reading"), [
    ((0.10, 0.39), "weak"), ((0.35, 0.45), "weak to moderate"), ((0.40, 0.69), "moderate"),
    ((0.65, 0.75), "moderate to strong"), ((0.70, 0.90), "strong"),
    ((0.30, 0.75), "weak to strong"), ((-0.05, 0.10), "none clear"),
    ((-0.30, -0.10), "reversed")])
def test_ranking_reads_the_spearman_interval_against_zero_and_the_bands(rho_ci, reading):
    line = card_lines(_card(ranking=_ranking(rho_ci)))["ranking"]
    assert line.reading == reading
    assert line.number == f"{sum(rho_ci) / 2:.2f} [{rho_ci[0]:.2f}, {rho_ci[1]:.2f}]"
    if reading in ("none clear", "reversed"):
        assert line.verdict.startswith(("no clear ranking agreement", "orders items against"))
    else:
        assert line.verdict.startswith(
            "orders items as the humans do, " + reading.replace("weak", "weakly")
            .replace("moderate", "moderately").replace("strong", "strongly"))
    assert "Kendall tau-b 0.25 [0.20, 0.30]; 500 items" in line.verdict


def test_ranking_without_an_interval_gives_the_numbers_and_judges_nothing():
    line = card_lines(_card(ranking=_ranking(None, None, rho=0.5)))["ranking"]
    assert (line.number, line.reading) == ("0.50", "not judged")
    assert line.verdict == ("Spearman 0.50, Kendall tau-b 0.25; 500 items; not judged (no "
                            "interval)")


def _scoring(coverage, width, share=0.0, n_test=1000) -> dict:
    return {"measured": True, "method": "ordinal_aps", "target": 0.9, "n_test": n_test,
            "seeds": [1, 2, 3], "coverage": {"mean": coverage, "std": 0.01},
            "width": {"mean": width, "std": 0.01}, "scale_range": 4.0,
            "uninformative_share": share}


def test_scoring_undercovers_is_uninformative_from_half_or_covers_with_its_width():
    lines = card_lines(_card(scoring=_scoring(0.85, 2.0)))
    assert lines["scoring"].reading == "undercovers"   # Wilson [0.83, 0.87] below 0.9
    line = card_lines(_card(scoring=_scoring(0.90, 3.6, share=0.5)))["scoring"]
    assert line.reading == "uninformative"
    assert "50% are wider than three quarters of it" in line.verdict
    line = card_lines(_card(scoring=_scoring(0.89, 2.7, share=0.49)))["scoring"]
    assert (line.number, line.reading) == ("2.70, 0.89", "covers")
    assert line.verdict.startswith("its 90% intervals cover at the target, 2.70 points wide "
                                   "on average (68% of the scale)")


def _accept(threshold, answered=300, n=1000, best=0.31) -> dict:
    return {"measured": True, "tolerance": 1.0, "target": 0.2, "delta": 0.1,
            "threshold": threshold, "bound": None if threshold is None else 0.198,
            "best_achievable_bound": best, "n_calibration": n, "answered": answered,
            "answer_rate": answered / n}


def test_accept_names_the_threshold_and_answer_rate_or_that_none_is_certified():
    line = card_lines(_card(accept=_accept(0.9999941)))["accept"]
    assert (line.number, line.reading) == ("30%", "error <= 0.2")
    assert line.verdict == (
        "accept its score when its confidence is at least 0.999994: 300 of 1,000 items (30%) "
        "accepted, at most 0.2 of them more than 1 from the human's, with probability 0.9 "
        "(bound 0.198); review the rest")
    every = card_lines(_card(accept=_accept(0.02, answered=1000)))["accept"]
    assert every.verdict.endswith("every item accepted")
    none = card_lines(_card(accept=_accept(None, answered=0)))["accept"]
    assert (none.number, none.reading) == ("–", "none certified")
    assert "the best bound this data certifies is 0.310" in none.verdict


def _mean(own, low=3.33, high=3.56, drawn=None) -> dict:
    out = {"measured": True, "method": "ppi++", "estimate": 3.444, "low": low, "high": high,
           "width": high - low, "lambda": 0.47, "level": 0.9, "judge_mean": own,
           "n_labelled": 300, "n_unlabelled": 5416,
           "classical": {"width": 0.256}}
    if drawn is not None:
        out["labels_drawn"] = {"kept": 300, "seed": 0, "human_mean_all_labelled": drawn}
    return out


def test_the_judges_own_mean_against_the_corrected_interval():
    above = card_lines(_card(mean=_mean(3.805, drawn=3.425)))["mean"]
    assert (above.number, above.reading) == ("3.44 [3.33, 3.56]", "own mean too high")
    assert above.verdict == (
        "its own mean 3.805 overstates the humans': the corrected mean 3.444 [3.330, 3.560] "
        "(PPI++, 90%, 300 human labels, lambda 0.47); the judge narrows the humans-only "
        "interval by 10%; 300 labels drawn (seed 0): the mean of all the human scores, "
        "3.425, is inside it")
    assert card_lines(_card(mean=_mean(3.2)))["mean"].reading == "own mean too low"
    # an own mean on the interval's end is within it
    assert card_lines(_card(mean=_mean(3.56)))["mean"].reading == "own mean agrees"
    outside = card_lines(_card(mean=_mean(3.5, drawn=3.6)))["mean"].verdict
    assert outside.endswith("3.600, is outside it")


def test_a_card_says_plainly_what_it_did_not_measure_and_sums_up_the_rest():
    card = _card(ranking=_ranking((0.33, 0.38), rho=0.36),
                 reruns={"measured": False, "why": "give the judge's reruns: --reruns FILE"},
                 position={"measured": False, "why": "give a pairwise file: --pairs FILE"})
    lines = card_lines(card)
    assert lines["reruns"].verdict == ("not measured: give the judge's reruns: --reruns "
                                       "FILE")
    assert VERDICTS["judge_card"](card) == (
        "ranking: weak (Spearman 0.36 [0.33, 0.38]); not measured: rerun stability and "
        "position bias")
    assert section_verdicts({"kind": "judge_card", "results": {"j": card}}) == {
        "j": VERDICTS["judge_card"](card)}


def test_a_confidence_that_is_no_probability_is_not_called_over_or_underconfident():
    """--any-confidence (a log-likelihood): no ECE, no Brier, and no calibration verdict;
    it said "underconfident: states -6.86, right 0.22"."""
    import numpy as np

    from confeval.evaluate import evaluate_confidence

    rng = np.random.default_rng(0)
    loglik = -rng.exponential(7.0, 300)
    correct = (rng.uniform(size=300) < 0.22).astype(float)
    res = evaluate_confidence(loglik, correct, probability_scale=False, n_resamples=100)
    text = VERDICTS["confidence"](res)
    assert text.startswith(f"its confidence is no probability (mean {res['mean_confidence']:.2f}"
                           "), so calibration is not judged; right ")
    assert "confident" not in text and "AUROC" in text
    # a probability keeps its verdict
    probs = evaluate_confidence(np.full(300, 0.9), correct, n_resamples=100)
    assert VERDICTS["confidence"](probs).startswith("overconfident: states 0.90")
