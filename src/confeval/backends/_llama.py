"""A Llama forward pass of our own, for the ``hf:`` backend's start-up.

Why our own: importing transformers and building its model costs ~3-4 s on a 2-core CPU
(``torch.distributed.tensor``, ``torch._dynamo`` and a scan of every model folder, pulled in by
its model classes), which is more than the rest of a live run's start-up together (issue 41:
start-up to the first forward pass <= 3 s with the model exported). The passes the backend runs
on a Llama checkpoint need only torch, ``safetensors`` and ``tokenizers``
(:mod:`confeval.backends._tokenizer`). transformers stays the engine for every other model and
for the one-time GGUF export.

Each operation mirrors transformers' ``modeling_llama`` (5.x) in the same order and dtype — the
RMS norm in float32, rotary embeddings from float32 inverse frequencies, SDPA with the same
grouped-query handling and masks, eager attention (when attention weights are asked for) with a
float32 softmax — so the two engines agree to float32 rounding; the tests compare them pass by
pass (``tests/backends/test_llama.py``).

Supported (:func:`unsupported_reason` says why anything else goes to transformers): a
``LlamaForCausalLM`` text model, SiLU, the default rotary embedding (no ``rope_scaling``), no
sliding window, float32/bfloat16/float16 weights in ``model.safetensors`` (or shards with an
index), and a tokenizer :mod:`~confeval.backends._tokenizer` reads as transformers does.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._untrusted import config_count, read_safetensors, read_small_json
from ._tokenizer import unsupported_tokenizer_reason

__all__ = ["LlamaEngine", "KVCache", "unsupported_model_reason", "unsupported_reason"]

_DTYPES = ("float32", "bfloat16", "float16")


def _read_config(folder: Path) -> dict:
    config = read_small_json(folder / "config.json")
    if not isinstance(config, dict):
        raise ValueError(f"{folder / 'config.json'}: not a JSON object")
    return config


def _rope(config: dict) -> tuple[str | None, float]:
    """(rope type, theta) from the 5.x ``rope_parameters`` or the 4.x ``rope_theta`` /
    ``rope_scaling`` keys; any ``rope_scaling`` present names the type (transformers reads
    a 4.x scaling into the 5.x parameters)."""
    params = config.get("rope_parameters")
    params = params if isinstance(params, dict) else {}
    scaling = config.get("rope_scaling")
    if scaling is not None:
        kind = (scaling.get("rope_type") or scaling.get("type")) if isinstance(scaling, dict) \
            else None
    else:
        kind = params.get("rope_type", "default")
    theta = params.get("rope_theta", config.get("rope_theta", 10000.0))
    return kind, float(theta)


def _weight_files(folder: Path) -> list[Path] | None:
    single = folder / "model.safetensors"
    if single.is_file():
        return [single]
    index = folder / "model.safetensors.index.json"
    if index.is_file():
        with open(index, encoding="utf-8") as handle:
            weight_map = json.load(handle).get("weight_map")
        if isinstance(weight_map, dict) and weight_map:
            names = sorted(set(map(str, weight_map.values())))
            if all("/" not in n and "\\" not in n and n not in (".", "..") for n in names):
                return [folder / n for n in names]
    return None


def unsupported_reason(folder: str | Path) -> str | None:
    """Why the folder's model or tokenizer must run on transformers, or None when this
    engine and :class:`~confeval.backends._tokenizer.FolderTokenizer` run them."""
    return unsupported_model_reason(folder) or unsupported_tokenizer_reason(folder)


def unsupported_model_reason(folder: str | Path) -> str | None:
    """Why the folder's model must run on transformers (its tokenizer aside), or None."""
    folder = Path(folder)
    try:
        config = _read_config(folder)
    except (OSError, ValueError) as exc:
        return f"config.json unreadable: {exc}"
    try:
        checks = [
            (config.get("model_type") == "llama", f"model_type {config.get('model_type')!r}"),
            (config.get("architectures", ["LlamaForCausalLM"]) == ["LlamaForCausalLM"],
             f"architectures {config.get('architectures')!r}"),
            (config.get("vision_config") is None, "an image-text model"),
            (config.get("hidden_act", "silu") == "silu",
             f"hidden_act {config.get('hidden_act')!r}"),
            (_rope(config)[0] == "default", f"rope {_rope(config)[0]!r}"),
            (not config.get("sliding_window"), "a sliding window"),
            (not config.get("attention_bias") and not config.get("mlp_bias"), "biases"),
            (int(config.get("pretraining_tp", 1) or 1) == 1, "pretraining_tp > 1"),
            ((config.get("dtype") or config.get("torch_dtype") or "float32") in _DTYPES,
             f"dtype {config.get('dtype') or config.get('torch_dtype')!r}"),
            (_weight_files(folder) is not None, "no safetensors weights"),
        ]
    except (TypeError, ValueError, AttributeError, OSError) as exc:
        return f"config.json not understood: {exc}"
    for ok, reason in checks:
        if not ok:
            return reason
    return None


class _Config:
    """The config.json values the backend reads from ``net.config``, as attributes (only
    those: a key of the file never shadows a method or another attribute)."""

    READ = ("model_type", "max_position_embeddings", "sliding_window", "vocab_size",
            "hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads")

    def __init__(self, raw: dict) -> None:
        self._raw = dict(raw)
        for key in self.READ:
            setattr(self, key, raw.get(key))
        self._attn_implementation = "sdpa"

    def to_json_string(self) -> str:
        return json.dumps(self._raw, sort_keys=True)


class KVCache:
    """Per-layer keys and values, (batch, kv heads, positions, head dim), grown along the
    positions as transformers' ``DynamicCache`` grows them (concatenation)."""

    def __init__(self, layers: int) -> None:
        self.keys: list[Any] = [None] * layers
        self.values: list[Any] = [None] * layers

    def get_seq_length(self) -> int:
        return 0 if self.keys[0] is None else int(self.keys[0].shape[-2])

    def update(self, layer: int, keys, values):
        import torch

        if self.keys[layer] is None:
            self.keys[layer], self.values[layer] = keys, values
        else:
            self.keys[layer] = torch.cat([self.keys[layer], keys], dim=-2)
            self.values[layer] = torch.cat([self.values[layer], values], dim=-2)
        return self.keys[layer], self.values[layer]

    def batch_repeat_interleave(self, repeats: int) -> None:
        self.keys = [k.repeat_interleave(repeats, dim=0) for k in self.keys]
        self.values = [v.repeat_interleave(repeats, dim=0) for v in self.values]

    def batch_select_indices(self, indices) -> None:
        self.keys = [k[indices, ...] for k in self.keys]
        self.values = [v[indices, ...] for v in self.values]


@dataclass
class Output:
    """What the backend reads of a pass: logits, the cache, attention weights per layer."""

    logits: Any
    cache: KVCache | None = None
    attentions: tuple | None = None


class LlamaEngine:
    """A ``LlamaForCausalLM`` checkpoint run by plain torch functions (see the module's
    docstring); called like transformers' model with the arguments the backend passes."""

    def __init__(self, folder: str | Path) -> None:
        import torch

        folder = Path(folder)
        raw = _read_config(folder)
        self.config = _Config(raw)
        self.dtype = getattr(torch, raw.get("dtype") or raw.get("torch_dtype") or "float32")
        self.layers = config_count(raw, "num_hidden_layers", 1024)
        self.heads = config_count(raw, "num_attention_heads", 4096)
        self.kv_heads = config_count(raw, "num_key_value_heads", self.heads, self.heads)
        hidden = config_count(raw, "hidden_size", 1 << 20)
        self.head_dim = config_count(raw, "head_dim", 1 << 16, hidden // self.heads or None)
        if self.heads % self.kv_heads:
            raise ValueError(f"config.json: {self.heads} attention heads do not share "
                             f"{self.kv_heads} key/value heads evenly")
        self.groups = self.heads // self.kv_heads
        self.scaling = self.head_dim ** -0.5
        self.eps = float(raw.get("rms_norm_eps", 1e-6))
        self.weights = self._load(folder, raw)
        base = _rope(raw)[1]
        self.inv_freq = 1.0 / (base ** (torch.arange(0, self.head_dim, 2, dtype=torch.float)
                                        / self.head_dim))

    def _load(self, folder: Path, raw: dict) -> dict:
        weights: dict = {}
        for path in _weight_files(folder) or []:
            weights.update(read_safetensors(path))
        weights = {name: tensor.to(self.dtype) for name, tensor in weights.items()}
        # tied as transformers ties them (LlamaConfig's default: not tied); an untied model
        # without its output layer is refused rather than given a random one
        if raw.get("tie_word_embeddings", False) and "model.embed_tokens.weight" in weights:
            weights["lm_head.weight"] = weights["model.embed_tokens.weight"]
        missing = [n for n in self._names() if n not in weights]
        if missing:
            raise ValueError(f"{folder}: the weights lack {missing[0]} (+{len(missing) - 1})")
        return weights

    def _names(self) -> list[str]:
        per_layer = ["input_layernorm.weight", "post_attention_layernorm.weight",
                     "self_attn.q_proj.weight", "self_attn.k_proj.weight",
                     "self_attn.v_proj.weight", "self_attn.o_proj.weight",
                     "mlp.gate_proj.weight", "mlp.up_proj.weight", "mlp.down_proj.weight"]
        return ["model.embed_tokens.weight", "model.norm.weight", "lm_head.weight"] + [
            f"model.layers.{i}.{name}" for i in range(self.layers) for name in per_layer]

    # -- what the backend calls besides the pass, as on a transformers model
    def to(self, device: str) -> LlamaEngine:
        self.weights = {k: v.to(device) for k, v in self.weights.items()}
        self.inv_freq = self.inv_freq.to(device)
        return self

    def eval(self) -> LlamaEngine:
        return self

    def state_dict(self) -> dict:
        return dict(self.weights)

    def set_attn_implementation(self, name: str) -> None:
        if name not in ("sdpa", "eager"):
            raise ValueError(f"attention {name!r}: this engine runs sdpa or eager")
        self.config._attn_implementation = name

    def __call__(self, **kwargs) -> Output:
        return self.forward(**kwargs)

    # -- the pass
    def forward(self, input_ids, attention_mask=None, position_ids=None, cache=None,
                use_cache=None, output_attentions=False, logits_to_keep=0) -> Output:
        import torch
        import torch.nn.functional as F

        w = self.weights
        batch, length = input_ids.shape
        hidden = F.embedding(input_ids, w["model.embed_tokens.weight"])
        if use_cache and cache is None:
            cache = KVCache(self.layers)
        past = cache.get_seq_length() if cache is not None else 0
        if position_ids is None:
            position_ids = (torch.arange(length, device=hidden.device) + past).unsqueeze(0)
        eager = self.config._attn_implementation == "eager"
        mask = self._mask(attention_mask, batch, length, past, hidden, eager)
        cos, sin = self._rotary(position_ids, hidden.dtype)
        attentions = []
        for i in range(self.layers):
            p = f"model.layers.{i}."
            residual = hidden
            hidden = self._norm(hidden, w[p + "input_layernorm.weight"])
            out, weights = self._attention(hidden, p, cos, sin, mask, cache, i, eager)
            hidden = residual + out
            if output_attentions:
                attentions.append(weights)
            residual = hidden
            hidden = self._norm(hidden, w[p + "post_attention_layernorm.weight"])
            hidden = F.linear(F.silu(F.linear(hidden, w[p + "mlp.gate_proj.weight"]))
                              * F.linear(hidden, w[p + "mlp.up_proj.weight"]),
                              w[p + "mlp.down_proj.weight"])
            hidden = residual + hidden
        hidden = self._norm(hidden, w["model.norm.weight"])
        keep = slice(-logits_to_keep, None) if isinstance(logits_to_keep, int) \
            else logits_to_keep
        logits = F.linear(hidden[:, keep, :], w["lm_head.weight"])
        return Output(logits, cache, tuple(attentions) if output_attentions else None)

    def _norm(self, hidden, weight):
        import torch

        dtype = hidden.dtype
        hidden = hidden.to(torch.float32)
        variance = hidden.pow(2).mean(-1, keepdim=True)
        hidden = hidden * torch.rsqrt(variance + self.eps)
        return weight * hidden.to(dtype)

    def _rotary(self, position_ids, dtype):
        import torch

        freqs = position_ids[..., None].float() * self.inv_freq.to(dtype=torch.float)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(dtype).unsqueeze(1), emb.sin().to(dtype).unsqueeze(1)

    @staticmethod
    def _rotate_half(x):
        import torch

        half = x.shape[-1] // 2
        return torch.cat((-x[..., half:], x[..., :half]), dim=-1)

    def _mask(self, attention_mask, batch, length, past, hidden, eager):
        """The mask of a pass: a 4-D mask as given; else none where SDPA's causal mode is
        exact (no padding, and no cached prefix under several new positions); else query i
        (at position ``past + i``) sees the keys up to it that the 2-D mask keeps — boolean
        for SDPA, additive for eager attention (as transformers builds them)."""
        import torch

        if attention_mask is not None and attention_mask.dim() == 4:
            return attention_mask
        padded = attention_mask is not None and not bool(attention_mask.all())
        if not eager and not padded and (past == 0 or length == 1):
            return None
        total = past + length
        keys = torch.arange(total, device=hidden.device)
        queries = torch.arange(past, total, device=hidden.device)
        allowed = (keys[None, :] <= queries[:, None])[None, None].expand(batch, 1, length, total)
        if attention_mask is not None:
            allowed = allowed & attention_mask[:, None, None, :total].bool()
        if not eager:
            return allowed
        additive = torch.zeros(allowed.shape, dtype=hidden.dtype, device=hidden.device)
        return additive.masked_fill_(~allowed, torch.finfo(hidden.dtype).min)

    def _attention(self, hidden, p, cos, sin, mask, cache, layer, eager):
        import torch
        import torch.nn.functional as F

        w = self.weights
        batch, length = hidden.shape[:2]
        shape = (batch, length, -1, self.head_dim)
        query = F.linear(hidden, w[p + "self_attn.q_proj.weight"]).view(shape).transpose(1, 2)
        key = F.linear(hidden, w[p + "self_attn.k_proj.weight"]).view(shape).transpose(1, 2)
        value = F.linear(hidden, w[p + "self_attn.v_proj.weight"]).view(shape).transpose(1, 2)
        query = query * cos + self._rotate_half(query) * sin
        key = key * cos + self._rotate_half(key) * sin
        if cache is not None:
            key, value = cache.update(layer, key, value)
        weights = None
        if eager:
            key, value = self._repeat(key), self._repeat(value)
            scores = torch.matmul(query, key.transpose(2, 3)) * self.scaling
            if mask is not None:
                scores = scores + mask
            weights = F.softmax(scores, dim=-1, dtype=torch.float32).to(query.dtype)
            out = torch.matmul(weights, value).transpose(1, 2).contiguous()
        else:
            out = self._sdpa(query, key, value, mask)
        out = out.reshape(batch, length, -1).contiguous()
        return F.linear(out, w[p + "self_attn.o_proj.weight"]), weights

    def _repeat(self, x):
        if self.groups == 1:
            return x
        batch, heads, length, dim = x.shape
        return x[:, :, None, :, :].expand(batch, heads, self.groups, length, dim).reshape(
            batch, heads * self.groups, length, dim)

    def _sdpa(self, query, key, value, mask):
        """SDPA as transformers calls it: grouped-query attention by SDPA itself without a
        mask; one new position with a mask folds the query heads of each key head into one
        head's rows; else the key/value heads repeated."""
        import torch.nn.functional as F

        length = query.shape[2]
        extra = {}
        if self.groups > 1:
            if mask is None and self.head_dim <= 256:
                extra["enable_gqa"] = True
            elif length == 1:
                query = query.reshape(query.shape[0], self.kv_heads, self.groups,
                                      self.head_dim)
            else:
                key, value = self._repeat(key), self._repeat(value)
        out = F.scaled_dot_product_attention(query, key, value, attn_mask=mask, dropout_p=0.0,
                                             scale=self.scaling,
                                             is_causal=length > 1 and mask is None, **extra)
        out = out.reshape(out.shape[0], -1, length, value.shape[-1])
        return out.transpose(1, 2).contiguous()
