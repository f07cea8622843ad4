"""The live sets suite with a scripted model: options reach the prompt and the scoring."""

import asyncio

import numpy as np
import pytest

from confeval.backends import ScriptedBackend
from confeval.tasks import arith_mc
from confeval.verbs.run import live_part as get_suite


def test_run_item_records_the_option_distribution_and_options_reach_the_prompt():
    suite = get_suite("sets")
    item = arith_mc(1, seed=2)[0]
    seen = []

    def scorer(messages, letter):
        seen.append(messages[-1]["content"])
        return -0.2 if letter == item["answer"] else -3.0

    options = suite.Options(idk=True, nota=True, bootstrap=0)
    record = asyncio.run(suite.run_item(item, ScriptedBackend(scorer=scorer), options))
    letters = [k.split("_")[1] for k in record if k.startswith("logprob_")]
    assert len(letters) == len(item["options"]) + 2  # "I don't know", "None of the above"
    assert "I don't know" in seen[0] and "None of the above" in seen[0]
    probs = np.exp([record[f"logprob_{L}"] for L in letters])
    assert probs.sum() == pytest.approx(1.0) and record["pred"] == item["answer"]
    assert record["correct"] == 1 and record["method"] == "score"


def test_score_uses_alpha_and_seed_of_the_options():
    suite = get_suite("sets")
    items = arith_mc(60, seed=1)
    rng = np.random.default_rng(0)
    records = []
    for it in items:
        lp = np.log(rng.dirichlet(np.ones(len(it["options"]))))
        rec = {"item_id": it["item_id"], "answer": it["answer"], "status": "ok",
               "n_options": len(lp), "confidence": float(np.exp(lp.max())),
               "correct": int("ABCDEF"[int(lp.argmax())] == it["answer"]),
               "mass_outside": 0.0}
        rec.update({f"logprob_{L}": float(v) for L, v in zip("ABCDEF", lp)})
        records.append(rec)
    # the options a run scores with: its records' layout applied (the runner does it once)
    metrics = suite.score(records, suite.for_records(suite.Options(alpha=0.2, bootstrap=0)),
                          "m")
    sets = metrics["sections"][1]["results"]["m"]
    assert sets["alpha"] == 0.2 and sets["coverage_target"] == pytest.approx(0.8)
    assert sets["split_seed"] == 42
