"""``judge reruns | position | length`` as a library (:mod:`confeval.verbs.judge_tests`,
:mod:`confeval.verbs.judge_live`): the three rerun layouts read the same reruns to the same
numbers; bad input is one error naming the file or counted exclusions; rerun agreement is
scored by ``evaluate_confidence`` like any confidence; and live runs with scripted judges —
each repeat its own seeded, cached request, resumed; a greedy judge never flips; both orders
of every pair asked."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from confeval.backends import ResponseCache, ScriptedBackend
from confeval.evaluate import evaluate_confidence
from confeval.judge import rerun_confidence, rerun_variability
from confeval.records import RecordSet
from confeval.runs import RunFolder, load_run_records
from confeval.simulate import simulate_pairwise, simulate_reruns
from confeval.verbs.judge_live import run_judge_live
from confeval.verbs.judge_tests import (
    JudgeLengthOptions,
    JudgePositionOptions,
    JudgeRerunsOptions,
    judge_position_records,
    judge_reruns_records,
    score_judge_test,
)
from confeval.verbs.rerun import differences, rerun

COLS = [f"rerun_{r}" for r in range(1, 6)]


def _wide(tmp_path, n=120, seed=0):
    frame = simulate_reruns(n, "sampling", seed=seed)
    path = tmp_path / "wide.csv"
    frame.to_csv(path, index=False)
    return path, frame


def _strip(res: dict) -> dict:
    keep = ("n_items", "reruns", "items_flipping", "flip_rate", "pairwise_disagreement",
            "alpha", "items")
    return {k: res[k] for k in keep}


def test_the_three_layouts_read_the_same_reruns(tmp_path):
    path, frame = _wide(tmp_path)
    options = dict(bootstrap=100, human_col="gt_score")
    wide = judge_reruns_records([path], JudgeRerunsOptions(score_cols="rerun_*", **options))
    long = frame.melt(id_vars=["item_id", "gt_score"], value_vars=COLS, var_name="epoch",
                      value_name="score")
    long["epoch"] = long["epoch"].str.removeprefix("rerun_")
    long.sample(frac=1, random_state=0).to_csv(tmp_path / "long.csv", index=False)
    by_rows = judge_reruns_records([tmp_path / "long.csv"], JudgeRerunsOptions(
        score_col="score", rerun_col="epoch", id_col="item_id", **options))
    files = []
    for r, col in enumerate(COLS, 1):
        files.append(tmp_path / f"r{r}.csv")
        frame[["item_id", col, "gt_score"]].rename(columns={col: "score"}).sample(
            frac=1, random_state=r).to_csv(files[-1], index=False)
    by_files = judge_reruns_records(files, JudgeRerunsOptions(score_col="score",
                                                              id_col="item_id", **options))
    # the long file is shuffled: items come in another order; compare item by item
    for other in (by_rows, by_files):
        assert other["layout"] in ("long", "files")
        for key in ("items_flipping", "alpha"):
            assert other[key]["estimate" if key == "alpha" else "share"] == pytest.approx(
                wide[key]["estimate" if key == "alpha" else "share"], abs=1e-12)
        assert other["flip_rate"]["estimate"] == pytest.approx(wide["flip_rate"]["estimate"])
        assert other["as_confidence"]["accuracy"] == wide["as_confidence"]["accuracy"]
    assert wide["layout"] == "columns" and wide["reruns"] == 5
    # the numbers are the library's, and the confidence is evaluate_confidence's
    scores = frame[COLS].to_numpy(float)
    assert _strip(wide)["flip_rate"] == rerun_variability(scores, n_resamples=100)["flip_rate"]
    got = rerun_confidence(scores, frame.gt_score.to_numpy(float))
    ref = evaluate_confidence(got["confidences"]["rerun_agreement"], got["correct"],
                              n_resamples=100)
    measured = wide["as_confidence"]["measures"]["rerun_agreement"]
    assert measured["auroc"] == ref["auroc"] and measured["ece"] == ref["ece"]


def test_reruns_of_different_items_are_one_error_naming_the_file(tmp_path):
    _, frame = _wide(tmp_path, n=20)
    frame[["item_id", "rerun_1"]].to_csv(tmp_path / "a.csv", index=False)
    frame[["item_id", "rerun_2"]].iloc[3:].rename(columns={"rerun_2": "rerun_1"}).to_csv(
        tmp_path / "b.csv", index=False)
    with pytest.raises(ValueError) as info:
        judge_reruns_records([tmp_path / "a.csv", tmp_path / "b.csv"],
                             JudgeRerunsOptions(score_col="rerun_1", id_col="item_id"))
    text = str(info.value)
    assert text.startswith(f"{tmp_path / 'b.csv'}: 0 item(s)") and "3 of its items" in text


def test_missing_and_off_scale_reruns_are_counted(tmp_path):
    path, frame = _wide(tmp_path, n=30)
    frame.loc[0, "rerun_1"] = -1          # the unparseable marker
    frame.loc[1, "rerun_2"] = np.nan
    frame.loc[2, COLS[1:]] = np.nan       # one score left: not an item of the reruns
    frame.to_csv(path, index=False)
    res = judge_reruns_records([path], JudgeRerunsOptions(score_cols="rerun_*",
                                                          bootstrap=0))
    assert res["notes"] == {"rerun_scores_off_scale": 1, "rerun_scores_missing": 5,
                            "fewer_than_two_reruns": 1}
    assert res["excluded"] == {"fewer_than_two_reruns": 1} and res["n_items"] == 29
    assert res["warnings"]


def test_options_name_the_layout_or_say_what_is_missing(tmp_path):
    with pytest.raises(ValueError, match="name the reruns"):
        JudgeRerunsOptions().layout(1)
    with pytest.raises(ValueError, match="--id-col"):
        JudgeRerunsOptions(score_col="s").layout(3)
    with pytest.raises(ValueError, match="holds one rerun"):
        JudgeRerunsOptions(score_col="s", id_col="i").layout(1)
    with pytest.raises(ValueError, match="--level must be"):
        JudgeRerunsOptions(level="nominalish")
    with pytest.raises(ValueError, match="--answer-col"):
        JudgeLengthOptions(judge_col="j", human_col="h")


def test_a_pairwise_file_with_a_missing_order(tmp_path):
    frame = simulate_pairwise(40, "unbiased", seed=1)
    frame.loc[:4, "verdict_ba"] = None
    frame.loc[5, "verdict_ab"] = "first"
    res = judge_position_records(RecordSet.from_frame(frame, "pairs.csv"),
                                 JudgePositionOptions(bootstrap=0))
    assert res["excluded"] == {"missing_order": 5, "unknown_verdict": 1}
    assert res["n_items"] == 34 and "longer" in res
    with pytest.raises(ValueError, match="pairs.csv: no column 'verdict_ba'"):
        judge_position_records(RecordSet.from_frame(frame.drop(columns="verdict_ba"),
                                                     "pairs.csv"), JudgePositionOptions())
    one = frame.iloc[5:7].copy()
    with pytest.raises(ValueError, match="pairs.csv: 1 item"):
        judge_position_records(RecordSet.from_frame(one, "pairs.csv"), JudgePositionOptions())


def test_length_from_a_text_column_and_its_errors(tmp_path):
    frame = pd.DataFrame({"j": [3, 4, 5, 2, 3], "h": [3, 4, 4, 2, 3],
                          "answer": ["a b", "a b c d", "a b c d e f", "a", None]})
    path = tmp_path / "len.csv"
    frame.to_csv(path, index=False)
    res = score_judge_test("judge length", [path], JudgeLengthOptions(
        judge_col="j", human_col="h", answer_col="answer", bootstrap=0))
    assert res["excluded"] == {"missing_answer": 1} and res["n"] == 4
    assert res["length"] == {"min": 1.0, "median": 3.0, "max": 6.0}
    frame["answer"] = "same length"
    frame.to_csv(path, index=False)
    with pytest.raises(ValueError, match=f"{path}: every answer has the same length"):
        score_judge_test("judge length", [path], JudgeLengthOptions(
            judge_col="j", human_col="h", answer_col="answer"))


# ------------------------------------------------------------------ live, scripted judges
def _sampler():
    """A judge that samples a score from the request's seed (greedy: always the same)."""
    def reply(messages, params, i):
        if params.temperature == 0:
            return "The answer looks partly right. Score: 3"
        rng = np.random.default_rng(params.seed)
        return f"Score: {int(rng.integers(1, 6))}"
    return reply


def _values(**kw):
    return {"repeats": 4, "bootstrap": 50, "answer": "direct", **kw}


def test_live_reruns_are_seeded_cached_per_repeat_and_resumed(tmp_path):
    backend = ScriptedBackend(reply=_sampler(), capabilities={"generate"})
    cache = ResponseCache(tmp_path / "cache.sqlite")
    out = tmp_path / "run"
    result = run_judge_live("judge reruns", _values(), out, backend=backend,
                            data="builtin:arith-judge", n=6, cache=cache)
    assert result.n_items == 24 and result.model_calls == 24
    records = load_run_records(RunFolder(out, create=False).file(RunFolder.RECORDS))
    seeds = {(r["item"], r["repeat"]) for r in records}
    assert len(seeds) == 24
    metrics = result.metrics["sections"][0]["results"]["local"]
    assert metrics["n_items"] == 6 and metrics["reruns"] == 4
    assert metrics["items_flipping"]["count"] > 0
    # repeat r is asked with seed --seed + r - 1 (the scripted judge samples from it)
    assert all(r["parsed_score"] == np.random.default_rng(r["repeat"] - 1).integers(1, 6)
               for r in records)
    # resumed: nothing asked again; the cache serves a new folder with more repeats
    again = run_judge_live("judge reruns", _values(), out, backend=backend,
                           data="builtin:arith-judge", n=6, cache=cache)
    assert again.n_resumed == 24 and again.model_calls == 0
    more = run_judge_live("judge reruns", _values(repeats=6), tmp_path / "more",
                          backend=backend, data="builtin:arith-judge", n=6, cache=cache)
    assert more.model_calls == 12
    # confeval rerun scores the records again without a model
    old = json.loads((out / "metrics.json").read_text())
    assert differences(old, rerun(out)) == []


def test_a_greedy_judge_never_flips(tmp_path):
    backend = ScriptedBackend(reply=_sampler(), capabilities={"generate"})
    result = run_judge_live("judge reruns", _values(temperature=0.0), tmp_path / "run",
                            backend=backend, data="builtin:arith-judge", n=5)
    res = result.metrics["sections"][0]["results"]["local"]
    assert res["items_flipping"]["count"] == 0 and res["flip_rate"]["estimate"] == 0


def test_live_position_asks_both_orders(tmp_path):
    def scorer(messages, continuation):
        # prefers slot A a little, and the answer that says more
        text = messages[-1]["content"]
        first = text.split("Answer A: ")[1].split("\nAnswer B:")[0]
        second = text.split("Answer B: ")[1].split("\nBetter answer:")[0]
        bonus = 0.2 * np.tanh((len(first.split()) - len(second.split())) / 20)
        return float(np.log(0.6 + bonus) if continuation == "A" else np.log(0.4 - bonus))

    backend = ScriptedBackend(scorer=scorer, capabilities={"score"})
    result = run_judge_live("judge position", {"bootstrap": 50}, tmp_path / "run",
                            backend=backend, data="builtin:arith-pairwise", n=30)
    res = result.metrics["sections"][0]["results"]["local"]
    assert res["n_items"] == 30 and len(backend.calls) == 60
    assert res["first_slot"]["share"] > 0.5 and "agreement" in res and "longer" in res
    assert res["confidence_by_slot"]["n"] >= 0
    records = load_run_records(RunFolder(tmp_path / "run", create=False).file(
        RunFolder.RECORDS))
    assert {"verdict_ab", "verdict_ba", "conf_ab", "conf_ba", "p_first_ab"} <= set(records[0])
    assert differences(result.metrics, rerun(tmp_path / "run")) == []


def test_live_position_on_a_backend_that_only_generates(tmp_path):
    # greedy replies naming the slot of the answer that contains "Let me" (the padded one),
    # else no letter at all: the pair without a letter is recorded unparseable and excluded
    def reply(messages, params, i):
        text = messages[-1]["content"]
        first = text.split("Answer A: ")[1].split("\nAnswer B:")[0]
        second = text.split("Answer B: ")[1].split("\nBetter answer:")[0]
        if "Let me" in first:
            return "A"
        return "B is better" if "Let me" in second else "neither"

    backend = ScriptedBackend(reply=reply, capabilities={"generate"})
    result = run_judge_live("judge position", {"bootstrap": 0}, tmp_path / "run",
                            backend=backend, data="builtin:arith-pairwise", n=40)
    res = result.metrics["sections"][0]["results"]["local"]
    assert result.metrics["records_by_status"].get("unparseable", 0) > 0
    assert res["excluded"]["missing_order"] == result.metrics["records_by_status"][
        "unparseable"]
    # it always picks the padded answer: never changes its pick, half of them first
    assert res["flips"]["count"] == 0 and res["sign_test"]["p_value"] is None
