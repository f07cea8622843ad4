"""Scoring step records: pairing, breakdowns, invalid rows, the item bootstrap, generator
consistency."""

import numpy as np
import pandas as pd
import pytest

from confeval.metrics import confidence_robustness
from confeval.simulate import simulate
from confeval.suites.steps import StepsOptions, score_generator_consistency, score_steps_file
from confeval.suites.steps.scoring import _core, score_steps


def _records():
    rows = []
    for item, (ps, labels, types) in enumerate([
            ([0.9, 0.2, 0.7], [1, 0, 1], ["", "reasoning", ""]),
            ([0.6, 0.4], [1, 0], ["", "knowledge"])]):
        for step, (p, y, t) in enumerate(zip(ps, labels, types)):
            rows.append({"item_id": f"q{item}", "step": step, "variant": "original",
                         "p_correct": p, "label": y, "error_type": t, "level": f"L{item}"})
    rows += [{"item_id": "q0", "step": 0, "variant": "lexical", "p_correct": 0.95, "label": 1,
              "error_type": "", "level": "L0"},
             {"item_id": "q1", "step": 1, "variant": "lexical", "p_correct": 0.8, "label": 0,
              "error_type": "knowledge", "level": "L1"},
             {"item_id": "q9", "step": 0, "variant": "syntactic", "p_correct": 0.5, "label": 1,
              "error_type": "", "level": "L0"}]  # no original: unpaired
    return pd.DataFrame(rows)


def test_pairs_subsets_and_breakdowns_hand_computed():
    res = score_steps(_records(), group_cols=["level"], n_resamples=0)
    # pairs: q0/0 c 0.9 -> 0.95 (0.05); q1/1 c 0.6 (p 0.4) -> 0.8 (0.2, not > delta)
    assert res["pairs"] == 2 and res["unpaired_rows"] == 1
    assert res["ccr"] == 1.0 and res["sccr"] == 0.0
    assert res["accm"] == pytest.approx((0.05 + 0.2) / 2)
    assert res["by_perturbation"]["lexical"]["pairs"] == 2
    # CSS: mean p correct = (0.9 + 0.7 + 0.6) / 3; reasoning 0.2; knowledge 0.4
    p_ok = 2.2 / 3
    assert res["delta_p"] == pytest.approx({"reasoning": p_ok - 0.2, "knowledge": p_ok - 0.4})
    assert res["macro_f1"] == 1.0  # every l-hat equals the label
    assert res["avg"] == pytest.approx((res["crs"] + res["css"] + res["ccs"]) / 3)
    level0 = res["by_group"]["level"]["L0"]
    assert level0["pairs"] == 1 and level0["n_original_rows"] == 3
    assert level0["accm"] == pytest.approx(0.05)


def test_judge_error_types_and_labels():
    df = _records()
    df["pred_error_type"] = ["", "Reasoning Error", "", "", "Visual", "", "", ""]
    df["pred_label"] = [1, 0, 1, 0, 0, 1, 0, 1]
    res = score_steps(df, n_resamples=0)
    # flagged typed steps: q0/1 (reasoning, named right), q1/1 (knowledge, named visual)
    assert res["error_type_accuracy"] == 0.5 and res["n_error_type"] == 2
    # original rows: pred_label 1,0,1,0,0 vs l-hat 1,0,1,1,0
    assert res["label_agreement"] == pytest.approx(4 / 5)


def test_duplicate_originals_are_an_error():
    df = pd.concat([_records(), _records().iloc[[0]]])
    with pytest.raises(ValueError, match="duplicate original"):
        score_steps(df, n_resamples=0)


def test_no_perturbations_gives_no_crs_and_no_avg():
    res = score_steps(_records().query("variant == 'original'"), n_resamples=50)
    assert res["crs"] is None and res["avg"] is None and res["css"] is not None
    assert "crs" not in res["ci"] and "css" in res["ci"]


def test_batched_item_bootstrap_equals_reweighting_each_resample():
    df = simulate("steps", 60, seed=4)
    res = score_steps(df, n_resamples=40, seed=7)
    # recompute the same resamples one at a time with row weights
    frame = df.copy()
    from confeval.metrics.steps import encode_error_types, step_confidence
    frame["pred"], frame["c"] = step_confidence(frame.p_correct.to_numpy())
    frame["_item"] = pd.factorize(frame.item_id)[0]
    frame["_type"], names = encode_error_types(frame.error_type.to_numpy(dtype=object),
                                               frame.label.to_numpy())
    orig = frame[frame.variant == "original"]
    pairs = frame[frame.variant != "original"].merge(
        orig[["item_id", "step", "c", "_item"]], on=["item_id", "step"],
        suffixes=("", "_orig"))
    rng = np.random.default_rng(7)
    n_items = frame._item.max() + 1
    reps = {"crs": [], "css": [], "ccs": []}
    for _ in range(40):
        counts = np.bincount(rng.integers(0, n_items, n_items), minlength=n_items)
        core = _core(orig, pairs, StepsOptions(), names.size,
                     counts[orig._item.to_numpy()].astype(float),
                     counts[pairs._item.to_numpy()].astype(float))
        for k in reps:
            reps[k].append(core[k])
    for k, values in reps.items():
        assert res["ci"][k]["low"] == pytest.approx(np.quantile(values, 0.025))
        assert res["ci"][k]["high"] == pytest.approx(np.quantile(values, 0.975))


def test_a_file_counts_invalid_rows_and_gives_the_contract(tmp_path):
    df = simulate("steps", 80, seed=2)
    df["p_correct"] = df["p_correct"].astype(object)
    df.loc[0, "p_correct"] = "abc"
    df.loc[1, "p_correct"] = 1.5
    df.loc[2, "p_correct"] = None
    path = tmp_path / "steps.csv"
    df.to_csv(path, index=False)
    res = score_steps_file(path, StepsOptions(group_cols=("difficulty",), bootstrap=100))
    assert res["invalid_rows"] == 3
    assert res["excluded"] == {"non_numeric_p_correct": 1, "p_correct_out_of_range": 1,
                               "missing_p_correct": 1}
    for key in ("crs", "ccr", "accm", "sccr", "css", "delta_p", "ccs", "ece", "ece_correct",
                "ece_incorrect", "delta_ece", "macro_f1", "avg", "unpaired_rows",
                "by_perturbation"):
        assert key in res
    assert set(res["by_perturbation"]) == {"lexical", "syntactic"}
    assert set(res["by_perturbation"]["lexical"]) == {"crs", "ccr", "accm", "sccr", "pairs"}
    assert set(res["by_group"]["difficulty"]) <= {"middle_school", "high_school",
                                                  "competition"}
    assert res["ci"]["crs"]["low"] <= res["crs"] <= res["ci"]["crs"]["high"]
    # one perturbation's CRS is the metric on exactly its valid pairs (invalid originals
    # leave their perturbed rows unpaired)
    valid = df.iloc[3:]
    orig = valid[valid.variant == "original"]
    lex = valid[valid.variant == "lexical"].merge(orig[["item_id", "step", "p_correct"]],
                                                  on=["item_id", "step"], suffixes=("", "_o"))
    p, p_o = lex.p_correct.astype(float), lex.p_correct_o.astype(float)
    ref = confidence_robustness(np.where(p_o >= 0.5, p_o, 1 - p_o), np.where(p >= 0.5, p, 1 - p))
    assert res["by_perturbation"]["lexical"]["pairs"] == len(lex)
    assert res["by_perturbation"]["lexical"]["crs"] == pytest.approx(ref["crs"])
    assert res["unpaired_rows"] == sum(df.iloc[3:].variant != "original") - res["pairs"]
    with pytest.raises(ValueError, match="--crs-weights '1,2': give three numbers"):
        StepsOptions(weights="1,2")
    assert StepsOptions(weights="0.5, 0.3,0.2").weights == (0.5, 0.3, 0.2)


def test_options_reach_the_metrics():
    df = simulate("steps", 50, seed=5)
    cfg = StepsOptions(epsilon=0.05, delta=0.1, crs_scale=2, weights=(0.5, 0.3, 0.2))
    res = score_steps(df, config=cfg, n_resamples=0)
    orig = df[df.variant == "original"]
    joined = df[df.variant != "original"].merge(orig[["item_id", "step", "p_correct"]],
                                                on=["item_id", "step"], suffixes=("", "_o"))
    c = np.where(joined.p_correct >= 0.5, joined.p_correct, 1 - joined.p_correct)
    c_o = np.where(joined.p_correct_o >= 0.5, joined.p_correct_o, 1 - joined.p_correct_o)
    ref = confidence_robustness(c_o, c, epsilon=0.05, delta=0.1, scale=2,
                                weights3=(0.5, 0.3, 0.2))
    assert res["crs"] == pytest.approx(ref["crs"])


def test_generator_consistency_from_files(tmp_path):
    specs = []
    for j, behaviour in enumerate(["typical", "overconfident", "typical"]):
        paths = []
        for g in (0, 1):
            df = simulate("steps", 60, behaviour, seed=10 * j + g)
            path = tmp_path / f"j{j}-g{g}.csv"
            df.to_csv(path, index=False)
            paths.append(str(path))
        specs += ["--pair", f"judge{j}={paths[0]},{paths[1]}"]
    res = score_generator_consistency(specs[1::2])
    assert res["judges"] == ["judge0", "judge1", "judge2"]
    for m in ("crs", "css", "ccs"):
        assert -1 <= res[m]["pearson"] <= 1 and res[m]["n_judges"] == 3
    with pytest.raises(ValueError, match="at least 3 judges"):
        score_generator_consistency(specs[1:2])  # one judge: too few
    with pytest.raises(ValueError, match="use JUDGE=RECORDS_A,RECORDS_B"):
        score_generator_consistency(["judge0"])
