"""``hf:`` — causal language models in-process with transformers (the ``local`` extra).

* **Scoring** is exact: the prompt (the chat template with the generation prompt appended) and
  each continuation are tokenised separately and concatenated, so the continuation's tokens are
  exactly its own; the log-probabilities of those tokens are summed. Continuations are scored
  in right-padded batches of ``batch_size``.
* **Generation** is our own token loop over the model's KV cache, so sampling draws from a
  ``torch.Generator`` seeded with ``seed + sample_index`` — reproducible, and no global RNG is
  touched. ``temperature = 0`` is greedy. Reported log-probabilities (and the top-k
  alternatives) are those of the model's distribution at temperature 1, as OpenAI-compatible
  servers report them; tokens are the decoded strings of single token ids.
* Models load with ``local_files_only`` (nothing is downloaded at run time). The identity used
  in cache keys is the path plus a fingerprint of the config and weights, so changed weights
  never reuse stale answers.

Work runs in a worker thread, one call at a time, so the event loop stays responsive.
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .base import Backend, BackendError, GenerateParams, Generation, TokenLogprob

__all__ = ["HFBackend"]


def _import_torch():
    try:
        import torch
        import transformers
    except ImportError as exc:
        raise BackendError("the hf/local backends need the 'local' extra: "
                           "pip install 'confeval[local]'") from exc
    return torch, transformers


class HFBackend(Backend):
    kind = "hf"

    def __init__(self, path: str | Path, *, device: str = "cpu", batch_size: int = 8,
                 model: Any = None, tokenizer: Any = None, name: str | None = None) -> None:
        super().__init__(name or str(path))
        torch, transformers = _import_torch()
        self._torch = torch
        try:
            self.tokenizer = tokenizer or transformers.AutoTokenizer.from_pretrained(
                str(path), local_files_only=True)
            self.net = model or transformers.AutoModelForCausalLM.from_pretrained(
                str(path), local_files_only=True)
        except (OSError, ValueError) as exc:
            raise BackendError(f"hf: cannot load a causal LM from {path}: {exc}") from None
        self.net.to(device).eval()
        self.device = device
        self.batch_size = max(1, int(batch_size))
        self.capabilities = frozenset({"generate", "logprobs", "score"})
        self._lock = threading.Lock()
        self._fingerprint = self._make_fingerprint()

    # ------------------------------------------------------------------ identity
    def _make_fingerprint(self) -> str:
        h = hashlib.sha256(self.net.config.to_json_string().encode())
        with self._torch.no_grad():
            for name, p in sorted(self.net.state_dict().items()):
                h.update(name.encode())
                h.update(repr((tuple(p.shape), float(p.double().sum()))).encode())
        return h.hexdigest()[:16]

    def identity(self) -> dict[str, Any]:
        return {"kind": self.kind, "model": self.model, "fingerprint": self._fingerprint}

    # ------------------------------------------------------------------ prompts
    def prompt_ids(self, messages: Sequence[dict]) -> list[int]:
        """Token ids of the chat prompt, ending where the assistant's reply begins."""
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
    def score_ids(self, prompt: list[int], continuations: list[list[int]]) -> list[float]:
        """Sum of log P(continuation tokens | prompt), exact, batched.

        Single-token continuations (option letters, score digits) are read from one forward
        pass of the prompt; longer ones are scored in right-padded batches.
        """
        torch = self._torch
        out: list[float | None] = [None] * len(continuations)
        single = [i for i, c in enumerate(continuations) if len(c) <= 1]
        if single:
            with torch.no_grad():
                logits = self.net(input_ids=torch.tensor([prompt], device=self.device)).logits
            last = torch.log_softmax(logits[0, -1].double(), dim=-1).cpu()
            for i in single:
                c = continuations[i]
                out[i] = float(last[c[0]]) if c else 0.0
        multi = [i for i, c in enumerate(continuations) if len(c) > 1]
        for i, value in zip(multi, self._score_batched(prompt, [continuations[i]
                                                                for i in multi])):
            out[i] = value
        return [float(v) for v in out]

    def _score_batched(self, prompt: list[int], continuations: list[list[int]]) -> list[float]:
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
                                  attention_mask=mask.to(self.device)).logits.float()
            logp = torch.log_softmax(logits, dim=-1).cpu()
            for i, c in enumerate(chunk):
                if not c:
                    out.append(0.0)
                    continue
                pos = torch.arange(len(prompt) - 1, len(prompt) - 1 + len(c))
                out.append(float(logp[i, pos, torch.tensor(c)].double().sum()))
        return out

    async def _score(self, messages, continuations):
        prompt = self.prompt_ids(messages)
        conts = [list(self.tokenizer(c, add_special_tokens=False)["input_ids"])
                 for c in continuations]
        return await asyncio.to_thread(self._locked, self.score_ids, prompt, conts)

    # ------------------------------------------------------------------ generation
    def _sample(self, prompt: list[int], params: GenerateParams, index: int) -> Generation:
        torch = self._torch
        gen = torch.Generator().manual_seed(int(params.seed or 0) + index)
        eos = self.tokenizer.eos_token_id
        ids = torch.tensor([prompt], device=self.device)
        past = None
        produced: list[int] = []
        tokens: list[TokenLogprob] = []
        text, finish = "", "length"
        with torch.no_grad():
            for _ in range(params.max_tokens):
                outputs = self.net(input_ids=ids, past_key_values=past, use_cache=True)
                past = outputs.past_key_values
                logits = outputs.logits[0, -1].float().cpu()
                logp = torch.log_softmax(logits, dim=-1)
                next_id = self._choose(logits, params, gen)
                if params.logprobs:
                    top = []
                    if params.top_logprobs:
                        vals, idx = torch.topk(logp, min(params.top_logprobs, logp.numel()))
                        top = [(self.tokenizer.decode([int(j)]), float(v))
                               for v, j in zip(vals, idx)]
                    tokens.append(TokenLogprob(self.tokenizer.decode([next_id]),
                                               float(logp[next_id]), tuple(top)))
                if eos is not None and next_id == eos:
                    finish = "stop"
                    if params.logprobs:
                        tokens.pop()
                    break
                produced.append(next_id)
                text = self.tokenizer.decode(produced, skip_special_tokens=True)
                if any(s and s in text for s in params.stop):
                    text = text[:min(text.index(s) for s in params.stop if s and s in text)]
                    finish = "stop"
                    break
                ids = torch.tensor([[next_id]], device=self.device)
        return Generation(text, tuple(tokens) if params.logprobs else None, finish)

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
        prompt = self.prompt_ids(messages)
        return await asyncio.to_thread(
            self._locked, lambda: [self._sample(prompt, params, i) for i in range(n)])

    def _locked(self, fn, *args):
        with self._lock:
            return fn(*args)


def _text_of(content: Any) -> str:
    if isinstance(content, list):
        if any(isinstance(p, dict) and p.get("type") in ("image_url", "image") for p in content):
            raise BackendError("hf: image inputs need an image-text model; this backend runs "
                               "causal text models")
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return "" if content is None else str(content)
