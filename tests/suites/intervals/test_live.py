"""The live intervals suite: prompt, the two ways of reading the rating distribution, records,
and the scoring of a run — with scripted judges (no model)."""

import math

import numpy as np
import pytest

from confeval.backends import Generation, ScriptedBackend, TokenLogprob
from confeval.runs import RunFolder, load_run_records
from confeval.suites.intervals import load_judge_items
from confeval.suites.intervals.live import build_judge_messages
from confeval.verbs.run import live_part as get_suite
from confeval.verbs.run import run_suite


@pytest.fixture
def items():
    return load_judge_items("builtin:arith-judge", 80, seed=1)


def test_builtin_items_and_prompt(items):
    assert {it["gt_score"] for it in items} == {1, 2, 3, 4, 5}
    msgs = build_judge_messages(items[0], direct=False)
    assert msgs[-1]["content"].startswith(f"Question: {items[0]['question']}")
    assert "Score: X" in msgs[0]["content"] and "reference answer" in msgs[0]["content"]
    assert "only" in build_judge_messages(items[0], direct=True)[0]["content"]


def _grade_of(messages):
    """A judge that recomputes the reference grade from the prompt's answer and reference."""
    text = messages[-1]["content"]
    answer = float(text.split("The answer is ")[1].split("\n")[0].rstrip("."))
    reference = float(text.split("Reference answer: ")[1])
    rel = abs(answer - reference) / abs(reference)
    return 5 if rel == 0 else 4 if rel <= .02 else 3 if rel <= .1 else 2 if rel <= .5 else 1


def test_exact_scoring_path(tmp_path, items):
    def scorer(messages, continuation):
        k = int(continuation[-1])
        return -abs(k - _grade_of(messages)) * 1.5 - 0.3

    backend = ScriptedBackend(scorer=scorer)
    result = run_suite(get_suite("intervals"), backend, items, tmp_path / "run",
                       model_name="judge")
    records = load_run_records(result.run_dir / RunFolder.RECORDS)
    rec = records[0]
    lps = [rec[f"score_lp{k}"] for k in range(1, 6)]
    assert math.fsum(np.exp(lps)) == pytest.approx(1.0)
    assert rec["parsed_score"] == rec["gt_score"] and rec["stage"] == "exact"
    res = result.metrics["sections"][0]["results"]["judge"]
    assert res["point"]["accuracy"] == 1.0 and res["n_used"] == 80
    assert set(res["methods"]) == {"naive", "lvd", "ordinal_aps", "lac", "aps"}
    assert res["methods"]["lac"]["set_size"]["mean"] < 2


def test_top_logprobs_path_counts_unparseable(tmp_path, items):
    def reply(messages, params, i):
        grade = _grade_of(messages)
        if grade == 1 and "6" in messages[-1]["content"]:
            return Generation("I cannot grade this.", (TokenLogprob("I", -0.1, ()),), "stop")
        top = tuple((f" {k}", -abs(k - grade) - 0.05) for k in range(1, 6))
        tokens = (TokenLogprob("Close", -0.2, ()), TokenLogprob(" enough", -0.1, ()),
                  TokenLogprob(" 2", -0.3, ()), TokenLogprob(".\n", -0.1, ()),
                  TokenLogprob("Score", -0.01, ()), TokenLogprob(":", -0.01, ()),
                  TokenLogprob(f" {grade}", top[grade - 1][1], top))
        return Generation(f"Close enough 2.\nScore: {grade}", tokens, "stop")

    backend = ScriptedBackend(reply)
    result = run_suite(get_suite("intervals"), backend, items, tmp_path / "run",
                       model_name="judge")
    records = load_run_records(result.run_dir / RunFolder.RECORDS)
    ok = [r for r in records if r["status"] == "ok"]
    assert all(r["stage"] == "anchored" for r in ok)  # not the stray "2"
    assert all(r["parsed_score"] == r["gt_score"] for r in ok)
    n_bad = len(records) - len(ok)
    assert n_bad > 0
    section = result.metrics["sections"][0]["results"]["judge"]
    # read as a record file reads them: an unparseable reply has no rating log-prob
    assert section["excluded"] == {"missing_logprobs": n_bad}


def test_options_choose_methods_seeds_and_alpha(tmp_path, items):
    def scorer(messages, continuation):
        return -abs(int(continuation[-1]) - _grade_of(messages)) * 1.5 - 0.3

    suite = get_suite("intervals")
    options = suite.Options(methods="naive,lac", seeds="1-3", alpha=0.2)
    result = run_suite(suite, ScriptedBackend(scorer=scorer), items, tmp_path / "run",
                       options=options, model_name="judge")
    res = result.metrics["sections"][0]["results"]["judge"]
    assert set(res["methods"]) == {"naive", "lac"} and res["seeds"] == [1, 2, 3]
    assert res["alpha"] == 0.2
    with pytest.raises(ValueError, match="--method must be one of"):
        suite.Options(method="guess")


def test_answer_mode_selects_the_reading_and_is_recorded():
    import asyncio as aio

    from confeval.backends import ScriptedBackend
    from confeval.verbs.run import live_part as get_suite

    suite = get_suite("intervals")
    item = suite.load_items("builtin:arith-judge", 1, 0)[0]
    backend = ScriptedBackend(lambda m, p, i: "Score: 4", scorer=lambda m, c: -1.0)
    scored = aio.run(suite.run_item(item, backend, suite.Options(answer="scored")))
    generated = aio.run(suite.run_item(item, backend, suite.Options(answer="generated")))
    assert (scored["answer"], scored["method"]) == ("scored", "score")
    assert (generated["answer"], generated["method"]) == ("generated", "top_logprobs")
    assert suite.needs(backend, suite.Options(answer="generated")) == ["generate", "logprobs"]
    with pytest.raises(ValueError, match="--answer"):
        suite.Options(answer="maybe")
