"""``hf:`` — causal language models in-process with torch (the ``local`` extra).

* **Engines.** A Llama checkpoint (the embedded SmolLM2 among them) runs on confeval's own
  forward pass (:mod:`confeval.backends._llama`) and its tokenizer is read with ``tokenizers``
  (:mod:`confeval.backends._tokenizer`): transformers is never imported, which takes ~3 s
  off a live run's start-up, and every output equals transformers' to float32 rounding
  (``tests/backends/test_llama.py``). Every other model, and any folder those modules do not
  read exactly as transformers does, runs on transformers (``engine="auto"``, the default;
  ``"confeval"`` or ``"transformers"`` insist on one). The cache identity is the same on both.
* **Scoring** is exact: the prompt (the chat template with the generation prompt appended) and
  each continuation are tokenised separately and concatenated, so the continuation's tokens are
  exactly its own; the log-probabilities of those tokens are summed. The prompt is run once and
  its key/value cache shared by all its continuations, which are scored in right-padded batches
  of ``batch_size`` on top of it (``kv_reuse=False`` repeats the prompt in every row instead;
  the two agree to float32 rounding, ~1e-5).
* **Per-token scores** (``score_tokens``) give each continuation token's id, text and
  log-probability, and on request the attention of a readout position over the continuation
  (all layers x heads). On Llama-family models (Llama, Mistral, Qwen2/3) the prompt and every
  continuation go through the model as one packed row — each continuation attending to the
  prompt and to itself only, at its own positions — so a question's options cost one forward
  pass; other models share the prompt's cache as above. Attention needs transformers' eager
  attention (the default SDPA kernel cannot return weights), so those passes switch the model
  to eager and back. Several questions at once (``score_tokens_many``) share forward passes
  of up to ``pack_tokens`` tokens on those models: one row, the questions under a
  block-diagonal mask with positions restarting per question, the tokens every prompt of the
  pass begins with run once, the output layer only where a token is predicted.
* **Threads**: ``threads`` (``--threads`` of live runs) sets torch's threads; by default
  ``OMP_NUM_THREADS``, else the cores not already busy (:func:`default_threads`).
* **Raw prompts** (:func:`~confeval.backends.base.raw_prompt`) are tokenised as they are, with
  the tokenizer's own special tokens, and no chat template.
* **Generation** is our own token loop over the model's KV cache, so sampling draws from a
  ``torch.Generator`` seeded with ``seed + sample_index`` — reproducible, and no global RNG is
  touched. ``temperature = 0`` is greedy. Reported log-probabilities (and the top-k
  alternatives) are those of the model's distribution at temperature 1, as OpenAI-compatible
  servers report them; tokens are the decoded strings of single token ids. The n samples of a
  prompt are drawn together (up to ``sample_batch_size``, 32, per forward pass): the prompt
  runs once, its cache is repeated for every sample, and each sample keeps its own generator,
  so it is the sample drawn alone up to float32 rounding (``kv_reuse=False`` draws them one at
  a time); a finished sample leaves the batch.
* **Images.** A folder holding an image-text model (a config with a ``vision_config``, e.g.
  LLaVA) loads with ``AutoModelForImageTextToText`` and its ``AutoProcessor``; image parts of
  the messages (``data:`` URLs, ``file://`` URLs or local paths — never fetched from the web)
  are decoded with Pillow and passed as ``pixel_values`` on the prompt's forward pass.
* Models load with ``local_files_only`` (nothing is downloaded at run time). The identity used
  in cache keys is the path plus a fingerprint of the config and weights, so changed weights
  never reuse stale answers.

Work runs on the backend's own worker thread, one call at a time, so the event loop stays
responsive.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import itertools
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .._validation import missing_model_folder
from ._llama import LlamaEngine, unsupported_model_reason
from ._tokenizer import FolderTokenizer, Unsupported
from .base import (
    Backend,
    BackendError,
    GenerateParams,
    Generation,
    PromptTooLong,
    TokenLogprob,
    TokenScores,
    is_raw_prompt,
)

__all__ = ["HFBackend", "default_threads", "set_threads"]


def _import_torch():
    try:
        import torch
    except ImportError as exc:
        raise BackendError("the hf/local backends need the 'local' extra: "
                           "pip install 'confeval[local]'") from exc
    return torch


def _import_transformers():
    try:
        import transformers
    except ImportError as exc:
        raise BackendError("the hf/local backends need the 'local' extra: "
                           "pip install 'confeval[local]'") from exc
    return transformers


ENGINES = ("auto", "confeval", "transformers")
"""How a model folder is run: ``confeval``'s own Llama forward pass
(:mod:`confeval.backends._llama`, no transformers import: a live run starts seconds sooner),
``transformers``, or ``auto`` — ours where the folder is a model it runs, else transformers."""


class HFBackend(Backend):
    """A causal language model (or an image-text LLaVA model) from a local folder, run in
    process (our Llama forward pass or transformers, ``engine``): exact batched continuation
    scoring, and seeded generation with per-token log-probabilities and top-k alternatives
    (``hf:PATH``; ``local`` is this backend on the embedded SmolLM2)."""

    parallel_items = 1  # one forward pass at a time (a lock): items finish one by one
    pack_items = 16
    """Items a run keeps in flight so that their scoring calls meet in one many-call
    (:meth:`_score_many`, :meth:`token_scores_many`): a multiple-choice question with its
    options is ~50-120 tokens, so 16 of them fill about three passes of
    :data:`_PASS_TOKENS`, and the run's progress moves every few seconds."""

    kind = "hf"

    def __init__(self, path: str | Path, *, device: str = "cpu", batch_size: int = 8,
                 model: Any = None, tokenizer: Any = None, name: str | None = None,
                 kv_reuse: bool = True, threads: int | None = None,
                 engine: str = "auto") -> None:
        super().__init__(name or str(path))
        if engine not in ENGINES:
            raise BackendError(f"hf: engine {engine!r}: choose one of {', '.join(ENGINES)}")
        torch = _import_torch()
        self._torch = torch
        self.threads = set_threads(threads)
        self.processor = None
        missing = missing_model_folder(path) if model is None else None
        if missing:
            raise BackendError(f"hf: {missing}")
        self.engine = self._load(path, model, tokenizer, engine)
        self.net.to(device).eval()
        self.device = device
        self.batch_size = max(1, int(batch_size))
        self.kv_reuse = bool(kv_reuse)
        self.sample_batch_size = 32   # samples of one prompt drawn in one batch
        self.pack_tokens = _PASS_TOKENS   # the most tokens of a pass several questions share
        caps = {"generate", "logprobs", "score", "token_scores", "attention"} | (
            {"images"} if self.processor else set())
        self.capabilities = frozenset(caps)
        # A prompt pass whose only use is the next token's distribution computes the
        # vocabulary logits of its last position alone (the output layer is ~20% of a small
        # model's work per position), where the model's forward takes logits_to_keep.
        self._last_logits_only = ({"logits_to_keep": 1} if "logits_to_keep" in
                                  inspect.signature(self.net.forward).parameters else {})
        # transformers 5.x names the KV cache ``cache`` (``past_key_values`` warns on every
        # call and goes in 5.40); older releases know only ``past_key_values``
        self._cache_kw = ("cache" if "cache" in inspect.signature(self.net.forward).parameters
                          else "past_key_values")
        self._lock = threading.Lock()
        self._executor = None
        self._given_model = model is not None
        self._fingerprint = self._make_fingerprint(path)

    def _load(self, path, model, tokenizer, engine: str) -> str:
        """Load the tokenizer and model (``self.net``) with the engine asked for; the engine
        that runs them."""
        reason = "a model object was given" if model is not None else \
            "a tokenizer object was given" if tokenizer is not None else \
            "asked for transformers" if engine == "transformers" else \
            unsupported_model_reason(path)
        if reason is None:
            try:
                self.tokenizer = FolderTokenizer(path)
                self.net = LlamaEngine(path)
                return "confeval"
            except Unsupported as exc:
                reason = str(exc)
            except (OSError, ValueError, KeyError, TypeError, RuntimeError) as exc:
                raise BackendError(f"hf: cannot load a model from {path}: {exc}") from None
        if engine == "confeval":
            raise BackendError(f"hf: the confeval engine cannot run {path}: {reason}")
        transformers = _import_transformers()
        try:
            config = None if model is not None else transformers.AutoConfig.from_pretrained(
                str(path), local_files_only=True)
            if config is not None and getattr(config, "vision_config", None) is not None:
                self.processor = transformers.AutoProcessor.from_pretrained(
                    str(path), local_files_only=True)
                self.tokenizer = self.processor.tokenizer
                self.net = transformers.AutoModelForImageTextToText.from_pretrained(
                    str(path), local_files_only=True)
            else:
                self.tokenizer = tokenizer or transformers.AutoTokenizer.from_pretrained(
                    str(path), local_files_only=True)
                self.net = model or transformers.AutoModelForCausalLM.from_pretrained(
                    str(path), local_files_only=True)
        except (OSError, ValueError) as exc:
            raise BackendError(f"hf: cannot load a model from {path}: {exc}") from None
        return "transformers"

    def _cache_of(self, outputs: Any) -> Any:
        """The KV cache a forward pass returned, under its name in this transformers."""
        return getattr(outputs, "cache" if self._cache_kw == "cache" else "past_key_values")

    # ------------------------------------------------------------------ identity
    def _make_fingerprint(self, path) -> str:
        """The model's identity in cache keys: its config and a sum per weight. The config is
        config.json as parsed (both engines read the same file, so a cache outlives a change
        of engine), or the model object's own when one was given."""
        import json

        config_file = Path(path) / "config.json"
        if self._given_model or not config_file.is_file():
            text = self.net.config.to_json_string()
        else:
            with open(config_file, encoding="utf-8") as handle:
                text = json.dumps(json.load(handle), sort_keys=True)
        import numpy as np

        h = hashlib.sha256(text.encode())
        torch = self._torch
        with torch.no_grad():
            for name, p in sorted(self.net.state_dict().items()):
                # numpy's sum: single-threaded, so the identity does not move with the
                # thread count, and ~2x faster than torch's float64 copy of the weights
                values = (p if p.dtype == torch.float32 else p.float()).detach().cpu().numpy()
                h.update(name.encode())
                h.update(repr((tuple(p.shape), float(values.sum(dtype=np.float64)))).encode())
        return h.hexdigest()[:16]

    def identity(self) -> dict[str, Any]:
        return {"kind": self.kind, "model": self.model, "fingerprint": self._fingerprint}

    # ------------------------------------------------------------------ prompts
    def prompt_ids(self, messages: Sequence[dict]) -> list[int]:
        """Token ids of the chat prompt, ending where the assistant's reply begins."""
        return self.encode(messages)[0]

    def encode(self, messages: Sequence[dict]) -> tuple[list[int], dict]:
        """Prompt token ids and the extra model inputs (``pixel_values`` for images)."""
        if is_raw_prompt(messages):
            text = str(messages[0].get("content") or "")
            return list(self.tokenizer(text, add_special_tokens=True)["input_ids"]), {}
        if self.processor is not None:
            return self._encode_multimodal(messages)
        return self._encode_text(messages), {}

    def _encode_multimodal(self, messages: Sequence[dict]) -> tuple[list[int], dict]:
        conversation, images = [], []
        for m in messages:
            content = m.get("content")
            parts = content if isinstance(content, list) else [{"type": "text",
                                                                 "text": content or ""}]
            converted = []
            for part in parts:
                if part.get("type") in ("image_url", "image"):
                    images.append(_load_image(part))
                    converted.append({"type": "image"})
                else:
                    converted.append({"type": "text", "text": part.get("text", "")})
            conversation.append({"role": m["role"], "content": converted})
        prompt = self.processor.apply_chat_template(conversation, add_generation_prompt=True,
                                                    tokenize=False)
        inputs = self.processor(text=prompt, images=images or None, return_tensors="pt")
        extra = {k: v for k, v in inputs.items() if k not in ("input_ids", "attention_mask")}
        return inputs["input_ids"][0].tolist(), extra

    def _encode_text(self, messages: Sequence[dict]) -> list[int]:
        flat = [{"role": m["role"], "content": _text_of(m.get("content"))} for m in messages]
        if getattr(self.tokenizer, "chat_template", None):
            ids = self.tokenizer.apply_chat_template(flat, add_generation_prompt=True,
                                                     tokenize=True)
            if isinstance(ids, dict) or hasattr(ids, "input_ids"):
                ids = ids["input_ids"]
            return list(ids)
        text = "".join(f"{m['role']}: {m['content']}\n" for m in flat) + "assistant:"
        return list(self.tokenizer(text, add_special_tokens=True)["input_ids"])

    # ------------------------------------------------------------------ scoring
    def score_ids(self, prompt: list[int], continuations: list[list[int]],
                  extra: dict | None = None) -> list[float]:
        """Sum of log P(continuation tokens | prompt), exact, batched.

        Single-token continuations (option letters, score digits) are read from one forward
        pass of the prompt; longer ones are scored in right-padded batches.
        """
        torch = self._torch
        out: list[float | None] = [None] * len(continuations)
        single = [i for i, c in enumerate(continuations) if len(c) <= 1]
        if single:
            with torch.no_grad():   # the output layer on the prompt's last position only
                logits = self.net(input_ids=torch.tensor([prompt], device=self.device),
                                  **self._extra(extra, 1), **self._last_logits_only).logits
            last = torch.log_softmax(logits[0, -1].double(), dim=-1).cpu()
            for i in single:
                c = continuations[i]
                out[i] = float(last[c[0]]) if c else 0.0
        multi = [i for i, c in enumerate(continuations) if len(c) > 1]
        if self.kv_reuse and not extra and multi:
            scored = self._token_scores_reused(prompt, [continuations[i] for i in multi], [],
                                               False)
            values = [sum(s.logprobs) for s in scored]
        else:
            values = self._score_batched(prompt, [continuations[i] for i in multi], extra)
        for i, value in zip(multi, values):
            out[i] = value
        return [float(v) for v in out]

    def _extra(self, extra: dict | None, rows: int) -> dict:
        """Extra inputs (e.g. pixel values) moved to the device and repeated per batch row."""
        if not extra:
            return {}
        return {k: v.to(self.device).repeat(rows, *([1] * (v.dim() - 1)))
                for k, v in extra.items()}

    def _score_batched(self, prompt: list[int], continuations: list[list[int]],
                       extra: dict | None = None) -> list[float]:
        torch = self._torch
        out: list[float] = []
        pad = self.tokenizer.pad_token_id
        pad = 0 if pad is None else pad
        for start in range(0, len(continuations), self.batch_size):
            chunk = continuations[start:start + self.batch_size]
            seqs = [prompt + c for c in chunk]
            width = max(len(s) for s in seqs)
            ids = torch.full((len(seqs), width), pad, dtype=torch.long)
            mask = torch.zeros((len(seqs), width), dtype=torch.long)
            for i, s in enumerate(seqs):
                ids[i, :len(s)] = torch.tensor(s)
                mask[i, :len(s)] = 1
            with torch.no_grad():
                logits = self.net(input_ids=ids.to(self.device),
                                  attention_mask=mask.to(self.device),
                                  **self._extra(extra, len(seqs))).logits.float()
            logp = torch.log_softmax(logits, dim=-1).cpu()
            for i, c in enumerate(chunk):
                if not c:
                    out.append(0.0)
                    continue
                pos = torch.arange(len(prompt) - 1, len(prompt) - 1 + len(c))
                out.append(float(logp[i, pos, torch.tensor(c)].double().sum()))
        return out

    def token_scores_ids(self, prompt: list[int], continuations: list[list[int]],
                         suffix: list[int] | None = None, *, attention: bool = False,
                         extra: dict | None = None) -> list[TokenScores]:
        """Per-token log-probabilities of each continuation after ``prompt`` (and ``suffix``
        after it, never scored); with ``attention``, the attention of the last position of
        continuation + suffix over the continuation's tokens, one row per (layer, head).

        The prompt is run once and its key/value cache reused for every continuation
        (``kv_reuse``, the default for text prompts): continuations are then scored in
        right-padded batches of ``batch_size`` on top of the shared prefix. Without reuse, each
        row holds the whole prompt again."""
        suffix = list(suffix or [])
        if self.kv_reuse and not extra and prompt:
            packed = _packed_length(prompt, continuations, suffix, attention)
            if self._packable(packed):
                return self._token_scores_packed(prompt, continuations, suffix, attention)
            return self._token_scores_reused(prompt, continuations, suffix, attention)
        return self._token_scores_full(prompt, continuations, suffix, attention, extra)

    def _packable(self, length: int) -> bool:
        """Whether one packed sequence of ``length`` tokens may replace the shared-prefix
        passes: a model family whose attention takes a custom 4-D mask and explicit positions
        as they are, through SDPA or eager attention (the masks of sliding-window layers would
        not apply the window, hence the length limit), and at most :data:`_PACK_TOKENS`
        tokens."""
        config = getattr(self.net, "config", None)
        if getattr(config, "model_type", None) not in _PACKABLE_MODELS or length > _PACK_TOKENS:
            return False
        if (getattr(config, "_attn_implementation", None) or "sdpa") not in ("sdpa", "eager"):
            return False   # e.g. flash attention: no arbitrary mask
        window = getattr(config, "sliding_window", None)
        return not (isinstance(window, int) and 0 < window < length)

    def _token_scores_packed(self, prompt, continuations, suffix, attention):
        """All continuations scored in one forward pass: the prompt, then each continuation
        (+ suffix) one after another in one row, each attending to the prompt and to its own
        earlier tokens only (a 4-D additive mask) at the positions it would have after the
        prompt alone. So every continuation sees exactly what it sees alone, the prompt is
        run once, and one pass replaces the prompt pass plus the continuations' batches (on a
        small model on CPU a pass costs about as much as its tokens: 45 prompt tokens and five
        options take one pass of ~55 tokens instead of two). Agrees with the other paths to
        float32 rounding."""
        return self._packed_pass([(prompt, continuations, suffix)], attention)[0]

    def _packed_pass(self, questions, attention: bool = False) -> list[list[TokenScores]]:
        """Several questions ``(prompt, continuations, suffix)`` in one forward pass: each
        question packed as in :meth:`_token_scores_packed`, the questions one after another
        in one row under a block-diagonal mask (no question sees another) with positions
        restarting at 0 for each, so each question is computed as in a pass of its own. The
        tokens that begin every prompt of the pass alike (a shared instruction or worked
        example) are run once, at the row's start, and every question attends to them at
        their own positions: they are what each question would compute for them alone (a
        causal model's state at a position depends on the tokens up to it only). The output
        layer runs only on the rows that predict a continuation token."""
        torch = self._torch
        shared = _common_prefix([q[0] for q in questions]) if len(questions) > 1 else 0
        ids: list[int] = list(questions[0][0][:shared])
        positions: list[int] = list(range(shared))
        blocks, keep, layout = [], [], []
        for prompt, continuations, suffix in questions:
            offset, n_prompt = len(ids), len(prompt)
            own = n_prompt - shared   # the prompt's tokens after the shared ones (>= 1)
            # what a pass must read after the prompt: with attention every continuation and
            # the suffix (the readout position is the suffix's end), else each continuation
            # but its last token (the prediction of a token reads the tokens before it only)
            tails = [c + suffix for c in continuations] if attention else \
                [c[:-1] for c in continuations]
            starts = list(itertools.accumulate([own] + [len(t) for t in tails]))
            ids += prompt[shared:] + [token for tail in tails for token in tail]
            positions += list(range(shared, n_prompt)) + [n_prompt + j for t in tails
                                                          for j in range(len(t))]
            allowed = torch.zeros((starts[-1], starts[-1]), dtype=torch.bool)
            allowed[:own, :own] = torch.ones(own, own, dtype=torch.bool).tril()
            for start, tail in zip(starts, tails):
                end = start + len(tail)
                allowed[start:end, :own] = True
                allowed[start:end, start:end] = torch.ones(len(tail), len(tail),
                                                           dtype=torch.bool).tril()
            blocks.append((offset, allowed))
            # the rows that predict a continuation token: the prompt's last (every first
            # token), then each continuation's own tokens but its last
            layout.append((offset, len(keep), starts, continuations, tails))
            keep += [offset + own - 1] + [offset + start + j for start, c in
                                          zip(starts, continuations)
                                          for j in range(len(c) - 1)]
        length = len(ids)
        allowed = torch.zeros((length, length), dtype=torch.bool)
        allowed[:shared, :shared] = torch.ones(shared, shared, dtype=torch.bool).tril()
        for offset, block in blocks:
            end = offset + len(block)
            allowed[offset:end, :shared] = True
            allowed[offset:end, offset:end] = block
        dtype = self.net.dtype
        mask = torch.zeros((1, 1, length, length), dtype=dtype)
        mask.masked_fill_(~allowed, torch.finfo(dtype).min)
        rows = torch.tensor(keep)
        kept = {"logits_to_keep": rows.to(self.device)} if self._last_logits_only else {}
        with torch.no_grad(), self._attention_mode(attention):
            result = self.net(input_ids=torch.tensor([ids], device=self.device),
                              attention_mask=mask.to(self.device),
                              position_ids=torch.tensor([positions], device=self.device),
                              use_cache=False, output_attentions=attention, **kept)
        logits = result.logits[0] if kept else result.logits[0, rows]
        logp = torch.log_softmax(logits.double().cpu(), dim=-1)
        out: list[list[TokenScores]] = []
        for offset, first, starts, continuations, tails in layout:
            scored: list[TokenScores] = []
            row = first + 1
            for start, c, tail in zip(starts, continuations, tails):
                values = [float(logp[first, c[0]])] + [float(logp[row + j, c[j + 1]])
                                                       for j in range(len(c) - 1)]
                row += len(c) - 1
                rows_attention = _attention_rows(result, 0, offset + start + len(tail) - 1,
                                                 offset + start, len(c)) if attention else None
                scored.append(self._scores(c, values, rows_attention))
            out.append(scored)
        return out

    def token_scores_many(self, questions, *, attention: bool = False
                          ) -> list[list[TokenScores]]:
        """Per-token scores of several questions ``(prompt, continuations, suffix)`` (token
        ids), each as :meth:`token_scores_ids` gives it, in order. Where a question's options
        pack (:meth:`_packable`), consecutive questions share forward passes of up to
        :attr:`pack_tokens` tokens (:meth:`_packed_pass`): several short questions cost one
        pass instead of one each, and a pass is long enough for the matrix products to run
        near their best speed. A question too long to share a pass runs alone; with
        ``attention`` every question runs alone (the attention weights of a long row would
        take memory quadratic in its length)."""
        out: list[list[TokenScores] | None] = [None] * len(questions)
        group: list[int] = []

        def flush() -> None:
            if group:
                done = self._packed_pass([questions[i] for i in group])
                for i, scored in zip(group, done):
                    out[i] = scored
            group.clear()

        def row_length(members: list[int]) -> int:
            """Tokens of one pass holding ``members`` (their shared prompt start once)."""
            shared = _common_prefix([questions[i][0] for i in members]) \
                if len(members) > 1 else 0
            return sum(_packed_length(*questions[i], attention) - shared
                       for i in members) + shared

        for i, (prompt, continuations, suffix) in enumerate(questions):
            length = _packed_length(prompt, continuations, suffix, attention)
            if attention or not (self.kv_reuse and prompt and continuations) or \
                    length > self.pack_tokens or not self._packable(length):
                flush()
                out[i] = self.token_scores_ids(prompt, continuations, suffix,
                                               attention=attention)
                continue
            if group:
                longer = row_length([*group, i])
                if longer > self.pack_tokens or not self._packable(longer):
                    flush()
            group.append(i)
        flush()
        return out

    def _token_scores_full(self, prompt, continuations, suffix, attention, extra):
        torch = self._torch
        pad = self.tokenizer.pad_token_id
        pad = 0 if pad is None else pad
        out: list[TokenScores] = []
        for start in range(0, len(continuations), self.batch_size):
            chunk = continuations[start:start + self.batch_size]
            seqs = [prompt + c + suffix for c in chunk]
            width = max(len(s) for s in seqs)
            ids = torch.full((len(seqs), width), pad, dtype=torch.long)
            mask = torch.zeros((len(seqs), width), dtype=torch.long)
            for i, seq in enumerate(seqs):
                ids[i, :len(seq)] = torch.tensor(seq)
                mask[i, :len(seq)] = 1
            with torch.no_grad(), self._attention_mode(attention):
                result = self.net(input_ids=ids.to(self.device),
                                  attention_mask=mask.to(self.device),
                                  output_attentions=attention, **self._extra(extra, len(seqs)))
            for i, c in enumerate(chunk):
                span = torch.arange(len(prompt), len(prompt) + len(c))
                # Only the rows that predict the continuation are normalised: the full
                # (batch, length, vocabulary) log-softmax would dominate the pass.
                rows_logits = result.logits[i, span - 1].double().cpu()
                values = torch.log_softmax(rows_logits, dim=-1)[
                    torch.arange(len(c)), torch.tensor(c, dtype=torch.long)] if c else []
                rows = _attention_rows(result, i, len(seqs[i]) - 1, len(prompt), len(c)) \
                    if attention else None
                out.append(self._scores(c, values, rows))
        return out

    def _token_scores_reused(self, prompt, continuations, suffix, attention):
        import copy

        torch = self._torch
        n_prompt = len(prompt)
        with torch.no_grad():
            first = self.net(input_ids=torch.tensor([prompt], device=self.device),
                             use_cache=True, **self._last_logits_only)
        cache = self._cache_of(first)
        last = torch.log_softmax(first.logits[0, -1].double().cpu(), dim=-1)
        pad = self.tokenizer.pad_token_id
        pad = 0 if pad is None else pad
        out: list[TokenScores] = []
        for start in range(0, len(continuations), self.batch_size):
            chunk = continuations[start:start + self.batch_size]
            tails = [c + suffix for c in chunk]
            width = max(len(t) for t in tails)
            ids = torch.full((len(tails), width), pad, dtype=torch.long)
            mask = torch.zeros((len(tails), n_prompt + width), dtype=torch.long)
            mask[:, :n_prompt] = 1
            for i, tail in enumerate(tails):
                ids[i, :len(tail)] = torch.tensor(tail)
                mask[i, n_prompt:n_prompt + len(tail)] = 1
            shared = copy.deepcopy(cache)  # each batch extends its own copy of the prefix
            shared.batch_repeat_interleave(len(tails))
            with torch.no_grad(), self._attention_mode(attention):
                result = self.net(input_ids=ids.to(self.device),
                                  attention_mask=mask.to(self.device), use_cache=True,
                                  output_attentions=attention, **{self._cache_kw: shared})
            for i, c in enumerate(chunk):
                later = torch.log_softmax(result.logits[i, :len(c) - 1].double().cpu(), dim=-1)
                values = [float(last[c[0]])] + [float(later[j, c[j + 1]])
                                                 for j in range(len(c) - 1)]
                rows = _attention_rows(result, i, len(tails[i]) - 1, n_prompt, len(c)) \
                    if attention else None
                out.append(self._scores(c, values, rows))
        return out

    def _scores(self, ids: list[int], values, rows) -> TokenScores:
        return TokenScores(tuple(ids), tuple(self.tokenizer.decode([t]) for t in ids),
                           tuple(float(v) for v in values), rows)

    def _attention_mode(self, attention: bool):
        """Eager attention for the passes that must return attention weights."""
        import contextlib

        if not attention:
            return contextlib.nullcontext()
        net = self.net

        @contextlib.contextmanager
        def eager():
            before = getattr(net.config, "_attn_implementation", None) or "sdpa"
            net.set_attn_implementation("eager")
            try:
                yield
            finally:
                net.set_attn_implementation(before)
        return eager()

    @property
    def context_length(self) -> int | None:
        """The most tokens the model reads at once (its position embeddings), if it says."""
        config = getattr(self.net, "config", None)
        config = getattr(config, "text_config", None) or config
        for key in ("max_position_embeddings", "n_positions", "max_sequence_length"):
            value = getattr(config, key, None)
            if isinstance(value, int) and value > 0:
                return value
        return None

    def _check_length(self, prompt: list[int], more: int) -> None:
        """Refuse a prompt that, with ``more`` tokens after it, exceeds the context: a
        forward pass over it would be wrong (positions past the embeddings) or, for a huge
        prompt, take minutes and gigabytes before failing."""
        limit = self.context_length
        if limit is not None and len(prompt) + more > limit:
            raise PromptTooLong(f"hf: a prompt of {len(prompt):,} tokens (+ {more:,} to "
                                f"generate or score) exceeds the model's context of "
                                f"{limit:,} tokens")

    def continuation_ids(self, text: str) -> list[int]:
        """The token ids of ``text`` on its own, as the model would generate it after a
        prompt (a leading space stays part of the first token)."""
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    async def _score_tokens(self, messages, continuations, suffix, attention):
        if not continuations:
            return []
        prompt, extra = self.encode(messages)
        conts = [self.continuation_ids(c) for c in continuations]
        tail = self.continuation_ids(suffix) if suffix else []
        if any(not c for c in conts):
            raise BackendError("hf: an empty continuation has no tokens to score")
        self._check_length(prompt, max(map(len, conts)) + len(tail))
        return await self._in_worker(
            lambda: self.token_scores_ids(prompt, conts, tail,
                                                        attention=attention, extra=extra))

    async def _score_tokens_many(self, requests, suffix, attention):
        questions = []
        for messages, continuations in requests:
            prompt, extra = self.encode(messages)
            if extra:   # images: each question alone, with its pixel values
                questions.append(None)
                continue
            conts = [self.continuation_ids(c) for c in continuations]
            tail = self.continuation_ids(suffix) if suffix else []
            if any(not c for c in conts):
                raise BackendError("hf: an empty continuation has no tokens to score")
            self._check_length(prompt, max(map(len, conts), default=0) + len(tail))
            questions.append((prompt, conts, tail))
        if any(q is None for q in questions):
            return [await self._score_tokens(m, list(c), suffix, attention)
                    for m, c in requests]
        return await self._in_worker(
            lambda: self.token_scores_many(questions, attention=attention))

    async def _score_many(self, requests):
        """Each request's total log-probabilities, the questions packed several to a forward
        pass as :meth:`_score_tokens_many` does (the sums of their per-token scores: equal to
        :meth:`_score` to float32 rounding). On an image-text model, or with an empty
        continuation somewhere, each request goes alone."""
        if self.processor is not None or any(not c for _, conts in requests for c in conts):
            return [await self._score(m, list(c)) for m, c in requests]
        scored = await self._score_tokens_many(requests, "", False)
        return [[float(sum(s.logprobs)) for s in options] for options in scored]

    async def _score(self, messages, continuations):
        prompt, extra = self.encode(messages)
        conts = [list(self.tokenizer(c, add_special_tokens=False)["input_ids"])
                 for c in continuations]
        self._check_length(prompt, max(map(len, conts), default=0))
        return await self._in_worker(self.score_ids, prompt, conts, extra)

    # ------------------------------------------------------------------ generation
    def _sample(self, prompt: list[int], params: GenerateParams, index: int,
                extra: dict | None = None) -> Generation:
        """Sample ``index`` alone (batch size 1): the reference the batched path equals."""
        return self._sample_batch(prompt, params, [index], extra)[0]

    def _sample_batch(self, prompt: list[int], params: GenerateParams, indices: list[int],
                      extra: dict | None = None) -> list[Generation]:
        """Samples ``indices`` of one prompt together: the prompt runs once, its key/value
        cache is repeated for every sample, and each step is one forward pass of all of them.
        Sample i draws from its own generator seeded ``seed + i``, one draw per step, exactly
        as when sampled alone, so its tokens do not depend on the batch (up to float32
        rounding of the batched logits, which moves a draw only if it falls that close to a
        boundary). A finished sample leaves the batch (its cache row dropped): later passes
        run the samples still drawing only."""
        torch = self._torch
        n = len(indices)
        gens = [torch.Generator().manual_seed(int(params.seed or 0) + i) for i in indices]
        eos = self.tokenizer.eos_token_id
        produced: list[list[int]] = [[] for _ in range(n)]
        tokens: list[list[TokenLogprob]] = [[] for _ in range(n)]
        texts, finish = [""] * n, ["length"] * n
        with torch.no_grad():
            # Images enter on the prompt's pass only; later steps reuse the KV cache.
            outputs = self.net(input_ids=torch.tensor([prompt], device=self.device),
                               use_cache=True, **self._extra(extra, 1), **self._last_logits_only)
            past = self._cache_of(outputs)
            if n > 1:
                past.batch_repeat_interleave(n)
            logits = outputs.logits[:, -1].float().cpu().expand(n, -1)
            active = list(range(n))   # the samples still drawing, in the batch's row order
            for step_index in range(params.max_tokens):
                step, still = [], []
                for position, row in enumerate(active):
                    next_id = self._choose(logits[position], params, gens[row])
                    if eos is not None and next_id == eos:
                        finish[row] = "stop"
                        continue
                    if params.logprobs:
                        tokens[row].append(self._token_logprob(logits[position], next_id,
                                                               params))
                    produced[row].append(next_id)
                    text = self.tokenizer.decode(produced[row], skip_special_tokens=True)
                    stops = [s for s in params.stop if s and s in text]
                    if stops:
                        text = text[:min(text.index(s) for s in stops)]
                        finish[row] = "stop"
                    texts[row] = text
                    if not stops:
                        still.append(position)
                        step.append(next_id)
                if not still or step_index == params.max_tokens - 1:
                    break   # nothing left to draw: no pass for logits nobody reads
                if len(still) < len(active):
                    # finished samples leave the batch: the next passes run the others only
                    # (each row's computation is its own, so this changes no sample)
                    past.batch_select_indices(torch.tensor(still, device=self.device))
                    active = [active[position] for position in still]
                outputs = self.net(input_ids=torch.tensor(step, device=self.device)[:, None],
                                   use_cache=True, **{self._cache_kw: past})
                past = self._cache_of(outputs)
                logits = outputs.logits[:, -1].float().cpu()
        return [Generation(texts[row], tuple(tokens[row]) if params.logprobs else None,
                           finish[row]) for row in range(n)]

    def _token_logprob(self, logits, token: int, params: GenerateParams) -> TokenLogprob:
        torch = self._torch
        logp = torch.log_softmax(logits, dim=-1)
        top = []
        if params.top_logprobs:
            vals, idx = torch.topk(logp, min(params.top_logprobs, logp.numel()))
            top = [(self.tokenizer.decode([int(j)]), float(v)) for v, j in zip(vals, idx)]
        return TokenLogprob(self.tokenizer.decode([token]), float(logp[token]), tuple(top))

    def _choose(self, logits, params: GenerateParams, gen) -> int:
        torch = self._torch
        if params.temperature <= 0:
            return int(torch.argmax(logits))
        probs = torch.softmax(logits / params.temperature, dim=-1)
        if params.top_p < 1.0:
            sorted_p, order = torch.sort(probs, descending=True)
            keep = torch.cumsum(sorted_p, 0) - sorted_p < params.top_p
            probs = torch.zeros_like(probs).scatter(0, order[keep], sorted_p[keep])
            probs = probs / probs.sum()
        return int(torch.multinomial(probs, 1, generator=gen))

    async def _generate(self, messages, params, n):
        prompt, extra = self.encode(messages)
        self._check_length(prompt, params.max_tokens)
        if not self.kv_reuse:   # one sample at a time (the reference the batches equal)
            return await self._in_worker(
                lambda: [self._sample(prompt, params, i, extra) for i in range(n)])
        size = self.sample_batch_size

        def batches() -> list[Generation]:
            out: list[Generation] = []
            for start in range(0, n, size):
                out.extend(self._sample_batch(prompt, params,
                                              list(range(start, min(n, start + size))), extra))
            return out

        return await self._in_worker(batches)

    async def _in_worker(self, fn, *args):
        """``fn(*args)`` on the backend's own worker thread, one call at a time: the event loop
        stays free, and torch always runs on the same thread (a fresh thread per call, as
        ``asyncio.to_thread`` gives under a new event loop, cost ~50 ms of thread set-up per
        call on the embedded model)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._worker(), self._locked, fn, *args)

    def _worker(self):
        if self._executor is None:
            from concurrent.futures import ThreadPoolExecutor

            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="confeval-hf")
        return self._executor

    def _locked(self, fn, *args):
        with self._lock:
            return fn(*args)


_PACKABLE_MODELS = frozenset({"llama", "mistral", "qwen2", "qwen3"})
"""Model families whose forward pass applies a custom 4-D attention mask and explicit position
ids as given (checked against the shared-prefix path on the embedded Llama model)."""

_PASS_TOKENS = 384
"""The most tokens a forward pass shared by several questions holds (:meth:`HFBackend.
token_scores_many`): on the embedded model on CPU a pass of one question (~55 tokens) costs
~30% more per token than one of 200-500 tokens, while the attention over a longer row (its mask
is dense) starts to cost more than it saves."""

_PACK_TOKENS = 4096
"""The longest packed sequence (prompt + every continuation): beyond it the (length x length)
mask and attention cost more than the passes they replace."""


def _packed_length(prompt, continuations, suffix, attention: bool = True) -> int:
    """Tokens of a question packed alone: its prompt, then each continuation + suffix (with
    ``attention``), else each continuation but its last token (:meth:`HFBackend._packed_pass`
    reads no more)."""
    if not attention:
        return len(prompt) + sum(max(0, len(c) - 1) for c in continuations)
    return len(prompt) + sum(len(c) + len(suffix) for c in continuations)


def _common_prefix(prompts) -> int:
    """How many tokens begin every prompt alike, leaving at least one token of each (its last
    position predicts the continuations' first tokens)."""
    shortest = min(len(p) for p in prompts)
    first = prompts[0]
    shared = 0
    while shared < shortest - 1 and all(p[shared] == first[shared] for p in prompts):
        shared += 1
    return shared


def default_threads() -> int:
    """Threads for torch's matrix products when none are asked for: ``OMP_NUM_THREADS`` where
    set, else the usable cores not already busy by the 1-minute load average (at least 1). A
    small model's passes gain little from a second thread and lose a lot when that thread must
    wait for a busy core: two threads on a loaded 2-core machine made one question take 8-22 s
    instead of 1.1 s with one (issue 41)."""
    import os

    from .._threads import usable_cores

    value = os.environ.get("OMP_NUM_THREADS", "").strip()
    if value.isdigit() and int(value) > 0:
        return int(value)
    cores = usable_cores()
    try:
        busy = os.getloadavg()[0]
    except (AttributeError, OSError):   # no load average on this system
        return cores
    return max(1, min(cores, int(cores - busy + 0.5)))


def set_threads(threads: int | None = None) -> int:
    """Set torch's intra-op threads to ``threads`` (default :func:`default_threads`) for the
    whole process, and return the count."""
    import torch

    count = default_threads() if threads is None else int(threads)
    if count < 1:
        raise ValueError("threads must be at least 1")
    if torch.get_num_threads() != count:
        torch.set_num_threads(count)
    return count


def _attention_rows(result, row: int, readout: int, start: int, length: int):
    """The attention that query ``readout`` of batch row ``row`` pays to keys
    ``start .. start + length`` in every layer and head: one tuple per (layer, head)."""
    import torch

    heads = torch.cat([layer[row, :, readout, start:start + length]
                       for layer in result.attentions]).double().cpu()
    return tuple(tuple(float(v) for v in r) for r in heads.tolist())


def _load_image(part: dict):
    """A PIL image from an image part: data: URL, file:// URL or local path (no web)."""
    import base64
    import io
    from urllib.parse import unquote, urlparse

    from PIL import Image

    url = part.get("image_url", {}).get("url") if part.get("type") == "image_url" \
        else part.get("image") or part.get("url")
    if not isinstance(url, str) or not url:
        raise BackendError("hf: an image part has no url")
    if url.startswith("data:"):
        try:
            payload = base64.b64decode(url.split(",", 1)[1])
        except (IndexError, ValueError) as exc:
            raise BackendError(f"hf: cannot decode an inline image: {exc}") from None
        return Image.open(io.BytesIO(payload)).convert("RGB")
    if url.startswith(("http://", "https://")):
        raise BackendError("hf: images must be inline (data:) or local files; web URLs are not "
                           "fetched")
    path = unquote(urlparse(url).path) if url.startswith("file://") else url
    try:
        return Image.open(path).convert("RGB")
    except OSError as exc:
        raise BackendError(f"hf: cannot open image {path}: {exc}") from None


def _text_of(content: Any) -> str:
    if isinstance(content, list):
        if any(isinstance(p, dict) and p.get("type") in ("image_url", "image") for p in content):
            raise BackendError("hf: image inputs need an image-text model; this backend runs "
                               "causal text models")
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return "" if content is None else str(content)
