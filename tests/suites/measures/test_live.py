"""The live measures suite: every measure of every injected option, from a scripted model
(known answers -> known measures), a tiny in-process model (exact against its own forward
passes; resumable) and the embedded model end to end."""

import asyncio
import json
import math

import numpy as np
import pytest

from confeval.backends import ScriptedBackend, TokenScores
from confeval.measures import jaccard_similarity, option_confidences
from confeval.suites.measures.inputs import run_option_rows as flatten_rows
from confeval.suites.measures.live import clean_sample
from confeval.verbs.run import live_part as get_suite

ITEM = {"item_id": "q1", "question": "Where do plates go?", "letters": ["A", "B", "C"],
        "options": ["in the cupboard", "on the roof", "under water"], "answer": "A"}
SAMPLES = ["in the cupboard\nQ: next", "the cupboard", " on a shelf", "in the cupboard"]


def _token_scorer(messages, continuation, suffix):
    words = continuation.split(" ")[1:]  # " in the cupboard" -> in, the, cupboard
    if continuation in ("A", "B"):  # P(true): more "A" (true) for the gold option
        gold = "in the cupboard" in messages[0]["content"]
        value = np.log(0.8 if (continuation == "A") == gold else 0.2)
        return TokenScores((1,), (continuation,), (float(value),))
    lp = -0.5 if "cupboard" in continuation else -2.0
    return TokenScores(tuple(range(len(words))), tuple(" " + w for w in words),
                       tuple(lp * (i + 1) for i in range(len(words))))


def _scripted():
    # an in-process model: exact scoring ("score") as well as per-token scores
    return ScriptedBackend(lambda messages, params, i: SAMPLES[i],
                           token_scorer=_token_scorer,
                           capabilities={"generate", "logprobs", "token_scores", "score"})


def test_scripted_model_gives_known_measures():
    suite = get_suite("measures")
    options = suite.Options(samples=4, similarity="jaccard", bootstrap=0)
    record = asyncio.run(suite.run_item(ITEM, _scripted(), options))
    assert record["samples"] == ["in the cupboard", "the cupboard", "on a shelf",
                                 "in the cupboard"]
    gold, roof, water = record["rows"]
    assert (gold["correct"], roof["correct"]) == (1, 0)
    assert gold["sl"] == pytest.approx(-0.5 * (1 + 2 + 3))
    assert roof["sl_norm"] == pytest.approx(-2.0 * 2)
    assert gold["p_true"] == pytest.approx(0.8) and roof["p_true"] == pytest.approx(0.2)
    # Algorithm 1 on the Jaccard matrix of samples + options, transcribed
    w = jaccard_similarity(record["samples"] + ITEM["options"])
    expected = option_confidences(w[:4, :4], w[4:, :4])
    assert [r["deg_j"] for r in record["rows"]] == pytest.approx(expected["degree"].tolist())
    assert gold["deg_j"] > roof["deg_j"] and gold["ecc_j"] > water["ecc_j"]
    # the scripted model has no attention and no encoder was asked for: said, not filled in
    assert set(record["unavailable"]) >= {"csl", "csl_next", "token_sar", "deg_s"}
    assert "csl" not in gold and "token_sar" not in gold
    # the samples as threshold-based evaluation sees them: similarity to the gold option
    samples = record["sample_rows"]
    assert [r["score_j"] for r in samples] == pytest.approx(w[4, :4].tolist())
    assert samples[0]["score_j"] == 1.0 and samples[2]["score_j"] == 0.0


def test_score_flattens_rows_and_ranks_measures():
    suite = get_suite("measures")
    rng = np.random.default_rng(0)
    records = []
    for q in range(40):
        rows = []
        for k in range(4):
            correct = int(k == 0)
            rows.append({"option": "ABCD"[k], "correct": correct,
                         "sl": correct + rng.normal(0, 0.5), "deg_j": rng.normal(),
                         "csl_heads": [correct + rng.normal(0, 0.3), rng.normal()],
                         "csl": 0.0, "csl_next": 0.0})
        records.append({"item_id": f"q{q}", "status": "ok", "rows": rows,
                        "unavailable": {"token_sar": "why"}})
    assert len(flatten_rows(records)) == 160
    metrics = suite.score(records, suite.Options(bootstrap=0), "m")
    result = metrics["sections"][0]["results"]["m"]
    assert result["n_rows"] == 160 and result["ranking"][0]["measure"] == "SL"
    assert result["unavailable"] == {"token_sar": "why"} and result["head_selection"] is None
    chosen = suite.score(records, suite.Options(bootstrap=0, csl_heads=1, head_share=0.25), "m")
    result = chosen["sections"][0]["results"]["m"]
    assert result["head_selection"]["heads"] == [0]  # the informative head
    assert result["head_selection"]["n_questions_used"] == 10
    assert result["n_questions"] == 30  # those 10 questions are left out of every metric
    assert "CSL@1" in result["measures"]


def test_clean_sample_cuts_at_the_next_question():
    assert clean_sample(" Paris Q: What is") == "Paris"
    assert clean_sample("") == ""


@pytest.mark.parametrize("bad", [{"samples": 1}, {"temperature": 0}, {"temperature": math.inf},
                                 {"similarity": "nli"},
                                 {"csl_heads": -1}, {"head_share": 1.0}])
def test_bad_options_are_refused(bad):
    with pytest.raises(ValueError):
        get_suite("measures").Options(**bad)


torch = pytest.importorskip("torch", reason="the hf backend needs the 'local' extra")


def test_tiny_model_run_is_exact_finite_and_resumable(tmp_path):
    from confeval.backends import ResponseCache, raw_prompt
    from confeval.backends.hf import HFBackend
    from confeval.measures import csl
    from confeval.suites.measures.live import GENERATION_PROMPT
    from confeval.verbs.run import run_suite

    from ...backends.tiny_models import build_tiny_llama
    from ...float32 import f32_approx

    backend = HFBackend(build_tiny_llama(tmp_path / "tiny"))
    suite = get_suite("measures")
    options = suite.Options(samples=3, sample_tokens=4, similarity="jaccard", bootstrap=0)
    items = suite.load_items("builtin:arith-mc", 6, 0)
    cache = ResponseCache(tmp_path / "cache.sqlite")
    seeds, generate = [], backend.generate

    async def recording(messages, params, n=1):
        seeds.append(params.seed)
        return await generate(messages, params, n=n)

    backend.generate = recording
    result = run_suite(suite, backend, items, tmp_path / "run", options=options,
                       model_name="tiny", cache=cache)
    records = [json.loads(line) for line in open(tmp_path / "run" / "records.jsonl")]
    rows = flatten_rows(records)
    assert len(rows) == sum(len(it["options"]) for it in items)
    # each question samples with its own seed: sample k of two questions is not one draw
    from confeval.suites._seeds import item_seed

    assert sorted(seeds) == sorted(item_seed(0, it["item_id"]) for it in items)
    assert len(set(seeds)) == len(items)
    # a run from Python writes the suite's row files too, as the command line does
    option_lines = open(tmp_path / "run" / "options.jsonl").read().splitlines()
    assert len(option_lines) == len(rows) and "options.jsonl" in result.extras
    assert (tmp_path / "run" / "samples.jsonl").is_file()
    for name in ("sl", "sl_norm", "csl", "csl_next", "p_true", "deg_j", "ecc_j"):
        assert np.isfinite([r[name] for r in rows]).all(), name
    # SL is the model's own log-probability of the injected option, scored exactly
    first = items[0]  # records are written as items finish: look the row up, not rows[0]
    row = next(r for r in rows if r["question_id"] == first["item_id"]
               and r["text"] == first["options"][0])
    prompt = raw_prompt(GENERATION_PROMPT.format(question=first["question"]))
    direct = asyncio.run(backend.score(prompt, [" " + first["options"][0]]))[0]
    assert row["sl"] == f32_approx(direct)
    # CSL-Next from the same pass: its attention rows weight those token log-probs
    scored = asyncio.run(backend.score_tokens(prompt, [" " + first["options"][0]],
                                              attention=True))[0]
    # float32 passes batched per question vs one continuation: equal to float32 tolerance
    assert row["csl_next"] == f32_approx(csl(scored.logprobs, scored.attention))
    assert (tmp_path / "run" / "report.html").is_file() and result.model_calls > 0
    again = run_suite(suite, backend, items, tmp_path / "run", options=options,
                      model_name="tiny", cache=cache)
    assert again.model_calls == 0 and again.n_resumed == len(items)


def test_a_question_longer_than_the_context_is_counted_not_run(tmp_path, monkeypatch):
    """A ~1 MB question is refused before any forward pass (prompt_too_long; every forward
    pass is recorded, none is longer than the context), the other questions are asked and
    scored."""
    from confeval.backends.hf import HFBackend
    from confeval.verbs.run import run_suite

    from ...backends.tiny_models import build_tiny_llama

    backend = HFBackend(build_tiny_llama(tmp_path / "tiny"))
    lengths, forward = [], backend.net.forward

    def recorded(*args, input_ids=None, **kwargs):  # every call passes input_ids by name
        lengths.append(input_ids.shape[-1])
        return forward(*args, input_ids=input_ids, **kwargs)

    monkeypatch.setattr(backend.net, "forward", recorded)
    suite = get_suite("measures")
    options = suite.Options(samples=2, sample_tokens=3, similarity="jaccard", bootstrap=0)
    items = suite.load_items("builtin:arith-mc", 4, 0)
    huge = {**items[0], "item_id": "huge", "question": "How many? " + "word " * 200_000}  # ~1 MB
    result = run_suite(suite, backend, [huge, *items], tmp_path / "run", options=options,
                       model_name="tiny")
    # the huge prompt (far over the context) never reached the model; the others did
    assert lengths and max(lengths) <= backend.context_length < 200_000
    records = {r["item_id"]: r for r in map(json.loads, open(tmp_path / "run" /
                                                               "records.jsonl"))}
    assert records["huge"]["status"] == "excluded"
    assert records["huge"]["reason"] == "prompt_too_long"
    assert result.metrics["excluded_records"] == {"prompt_too_long": 1}
    assert result.failures == [] and result.metrics["records_by_status"]["ok"] == 4
