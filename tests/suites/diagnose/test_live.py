"""The live diagnose suite with scripted models: known answers -> known metrics, every
protocol and answer mode, permuted letters, images never sent to a text-only model."""

import asyncio
import json
import math
import re

import pytest

from confeval.backends import ScriptedBackend
from confeval.verbs.run import live_part as get_suite

ITEMS = [{"item_id": f"i{k}", "question": "How many pens?", "chain": "Step 1: 3 + 4 = 8.",
          "gold_type": t, "image": None, "domain": "arithmetic", "subdomain": "boxes"}
         for k, t in enumerate(["re", "kde", "qce", "re", "no_error", "kde"])]


def _menu(messages):
    """letter -> the type named on its line of the prompt's menu."""
    text = messages[-1]["content"] if isinstance(messages[-1]["content"], str) else \
        messages[-1]["content"][-1]["text"]
    names = {"Visual": "vpe", "Reasoning": "re", "Question": "qce", "Knowledge": "kde",
             "No error": "no_error"}
    menu = {}
    for letter, name in re.findall(r"^([A-E])\. (Visual|Reasoning|Question|Knowledge|No error)",
                                   text, re.M):
        menu[letter] = names[name]
    return text, menu


def _oracle(items, wrong=()):
    """A scorer that puts 0.7 on the gold type's letter (another type for ids in ``wrong``)."""
    by_chain = {it["item_id"]: it for it in items}

    def scorer(messages, letter):
        text, menu = _menu(messages)
        item = next(it for it in by_chain.values() if f"Problem: {it['question']}" in text
                    and it["item_id"] == current["id"])
        gold = item["gold_type"]
        if not menu:  # presence stage: P / N
            return math.log(0.8 if (letter == "P") == (gold != "no_error") else 0.2)
        target = gold if item["item_id"] not in wrong else (
            "vpe" if gold != "vpe" else "re")
        if target not in menu.values():  # ETC has no "no error": any other
            target = "qce"
        return math.log(0.7 if menu.get(letter) == target else 0.3 / (len(menu) - 1))
    current = {}
    return scorer, current


def _run(protocol, items, *, answer="scored", permute=False, wrong=(), reply=None,
         capabilities=None):
    suite = get_suite("diagnose")
    options = suite.Options(protocol=protocol, answer=answer, permute=permute, bootstrap=0)
    scorer, current = _oracle(items, wrong)
    backend = ScriptedBackend(reply, scorer, capabilities=capabilities)
    records = []
    for it in items:
        current["id"] = it["item_id"]
        records.append(asyncio.run(suite.run_item(it, backend, options)))
    return suite, options, records


def test_scored_etc_reads_the_distribution_and_scores_it():
    suite, options, records = _run("etc", ITEMS, wrong={"i3"})
    ok = [r for r in records if r["status"] == "ok"]
    assert len(ok) == 5 and records[4]["reason"] == "error_free_chain_in_etc"
    assert [r["pred_type"] for r in ok] == ["re", "kde", "qce", "vpe", "kde"]
    assert all(sum(r["probs"].values()) == pytest.approx(1.0) for r in ok)
    assert ok[0]["confidence"] == pytest.approx(0.7)
    result = suite.score(records, options, "m")["sections"][0]["results"]["m"]
    assert result["n"] == 5 and result["accuracy_strict"] == pytest.approx(0.8)
    assert result["excluded"] == {"error_free_chain_in_etc": 1}


def test_two_stage_epd_has_a_joint_distribution():
    suite, options, records = _run("epd", ITEMS)
    for r in records:
        assert sum(r["probs"].values()) == pytest.approx(1.0)
        assert r["probs"]["no_error"] == pytest.approx(1 - r["p_error_present"])
    assert records[4]["pred_type"] == "no_error"      # P(N) = 0.8 on the error-free chain
    assert records[0]["probs"]["re"] == pytest.approx(0.8 * 0.7)
    result = suite.score(records, options, "m")["sections"][0]["results"]["m"]
    assert result["accuracy_strict"] == 1.0
    assert result["presence"]["false_positive_rate"] == 0.0
    assert result["presence"]["auroc_p_error_present"] == 1.0
    assert result["baselines"]["random"]["expected"] == pytest.approx((5 / 8 + 1 / 2) / 6)


def test_permuted_letters_are_stored_and_used():
    _, _, plain = _run("epd5", ITEMS)
    _, _, permuted = _run("epd5", ITEMS, permute=True)
    assert [r["pred_type"] for r in permuted] == [r["pred_type"] for r in plain]
    assert any(r["letters"] != plain[0]["letters"] for r in permuted)
    assert all(sorted(r["letters"].values()) == sorted(plain[0]["letters"].values())
               for r in permuted)


def test_generated_mode_parses_replies():
    # the error-free chain (i4) is not asked in ETC: five replies for six items
    replies = iter(["The answer is B.", "<think>hmm</think>D", "A careful look", "Option B",
                    "**D**"])
    suite, options, records = _run("etc", ITEMS, answer="generated",
                                   reply=lambda m, p, i: next(replies))
    assert [r.get("pred_type") for r in records] == ["re", "kde", None, "re", None, "kde"]
    assert records[2]["parse_failure"] == "no_answer" and records[1]["parse_rule"] == "whole"
    scored = suite.score(records, options, "m")
    result = scored["sections"][0]["results"]["m"]
    assert result["parse_rate"] == pytest.approx(4 / 5)
    assert result["accuracy_strict"] == pytest.approx(4 / 5)
    # replies carry no distribution over the types: no confidence section, and no warning
    # that a 'confidence' column is missing (there was one)
    assert [s["kind"] for s in scored["sections"]] == ["diagnose"]
    assert "warnings" not in scored


def test_an_image_item_is_never_sent_to_a_text_only_model(tmp_path):
    import base64
    import io

    from PIL import Image

    from confeval.backends import ImagesRefused
    from confeval.verbs.run import run_suite

    png = io.BytesIO()
    Image.new("RGB", (4, 4), "red").save(png, format="PNG")
    item = {**ITEMS[0],
            "image": "data:image/png;base64," + base64.b64encode(png.getvalue()).decode()}
    backend = ScriptedBackend(scorer=lambda m, c: -1.0)
    suite = get_suite("diagnose")
    options = suite.Options(bootstrap=0)
    with pytest.raises(ImagesRefused):  # the backend itself refuses, whoever calls it
        asyncio.run(suite.run_item(item, backend, options))
    result = run_suite(suite, backend, [item, ITEMS[1]], tmp_path / "run", options=options)
    records = [json.loads(line) for line in open(tmp_path / "run" / "records.jsonl")]
    assert records[0]["status"] == "excluded" and records[0]["reason"] == "needs_image"
    assert records[0]["protocol"] == "etc" and records[0]["has_image"] is True
    assert result.metrics["excluded_records"] == {"needs_image": 1}
    assert all("image_url" not in json.dumps(call) for call in backend.calls)


def test_bad_options_are_refused():
    suite = get_suite("diagnose")
    for bad in ({"protocol": "xyz"}, {"answer": "maybe"}, {"max_tokens": 0}):
        with pytest.raises(ValueError):
            suite.Options(**bad)


def test_ablation_answers_each_condition_strictly_and_links_to_the_diagnosis():
    from confeval.suites.diagnose.live import answer_prompt

    items = [{**it, "correct_answer": 40 + k, "error_step": 0}
             for k, it in enumerate(ITEMS)]

    def reply(messages, params, i):
        text = messages[-1]["content"]
        if "Solve the problem" not in text:  # the diagnosis itself (generated mode)
            return "B"                        # always "reasoning error"
        item = next(it for it in items if it["item_id"] == current["id"])
        # right only when told the error's type, or on the first item
        right = "The error is of this kind" in text or item["item_id"] == "i0"
        return f"The answer is {item['correct_answer'] if right else 120}."

    suite = get_suite("diagnose")
    options = suite.Options(protocol="epd5", answer="generated", ablation=True, bootstrap=200)
    backend = ScriptedBackend(reply)
    current, records = {}, []
    for it in items:
        current["id"] = it["item_id"]
        records.append(asyncio.run(suite.run_item(it, backend, options)))
    assert set(records[0]["answers"]) == {"question", "chain", "chain_step", "chain_type"}
    assert set(records[4]["answers"]) == {"question", "chain"}  # error-free: no step, no type
    assert answer_prompt(items[4], "chain_type") is None
    result = suite.score(records, options, "m")["sections"][0]["results"]["m"]
    conditions = result["ablation"]["conditions"]
    assert conditions["chain_type"]["accuracy"] == 1.0 and conditions["chain_type"]["n"] == 5
    assert conditions["question"]["accuracy"] == pytest.approx(1 / 6)
    link = result["ablation"]["link"]
    # diagnosed right: i0 and i3 (gold "re"); the plain question right only on i0
    assert (link["n_diagnosed_right"], link["n_diagnosed_wrong"]) == (2, 4)
    assert link["accuracy_if_right"] == 0.5 and link["accuracy_if_wrong"] == 0.0
    assert link["difference"] == 0.5 and link["ci"]["low"] <= 0.5 <= link["ci"]["high"]


def test_conformal_sets_over_the_types_from_the_recorded_probabilities():
    items = [{**it, "item_id": f"{it['item_id']}-{copy}"} for copy in range(4) for it in ITEMS]
    suite, options, records = _run("epd5", items)
    sections = suite.score(records, options, "m")["sections"]
    sets = next(s for s in sections if s["kind"] == "sets")
    assert set(sets["results"]) == {"m (marginal)", "m (Mondrian by gold type)",
                                     "m (Mondrian by domain)"}
    marginal = sets["results"]["m (marginal)"]
    assert marginal["alpha"] == 0.1 and marginal["n_used"] == 24
    confidence = next(s for s in sections if s["kind"] == "confidence")
    assert confidence["results"]["m"]["n_used"] == 24


def test_letter_and_type_pick_rates_and_probability_scores():
    from confeval import metrics as M

    suite, options, records = _run("epd5", ITEMS, permute=True)
    result = suite.score(records, options, "m")["sections"][0]["results"]["m"]
    assert sum(result["letter_pick_rate"].values()) == pytest.approx(1.0)
    assert result["type_pick_rate"] == pytest.approx(
        {"kde": 2 / 6, "no_error": 1 / 6, "qce": 1 / 6, "re": 2 / 6})
    order = ["vpe", "re", "qce", "kde", "no_error"]
    probs = [[r["probs"][t] for t in order] for r in records]
    labels = [order.index(r["gold_type"]) for r in records]
    assert result["multiclass_brier"] == pytest.approx(M.multiclass_brier_score(probs, labels))
    assert result["classwise_ece"] == pytest.approx(
        M.classwise_calibration_error(probs, labels))


def test_an_answer_judge_grades_free_text_keys_only_and_never_itself_by_default():
    from confeval.suites.diagnose.live import judge_answer

    items = [{**ITEMS[0], "correct_answer": "the kitchen"},
             {**ITEMS[1], "item_id": "num", "correct_answer": 12}]
    suite = get_suite("diagnose")
    judge = ScriptedBackend(lambda m, p, i: "Correct." if "cupboard" in
                            m[-1]["content"] else "Correctness: incorrect", model="judge")
    suite._judges["judge-spec"] = judge
    options = suite.Options(answer="generated", ablation=True, answer_judge="judge-spec")
    model = ScriptedBackend(lambda m, p, i: "B" if "Solve" not in str(m) else "the cupboard")
    assert suite.needs(model, options) == ["generate"]
    records = [asyncio.run(suite.run_item(it, model, options)) for it in items]
    free, number = records[0]["answers"]["question"], records[1]["answers"]["question"]
    assert free["correct"] == 1 and free["checked_by"] == judge.describe()
    assert number["checked_by"] == "strict" and number["failure"] == "no_number"
    # "Correctness: incorrect" is not a verdict of "correct"
    assert asyncio.run(judge_answer(judge, "q", "k", "the attic")) is None
    # the model under test may not judge itself unless asked
    suite._judges["self"] = model
    with pytest.raises(ValueError, match="model under test"):
        suite.needs(model, suite.Options(ablation=True, answer_judge="self"))
    assert suite.needs(model, suite.Options(ablation=True, answer_judge="self",
                                            self_judge=True, answer="generated"))
