"""``confeval guarantee`` as a library (:mod:`confeval.verbs.guarantee`): each suite's decision
read through its own loader and options (the sets suite's log-probability columns, a judge's
tolerance), the policy written with its options and a digest, checked in full when applied, and
version 1 policies still applied."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from confeval.guarantee import ltt_threshold
from confeval.runs import dumps
from confeval.verbs.apply import apply_policy
from confeval.verbs.guarantee import (
    GuaranteeOptions,
    certify_input,
    policy,
    read_policy,
)


def _mc(path, seed: int, n: int = 600):
    """Multiple-choice records with log-probabilities of 4 options (a live run's layout)."""
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(n, 4)) * 2
    lp = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    top = np.exp(lp.max(axis=1))   # calibrated-ish: the surer, the righter
    gold = np.where(rng.uniform(size=n) < top, lp.argmax(axis=1), rng.integers(0, 4, n))
    frame = pd.DataFrame({f"logprob_{c}": lp[:, k] for k, c in enumerate("ABCD")})
    frame["answer"] = np.array(list("ABCD"))[gold]
    frame.to_csv(path, index=False)
    return lp, gold


def test_the_sets_decision_reads_the_suites_own_columns(tmp_path):
    path = tmp_path / "mc.csv"
    lp, gold = _mc(path, 0)
    values = {"logit_cols": "logprob_*", "input": "logprobs"}
    certified = certify_input(path, GuaranteeOptions(target=0.15, suite="sets"), values)
    p = np.exp(lp.astype(np.float32)).astype(np.float64)   # the float32 softmax of log-probs
    conf = (p / p.sum(axis=1, keepdims=True)).max(axis=1)
    expected = ltt_threshold(conf, (lp.argmax(axis=1) == gold).astype(float), target=0.15,
                             delta=0.1)
    assert certified.result["threshold"] == pytest.approx(expected.threshold, rel=1e-6)
    assert certified.result["suite"] == "sets" and certified.options.logit_cols == "logprob_*"
    with pytest.raises(ValueError, match="--tolerance: not an option of the sets suite's"):
        certify_input(path, GuaranteeOptions(target=0.15, suite="sets"),
                      {**values, "tolerance": 1.0})


def _written(tmp_path, certified, path) -> tuple:
    doc = policy(certified, path)
    target = tmp_path / "policy.json"
    target.write_text(dumps(doc) + "\n", encoding="utf-8")
    return doc, target


def test_a_policy_carries_its_options_and_applies_to_new_records(tmp_path):
    path, new = tmp_path / "mc.csv", tmp_path / "new.csv"
    _mc(path, 0)
    lp, _ = _mc(new, 1)
    values = {"logit_cols": "logprob_*", "input": "logprobs"}
    certified = certify_input(path, GuaranteeOptions(target=0.15, suite="sets"), values)
    doc, target = _written(tmp_path, certified, path)
    assert doc["policy_version"] == 2 and doc["applies_to"]["options"]["logit_cols"] == \
        "logprob_*"
    assert len(doc["digest"]) == 64 and read_policy(target)["threshold"] == doc["threshold"]
    frame, counts = apply_policy(target, new)
    p = np.exp(lp.astype(np.float32)).astype(np.float64)
    conf = (p / p.sum(axis=1, keepdims=True)).max(axis=1)
    assert counts["answer"] == int((conf >= doc["threshold"] - 1e-7).sum())
    assert counts["answer"] + counts["abstain"] == len(frame)


@pytest.mark.parametrize("edit, field", [
    ({"threshold": float("nan")}, "threshold"),
    ({"threshold": float("-inf")}, "threshold"),
    ({"target": 5}, "target"),
    ({"delta": -1}, "delta"),
    ({"method": "zzz"}, "method"),
    ({"threshold": 0.0}, "guarantee"),      # the sentence states another threshold
    ({"extra": 1}, "digest"),               # anything else edited: the digest says so
    ({"applies_to": {"suite": "nope"}}, "applies_to"),
])
def test_an_edited_policy_is_refused_naming_the_file_and_the_field(tmp_path, edit, field):
    path = tmp_path / "mc.csv"
    _mc(path, 0)
    certified = certify_input(path, GuaranteeOptions(target=0.15, suite="sets"),
                              {"logit_cols": "logprob_*", "input": "logprobs"})
    doc, target = _written(tmp_path, certified, path)
    text = json.dumps({**doc, **edit})   # NaN and Infinity written as JavaScript would
    target.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError) as info:
        apply_policy(target, path)
    message = str(info.value)
    assert message.startswith(f"{target}: field {field!r}") and "\n" not in message


def test_deeply_nested_or_huge_policies_are_one_error(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 5000 + "]" * 5000)
    with pytest.raises(ValueError, match="deep.json: not a confeval policy|nested too deeply"):
        read_policy(deep)
    digits = tmp_path / "digits.json"
    digits.write_text('{"policy_version": ' + "9" * 5000 + "}")
    with pytest.raises(ValueError, match="digits.json: not a policy file"):
        read_policy(digits)


def test_a_missing_policy_a_folder_or_bytes_are_one_error_naming_the_path(tmp_path):
    """`guarantee apply nosuch.json` printed "[Errno 2] No such file or directory"."""
    with pytest.raises(ValueError, match=r"^.*nosuch.json: no such file$"):
        read_policy(tmp_path / "nosuch.json")
    with pytest.raises(ValueError, match=r": a folder, not a policy file$"):
        read_policy(tmp_path)
    latin = tmp_path / "latin.json"
    latin.write_bytes(b'{"a": "\xe9"}')
    with pytest.raises(ValueError, match=r"latin.json: not a policy file \(no valid JSON"):
        read_policy(latin)


def test_a_policy_naming_a_field_twice_is_refused_naming_file_and_key(tmp_path):
    """Its digest holds (json keeps the last of the two thresholds, the sealed one): the
    duplicate itself is refused, since another reader may take the first."""
    path = tmp_path / "mc.csv"
    _mc(path, 0)
    certified = certify_input(path, GuaranteeOptions(target=0.15, suite="sets"),
                              {"logit_cols": "logprob_*", "input": "logprobs"})
    doc, target = _written(tmp_path, certified, path)
    text = target.read_text(encoding="utf-8")
    target.write_text(text.replace('"threshold": ', '"threshold": 0.0, "threshold": ', 1),
                      encoding="utf-8")
    assert json.loads(target.read_text())["threshold"] == doc["threshold"]   # digest agrees
    with pytest.raises(ValueError, match=f"{target}: not a policy file: key 'threshold' "
                                         r"appears twice in one object \(0.0, then "):
        read_policy(target)


def test_a_version_1_policy_still_applies(tmp_path):
    """A policy written before the suite object (its columns named in ``applies_to``)."""
    records = tmp_path / "judge.csv"
    pd.DataFrame({"confidence": [0.2, 0.7, 0.9, np.nan], "correct": [1, 0, 1, 1]}).to_csv(
        records, index=False)
    old = {"policy_version": 1, "threshold": 0.7, "answer_if": "confidence >= threshold",
           "applies_to": {"suite": "score", "confidence": "confidence", "model": None,
                          "from_format": "auto", "normalise": "none"},
           "risk": "selective", "target": 0.1, "delta": 0.1, "method": "ltt",
           "fwer": "fixed-sequence", "starts": 1, "bound": 0.05, "n_calibration": 100,
           "calibration_data": {"file": "judge.csv", "sha256": "0" * 64},
           "guarantee": "Answer when the confidence is at least 0.7: ..."}
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(old))
    frame, counts = apply_policy(path, records)
    assert frame["decision"].tolist() == ["abstain", "answer", "answer", "excluded"]
    assert counts["answer"] == 2 and counts["excluded"] == {"missing_confidence": 1}


@pytest.mark.parametrize("suite, applies_to, options, choice", [
    ("score", {"confidence": "conf"}, {"confidence_col": "conf"}, {}),
    ("diagnose", {"confidence": "conf"}, {}, {"confidence_col": "conf"}),
    ("steps", {"confidence": "p(correct)", "p_col": "p_step"}, {"p_col": "p_step"}, {}),
    ("measures", {"confidence": "sl", "measure_col": "tokensar"}, {},
     {"confidence_col": "tokensar"}),
])
def test_a_version_1_policy_names_its_columns_for_each_suite(suite, applies_to, options,
                                                             choice):
    """Version 1's ``confidence`` names the confidence column wherever the suite has one and
    no ``measure_col`` named it; its other keys are options of the same name."""
    import dataclasses

    from confeval.suites import SUITES
    from confeval.verbs.guarantee import policy_options

    doc = {"policy_version": 1, "applies_to": {"suite": suite, **applies_to}}
    built_options, built_choice = policy_options(doc, SUITES[suite])
    default_options = SUITES[suite].Options()
    for name, value in options.items():
        assert getattr(built_options, name) == value
    for field in dataclasses.fields(built_options):
        if field.name not in options:
            assert getattr(built_options, field.name) == getattr(default_options, field.name)
    for name, value in choice.items():
        assert getattr(built_choice, name) == value


def test_the_measures_decision_answers_one_option_per_question(tmp_path):
    rng = np.random.default_rng(2)
    rows = []
    for q in range(120):
        sl = rng.normal(size=4)
        gold = int(sl.argmax()) if rng.uniform() < 0.7 else int(rng.integers(0, 4))
        rows += [{"question_id": f"q{q}", "option": "ABCD"[k], "sl": sl[k],
                  "correct": int(k == gold)} for k in range(4)]
    path = tmp_path / "rows.csv"
    frame = pd.DataFrame(rows)
    frame.to_csv(path, index=False)
    certified = certify_input(path, GuaranteeOptions(target=0.3, suite="measures"),
                              {"confidence_col": "sl"})
    first = frame.loc[frame.groupby("question_id", sort=False)["sl"].idxmax()]
    expected = ltt_threshold(first["sl"].to_numpy(), first["correct"].to_numpy(float),
                             target=0.3, delta=0.1)
    assert certified.result["threshold"] == expected.threshold
    assert certified.result["n_calibration"] == 120
    _, target = _written(tmp_path, certified, path)
    decided, _ = apply_policy(target, path)
    assert (decided["decision"] == "not_chosen").sum() == 3 * 120


@pytest.mark.parametrize("values", [{"min_score": -100000, "max_score": 100000},
                                    {"min_score": 1, "max_score": 101}])
def test_a_scale_too_wide_is_refused_before_any_work(tmp_path, values):
    """A judge's scale of more than 100 ratings is refused at once, naming the flags (it
    took 300 s and 1.8 GB before), in guarantee as in agreement."""
    from confeval.suites.agreement import AgreementOptions

    path = tmp_path / "judge.csv"
    pd.DataFrame({"p": [1, 2], "g": [1, 2]}).to_csv(path, index=False)
    with pytest.raises(ValueError, match="--min-score .* to --max-score .*: at most 100 "
                                         "ratings"):
        certify_input(path, GuaranteeOptions(target=0.2, suite="agreement"),
                      {"pred_col": "p", "gt_col": "g", **values})
    with pytest.raises(ValueError, match="at most 100 ratings"):
        AgreementOptions(**values)
