"""``confeval guarantee apply`` as a library (:mod:`confeval.verbs.apply`): the policy keeps the
calibration confidences, every application tests new records against them — one file by the
two-sample test (equal to SciPy's), a stream by the conformal test martingale (its alarm named
by file and row, equal to :func:`confeval.validity.monitor_stream` on the concatenation), labels
by the error's confidence sequence (equal to :func:`confeval.validity.monitor_risk`) — and the
report folder repeats."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from confeval.report.verdicts import p_text
from confeval.runs import dumps
from confeval.validity import monitor_risk, monitor_stream
from confeval.verbs._sealed import digest
from confeval.verbs.apply import (
    ValidityOptions,
    apply_batches,
    apply_policy,
    apply_run_config,
    apply_section,
    batch_files,
    rerun_apply,
)
from confeval.verbs.guarantee import (
    GuaranteeOptions,
    certify_input,
    policy,
    read_policy,
)
from confeval.verbs.promise import MAX_POINTS

SCORE = {"confidence_col": "confidence", "correct_col": "correct"}


def _records(path, n: int, a: float, b: float, seed: int, labels: bool = True) -> pd.DataFrame:
    """Confidences ~ Beta(a, b), right with that probability (calibrated); continuous, so no
    ties."""
    rng = np.random.default_rng(seed)
    conf = rng.beta(a, b, n)
    frame = pd.DataFrame({"confidence": conf, "correct": (rng.uniform(size=n) < conf)
                          .astype(int)})
    if not labels:
        frame = frame.drop(columns="correct")
    frame.to_csv(path, index=False)
    return frame


def _policy(tmp_path, n: int = 1500, target: float = 0.15, **options):
    cal = tmp_path / "cal.csv"
    frame = _records(cal, n, 5, 2, seed=1)
    certified = certify_input(cal, GuaranteeOptions(target=target, **options), SCORE)
    doc = policy(certified, cal)
    path = tmp_path / "policy.json"
    path.write_text(dumps(doc) + "\n", encoding="utf-8")
    return path, doc, frame


def test_the_policy_keeps_the_calibration_confidences(tmp_path):
    path, doc, frame = _policy(tmp_path)
    summary = doc["validity"]
    assert summary["values"] == sorted(frame["confidence"].tolist())
    assert (summary["n"], summary["stored"], summary["subsampled"]) == (1500, 1500, False)
    assert read_policy(path)["validity"] == summary
    # with a split, only the calibration half is kept
    _, split, _ = _policy(tmp_path, split_seed=3)
    assert split["validity"]["n"] == split["n_calibration"] == 750


def test_a_batch_is_tested_as_scipy_tests_it(tmp_path):
    path, doc, _ = _policy(tmp_path)
    same, shifted = tmp_path / "same.csv", tmp_path / "shifted.csv"
    new = _records(same, 300, 5, 2, seed=2, labels=False)
    moved = _records(shifted, 300, 2, 2, seed=3, labels=False)
    cal = np.asarray(doc["validity"]["values"])
    applied = apply_batches(path, [same])
    v = applied.validity
    reference = stats.ks_2samp(cal, new["confidence"], method="exact")
    assert v["p_value"] == pytest.approx(reference.pvalue, rel=1e-9)
    assert v["batch"]["statistic"] == pytest.approx(reference.statistic, rel=1e-12)
    assert v["holds"] is True and v["checked_by"] == "batch" and v["informative"]
    assert v["sentence"].startswith(
        f"promise holds: no evidence of a shift ({p_text(reference.pvalue, 0.05)}; 300 new ")
    assert (v["n_new"], v["n_calibration"]) == (300, 1500) and v["risk"] is None
    void = apply_batches(path, [shifted]).validity
    reference = stats.ks_2samp(cal, moved["confidence"], method="exact")
    assert void["p_value"] == pytest.approx(reference.pvalue, rel=1e-6) and void["p_value"] > 0
    assert void["holds"] is False and void["sentence"].startswith(
        "promise void: the batch is not exchangeable with the calibration data (p < 0.001;")
    # the rank-sum statistic: Mann-Whitney's exact two-sided p-value is out of reach at these
    # sizes; its asymptotic one with the continuity correction is SciPy's
    rank = apply_batches(path, [same], ValidityOptions(statistic="rank_sum")).validity
    reference = stats.mannwhitneyu(new["confidence"], cal, method="asymptotic")
    assert rank["p_value"] == pytest.approx(reference.pvalue, rel=1e-9)


def test_the_calibration_file_itself_holds(tmp_path):
    path, _, _ = _policy(tmp_path)
    v = apply_batches(path, [tmp_path / "cal.csv"]).validity
    assert v["batch"]["statistic"] == 0 and v["p_value"] == 1.0 and v["holds"]


def test_permutations_are_seeded_and_plus_one_corrected(tmp_path):
    path, _, _ = _policy(tmp_path)
    batch = tmp_path / "b.csv"
    _records(batch, 100, 2, 2, seed=5, labels=False)
    one = apply_batches(path, [batch], ValidityOptions(permutations=199, seed=7)).validity
    again = apply_batches(path, [batch], ValidityOptions(permutations=199, seed=7)).validity
    assert one["batch"]["method"] == "permutation" and one == again
    assert one["p_value"] == pytest.approx(1 / 200)   # no permutation reaches the observed


def test_a_stream_is_watched_and_its_alarm_named(tmp_path):
    path, doc, _ = _policy(tmp_path)
    folder = tmp_path / "stream"
    folder.mkdir()
    frames = []
    for k in range(1, 13):    # in-distribution first, then less confident
        a, b = (5, 2) if k <= 3 else (2, 2)
        frames.append(_records(folder / f"batch-{k}.csv", 80, a, b, seed=20 + k,
                               labels=False))
    (folder / "README.md").write_text("not records")
    (folder / ".hidden.csv").write_text("confidence\n0.5\n")
    files, skipped = batch_files([folder])
    assert [f.name for f in files[:3]] == ["batch-1.csv", "batch-2.csv", "batch-3.csv"]
    assert files[-1].name == "batch-12.csv" and skipped == [str(folder / "README.md")]
    applied = apply_batches(path, [folder])
    v = applied.validity
    stream = np.concatenate([f["confidence"].to_numpy() for f in frames])
    reference = monitor_stream(doc["validity"], stream, alpha=0.05, seed=0)
    assert v["checked_by"] == "stream" and v["stream"]["alarm"] == reference["alarm"] > 240
    assert v["p_value"] == reference["p_value"] and v["holds"] is False
    alarm = reference["alarm"]
    assert v["stream"]["alarm_at"] == {"file": str(folder / f"batch-{alarm // 80 + 1}.csv"),
                                       "row": alarm % 80}
    assert v["sentence"].startswith("promise void: the stream stopped being exchangeable")
    assert f"by new item {alarm + 1:,} (" in v["sentence"]
    assert len(v["batches"]) == 12 and v["batches"][0]["holds"]
    assert applied.frame["batch"].iloc[0] == str(folder / "batch-1.csv")
    assert len(applied.frame) == 12 * 80 and applied.counts["n_read"] == 960


def test_a_long_path_is_thinned_keeping_its_alarm_and_peak(tmp_path):
    path, doc, _ = _policy(tmp_path)
    batch = tmp_path / "long.csv"
    frame = _records(batch, 4000, 2, 2, seed=8, labels=False)
    stream = apply_batches(path, [batch]).validity["stream"]
    full = monitor_stream(doc["validity"], frame["confidence"].to_numpy())
    items = stream["path"]["item"]
    assert len(items) <= MAX_POINTS + 2 and items[-1] == 3999
    assert full["alarm"] in items and int(np.argmax(full["path"])) in items
    assert stream["path"]["value"] == [full["path"][i] for i in items]


def test_labels_watch_the_promise_itself(tmp_path):
    """Records that carry the correctness (some rows only): the confidence sequence of the
    error among the answered, labelled items, equal to monitor_risk on them."""
    path, doc, _ = _policy(tmp_path)
    labelled = tmp_path / "labelled.csv"
    frame = _records(labelled, 600, 5, 2, seed=19)
    frame["correct"] = (np.random.default_rng(10).uniform(size=600) < 0.6).astype(int)
    frame.loc[::7, "correct"] = None     # a label not yet in
    frame.to_csv(labelled, index=False)
    v = apply_batches(path, [labelled]).validity
    keep = frame["correct"].notna().to_numpy()
    reference = monitor_risk(frame.loc[keep, "correct"].to_numpy(float), target=doc["target"],
                             confidence=frame.loc[keep, "confidence"].to_numpy(),
                             threshold=doc["threshold"]).to_dict()
    risk = v["risk"]
    assert risk["alarm"] == reference["alarm"] is not None and risk["holds"] is False
    assert (risk["n_labelled"], risk["n_answered"]) == (reference["n_labelled"],
                                                        reference["n_answered"])
    assert risk["bounds"]["lower"] == [reference["lower"][i] for i in risk["bounds"]["item"]]
    assert risk["sentence"].startswith("promise broken: the error among the answered")
    # the confidences still look like the calibration's: the condition holds, the promise not
    assert v["holds"] is True


def test_a_joint_risk_policy_watches_answered_and_wrong(tmp_path):
    path, doc, _ = _policy(tmp_path, method="crc", target=0.1)
    labelled = tmp_path / "labelled.csv"
    frame = _records(labelled, 500, 5, 2, seed=11)
    risk = apply_batches(path, [labelled]).validity["risk"]
    answered = frame["confidence"].to_numpy() >= doc["threshold"]
    joint = answered * (1 - frame["correct"].to_numpy())
    reference = monitor_risk(1.0 - joint, target=0.1).to_dict()
    assert risk["final_upper"] == reference["final_upper"] and risk["alarm"] is None
    assert risk["what"].startswith("share of labelled items answered and wrong")


def test_a_policy_without_a_summary_says_it_cannot_check(tmp_path):
    path, doc, _ = _policy(tmp_path)
    old = {k: v for k, v in doc.items() if k not in ("validity", "digest")}
    old["digest"] = digest(old)
    path.write_text(json.dumps(old))
    batch = tmp_path / "b.csv"
    _records(batch, 50, 5, 2, seed=12, labels=False)
    v = apply_batches(path, [batch]).validity
    assert v["holds"] is None and v["p_value"] is None
    assert v["sentence"].startswith("promise not checked: this policy stores no calibration")


@pytest.mark.parametrize("summary, why", [
    ("zzz", "is no calibration summary"),
    ({"format": "confeval-calibration-summary", "version": 1, "n": 3, "stored": 3,
      "values": [0.9, 0.1, 0.5]}, "not sorted"),
    ({"format": "confeval-calibration-summary", "version": 1, "n": 1, "stored": 3,
      "values": [0.1, 0.5, 0.9]}, "holds 3 values of n = 1"),
    ({"format": "confeval-calibration-summary", "version": 1, "n": 3, "stored": 2,
      "values": [0.1, 0.5, 0.9]}, "says 2"),
])
def test_an_edited_summary_is_refused_naming_the_field(tmp_path, summary, why):
    """Edited and re-sealed (the digest recomputed): the summary is checked itself."""
    path, doc, _ = _policy(tmp_path)
    doc = {**doc, "validity": summary}
    doc["digest"] = digest(doc)
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=rf"field 'validity' .*{why}"):
        read_policy(path)


def test_an_empty_batch_is_said_not_to_be_tested(tmp_path):
    path, _, _ = _policy(tmp_path)
    batch = tmp_path / "b.csv"
    pd.DataFrame({"confidence": ["high", "low"]}).to_csv(batch, index=False)
    v = apply_batches(path, [batch]).validity
    assert v["holds"] is True and v["informative"] is False
    assert v["sentence"].startswith("promise not checked: empty batch")


def test_infinite_measures_keep_their_rank(tmp_path):
    """A measure's +inf is placed beyond the finite values at calibration (the measures
    suite) and when applied alike: the file applied to itself is its calibration."""
    rng = np.random.default_rng(2)
    rows = []
    for q in range(200):
        sl = rng.normal(size=4)
        if q % 10 == 0:
            sl[0] = np.inf
        gold = int(np.argmax(sl)) if rng.uniform() < 0.7 else int(rng.integers(0, 4))
        rows += [{"question_id": f"q{q}", "option": "ABCD"[k], "sl": sl[k],
                  "correct": int(k == gold)} for k in range(4)]
    path = tmp_path / "rows.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    certified = certify_input(path, GuaranteeOptions(target=0.3, suite="measures"),
                              {"confidence_col": "sl"})
    doc = policy(certified, path)
    target = tmp_path / "policy.json"
    target.write_text(dumps(doc))
    v = apply_batches(target, [path]).validity
    assert doc["validity"]["values"][-20:] == [doc["validity"]["values"][-1]] * 20
    assert v["p_value"] == 1.0 and v["n_new"] == 200


def test_the_report_folder_repeats(tmp_path, monkeypatch):
    from confeval.report import render_report

    monkeypatch.chdir(tmp_path)
    path, _, _ = _policy(tmp_path)
    batch = tmp_path / "b.csv"
    _records(batch, 200, 5, 2, seed=13)
    options = ValidityOptions(alpha=0.1)
    applied = apply_batches(path, [batch], options)
    config = apply_run_config(path, [batch], options)
    section = apply_section(path, applied)
    metrics = {"title": "confeval guarantee apply", "simulated": False, "sections": [section]}
    again = rerun_apply(json.loads(dumps(config)))
    assert json.loads(dumps(again)) == json.loads(dumps(metrics))
    page = render_report(metrics)
    assert "Does the promise still apply?" in page and "promise holds" in page
    assert page.count("<img") == 3      # distributions, martingale, error bounds
    batch.write_text("confidence\n0.5\n")
    with pytest.raises(ValueError, match="changed"):
        rerun_apply(config)


def test_apply_policy_is_the_decisions_alone(tmp_path):
    path, doc, frame = _policy(tmp_path)
    decided, counts = apply_policy(path, tmp_path / "cal.csv")
    assert counts["answer"] == int((frame["confidence"] >= doc["threshold"]).sum())
    assert set(decided["decision"]) <= {"answer", "abstain"}
