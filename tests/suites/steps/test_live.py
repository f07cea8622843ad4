"""The live steps suite with a scripted judge: prompt, records per step, unreadable replies
counted, scoring of the run, and re-parsing the run's records with `steps parse`."""

import json
import re

import numpy as np
import pandas as pd
import pytest

from confeval.backends import ScriptedBackend
from confeval.records import RecordSet
from confeval.runs import RunFolder, load_run_records
from confeval.suites.steps import load_step_items, parse_step_replies
from confeval.suites.steps.live import build_step_judge_messages
from confeval.verbs.run import live_part as get_suite
from confeval.verbs.run import run_suite

from ...float32 import f32_approx
from ...test_images import png_bytes


def test_prompt_lists_every_step_and_the_taxonomy(tmp_path):
    (tmp_path / "x.png").write_bytes(png_bytes())
    (tmp_path / "fake.png").write_bytes(b"\x89PNG fake")
    msgs = build_step_judge_messages("P?", "42", ["a = 1", "b = 2"],
                                     images=[str(tmp_path / "x.png")])
    system, user = msgs[0]["content"], msgs[1]["content"]
    assert "<evaluation>" in system and "Numerical calculation error" in system
    assert user[0]["type"] == "image_url" and "Step 2: b = 2" in user[-1]["text"]
    assert user[0]["image_url"]["url"].startswith("data:image/png;base64,")
    with pytest.raises(ValueError, match="image not found"):
        build_step_judge_messages("P?", "1", ["a"], images=[str(tmp_path / "missing.png")])
    with pytest.raises(ValueError, match="unreadable_image"):  # decoded before it is sent
        build_step_judge_messages("P?", "1", ["a"], images=[str(tmp_path / "fake.png")])
    assert "Correct final answer: 42" in user[-1]["text"]


def _judge(messages, params, i):
    """Flags the step that does not follow from the problem, with a lexical variant shifted
    by 0.02; every seventh problem gets an unreadable reply."""
    text = messages[-1]["content"]
    steps = re.findall(r"^Step \d+: (.*)$", text, flags=re.M)
    if len(text) % 7 == 0:
        return "I refuse."
    entries = [[f"Step {k + 1}", 1, 0.9, ""] for k in range(len(steps))]
    return "<evaluation>" + json.dumps(entries) + "</evaluation>"


def test_run_steps_records_and_scores(tmp_path):
    items = get_suite("steps").load_items("builtin:arith-steps", 12, 0)
    lexical = [{**it, "variant": "lexical", "item_id": it["problem_id"] + "::lexical"}
               for it in items]
    suite = get_suite("steps")
    result = run_suite(suite, ScriptedBackend(_judge), items + lexical, tmp_path / "run",
                       options=suite.Options(bootstrap=50), model_name="judge")
    records = load_run_records(result.run_dir / RunFolder.RECORDS)
    assert len(records) == 24
    steps = [s for r in records for s in r["steps"]]
    assert len(steps) == sum(len(it["steps"]) for it in items) * 2
    assert {s["variant"] for s in steps} == {"original", "lexical"}
    section = result.metrics["sections"][0]["results"]["judge"]
    assert section["pairs"] > 0 and section["ccr"] == 0.0
    bad = sum(s["status"] != "ok" for s in steps)
    assert section["invalid_rows"] == bad

    # the run's records re-parse with another policy into step records
    frame, summary = parse_step_replies(RecordSet.read(result.run_dir / RunFolder.RECORDS),
                                        consistency="mirror")
    assert len(frame) == len(steps) and summary["steps"] == len(steps)
    assert set(frame["item_id"]) == {it["problem_id"] for it in items}
    assert summary["parsed"] == len(steps) - bad


def test_step_data_errors_are_clear(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"item_id": "a", "problem": "p", "final_answer": 1,
                                "steps": ["x", "y"], "labels": [1]}) + "\n")
    with pytest.raises(Exception, match="differ in length"):
        load_step_items(str(path))


def test_perturbed_file_runs_live_and_yields_image_crs(tmp_path):
    from PIL import Image

    from confeval.perturb import perturb_images, with_originals
    from confeval.records import write_table

    img = tmp_path / "fig.png"
    Image.new("RGB", (12, 8), (200, 10, 10)).save(img)
    items = load_step_items("builtin:arith-steps", 4, seed=3)
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps({**{k: v for k, v in it.items() if k != "run_id"},
                                        "images": [str(img)]}) + "\n" for it in items))
    loaded_items = load_step_items(str(data))
    perturbed, _ = perturb_images(loaded_items, tmp_path / "images", seed=0)
    write_table(pd.DataFrame(with_originals(loaded_items, perturbed, "image")),
                tmp_path / "both.jsonl")

    def judge(messages, params, i):
        n = len(re.findall(r"^Step \d+:", messages[-1]["content"][-1]["text"], flags=re.M))
        p = 0.8 if messages[-1]["content"][0]["image_url"]["url"].startswith(
            "data:image/png") else 0.5
        return "<evaluation>" + json.dumps([["s", 1, p, ""]] * n) + "</evaluation>"

    suite = get_suite("steps")
    loaded = suite.load_items(str(tmp_path / "both.jsonl"), None, 0)
    result = run_suite(suite, ScriptedBackend(judge, capabilities={"generate", "images"}),
                       loaded, tmp_path / "run", options=suite.Options(bootstrap=0),
                       model_name="j")
    res = result.metrics["sections"][0]["results"]["j"]
    assert set(res["by_perturbation"]) == {"image"}
    assert res["by_perturbation"]["image"]["pairs"] == sum(len(it["steps"]) for it in items)


def test_scored_mode_equals_a_manual_forward_pass_on_a_tiny_model(tmp_path):
    torch = pytest.importorskip("torch", reason="the hf backend needs the 'local' extra")
    import asyncio as aio

    from confeval.backends.hf import HFBackend
    from confeval.suites.steps.live import build_step_question
    from confeval.verbs.run import live_part as get_suite

    from ...backends.tiny_models import build_tiny_llama

    backend = HFBackend(build_tiny_llama(tmp_path / "tiny"))
    suite = get_suite("steps")
    item = suite.load_items("builtin:arith-steps", 1, 0)[0]
    options = suite.Options(bootstrap=0)
    assert suite.needs(backend, options) == ["score"]
    record = aio.run(suite.run_item(item, backend, options))
    assert record["answer"] == "scored" and record["status"] == "ok"

    def logprob(prompt, text):
        ids = backend.tokenizer(text, add_special_tokens=False)["input_ids"]
        with torch.no_grad():
            logits = backend.net(input_ids=torch.tensor([prompt + ids])).logits[0].double()
        logp = torch.log_softmax(logits, -1)
        return sum(float(logp[len(prompt) - 1 + i, t]) for i, t in enumerate(ids))

    for k, step in enumerate(record["steps"]):
        prompt = backend.prompt_ids(build_step_question(item["problem"], item["final_answer"],
                                                        item["steps"], k))
        yes, no = logprob(prompt, "Yes"), logprob(prompt, "No")
        assert step["p_correct"] == f32_approx(1 / (1 + np.exp(no - yes)))
        assert step["pred_label"] == int(step["p_correct"] >= 0.5)
    generated = aio.run(suite.run_item(item, backend, suite.Options(answer="generated",
                                                                    max_tokens=8)))
    assert generated["answer"] == "generated"
