"""A BERT encoder of our own for the sentence embeddings of the black-box measures.

Why: the default encoder (all-MiniLM-L6-v2, :mod:`confeval.measures.semantic`) is a 6-layer
BERT, and loading it with transformers imports transformers (~3 s on a 2-core CPU), which
made ``confeval measures run`` start that much later than the other live runs; the Llama
models had the same cost (:mod:`confeval.backends._llama`). This module needs torch,
``safetensors`` and ``tokenizers`` only.

Each operation mirrors transformers 5's ``BertModel`` (``modeling_bert``) in the same order:
word + token-type + position embeddings, layer norm; per layer, SDPA over the padding mask
(no mask when nothing is padded), the output projection and a post-norm residual, the GELU
feed-forward and a post-norm residual. The tokenizer is ``tokenizer.json`` with truncation
to ``max_length`` and padding to the longest text, as transformers' ``BertTokenizer`` applies
them. The embeddings agree with transformers' to float32 rounding
(``tests/measures/test_bert.py``). :func:`unsupported_encoder_reason` sends any other folder
to transformers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .._untrusted import (
    config_count,
    read_safetensors,
    read_small_json,
    read_tokenizer_file,
)

__all__ = ["BertEncoder", "unsupported_encoder_reason"]

_TOKENIZER_CLASSES = frozenset({None, "BertTokenizer", "BertTokenizerFast"})
_MAX_VOCAB = 100_000


def _configs(folder: Path) -> tuple[dict, dict]:
    config = read_small_json(folder / "config.json")
    tokenizer = read_small_json(folder / "tokenizer_config.json")
    if not isinstance(config, dict) or not isinstance(tokenizer, dict):
        raise ValueError(f"{folder}: config.json or tokenizer_config.json is not an object")
    return config, tokenizer


def unsupported_encoder_reason(folder: str | Path) -> str | None:
    """Why this folder's encoder must be loaded with transformers, or None."""
    folder = Path(folder)
    try:
        config, tok = _configs(folder)
    except (OSError, ValueError) as exc:
        return f"configs unreadable: {exc}"
    checks = [
        (config.get("model_type") == "bert", f"model_type {config.get('model_type')!r}"),
        (config.get("architectures", ["BertModel"]) == ["BertModel"],
         f"architectures {config.get('architectures')!r}"),
        (config.get("hidden_act", "gelu") == "gelu", f"hidden_act {config.get('hidden_act')!r}"),
        (config.get("position_embedding_type", "absolute") == "absolute",
         "relative position embeddings"),
        (not config.get("is_decoder") and not config.get("add_cross_attention"), "a decoder"),
        ((config.get("dtype") or config.get("torch_dtype") or "float32") == "float32",
         "not float32"),
        ((folder / "model.safetensors").is_file(), "no model.safetensors"),
        ((folder / "tokenizer.json").is_file(), "no tokenizer.json"),
        (tok.get("tokenizer_class") in _TOKENIZER_CLASSES,
         f"tokenizer_class {tok.get('tokenizer_class')!r}"),
    ]
    for ok, reason in checks:
        if not ok:
            return reason
    try:
        _checked_tokenizer(folder, tok)
    except ValueError as exc:
        return str(exc)
    return None


def _checked_tokenizer(folder: Path, config: dict):
    """``tokenizer.json``, checked to be what transformers' ``BertTokenizer`` builds from the
    config's casing options (it builds its normaliser from them)."""
    tokenizer = read_tokenizer_file(folder / "tokenizer.json")
    if tokenizer.get_vocab_size(with_added_tokens=True) > _MAX_VOCAB:
        raise ValueError("a vocabulary over 100,000 tokens")
    normalizer = tokenizer.normalizer
    if type(normalizer).__name__ != "BertNormalizer":
        raise ValueError("a normaliser other than BERT's")
    wanted = {"lowercase": config.get("do_lower_case", True),
              "strip_accents": config.get("strip_accents"),
              "handle_chinese_chars": config.get("tokenize_chinese_chars", True)}
    if any(getattr(normalizer, key) != value for key, value in wanted.items()):
        raise ValueError("tokenizer.json's normaliser differs from the config's casing options")
    return tokenizer


class BertEncoder:
    """Last hidden states of a BERT folder (see the module's docstring)."""

    def __init__(self, folder: str | Path) -> None:
        import torch

        folder = Path(folder)
        config, tok = _configs(folder)
        self.tokenizer = _checked_tokenizer(folder, tok)
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()
        self.pad_id = self.tokenizer.token_to_id(str(tok.get("pad_token", "[PAD]")))
        self.pad_id = int(config.get("pad_token_id") or 0) if self.pad_id is None else \
            self.pad_id
        self.layers = config_count(config, "num_hidden_layers", 256)
        self.heads = config_count(config, "num_attention_heads", 1024)
        self.hidden_size = config_count(config, "hidden_size", 1 << 16)
        if self.hidden_size % self.heads:
            raise ValueError(f"config.json: hidden_size {self.hidden_size} is not a multiple "
                             f"of {self.heads} heads")
        self.positions = config_count(config, "max_position_embeddings", 1 << 16)
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        weights = read_safetensors(folder / "model.safetensors")
        # checkpoints saved from BertForX carry a "bert." prefix
        self.w = {k.removeprefix("bert."): v.to(torch.float32) for k, v in weights.items()}
        missing = [n for n in self._names() if n not in self.w]
        if missing:
            raise ValueError(f"{folder}: the weights lack {missing[0]} (+{len(missing) - 1})")

    def _names(self) -> list[str]:
        per_layer = [f"{part}.{kind}" for part in (
            "attention.self.query", "attention.self.key", "attention.self.value",
            "attention.output.dense", "attention.output.LayerNorm", "intermediate.dense",
            "output.dense", "output.LayerNorm") for kind in ("weight", "bias")]
        return ["embeddings.word_embeddings.weight", "embeddings.position_embeddings.weight",
                "embeddings.token_type_embeddings.weight", "embeddings.LayerNorm.weight",
                "embeddings.LayerNorm.bias"] + [f"encoder.layer.{i}.{n}"
                                                for i in range(self.layers) for n in per_layer]

    def tokenize(self, texts: list[str], max_length: int) -> tuple[Any, Any]:
        """Token ids and attention mask, (texts, longest) each: truncated to ``max_length``
        tokens with the special ones (and never past the model's position embeddings, where
        transformers' model would fail), padded on the right to the longest."""
        import torch

        self.tokenizer.enable_truncation(max_length=min(max_length, self.positions))
        try:
            encoded = self.tokenizer.encode_batch(list(texts))
        finally:
            self.tokenizer.no_truncation()
        width = max(len(e.ids) for e in encoded)
        ids = torch.full((len(encoded), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(encoded), width), dtype=torch.long)
        for row, e in enumerate(encoded):
            ids[row, :len(e.ids)] = torch.tensor(e.ids, dtype=torch.long)
            mask[row, :len(e.ids)] = 1
        return ids, mask

    def __call__(self, ids, mask):
        """The last hidden states, (texts, tokens, hidden size)."""
        import torch
        import torch.nn.functional as F

        w = self.w
        batch, length = ids.shape
        positions = torch.arange(length).unsqueeze(0)
        hidden = F.embedding(ids, w["embeddings.word_embeddings.weight"]) + \
            F.embedding(torch.zeros_like(ids), w["embeddings.token_type_embeddings.weight"])
        hidden = hidden + F.embedding(positions, w["embeddings.position_embeddings.weight"])
        hidden = self._norm(hidden, "embeddings.LayerNorm")
        # nothing padded: no mask (as transformers passes none); else each query sees the
        # real keys of its text
        attend = None if bool(mask.all()) else \
            mask[:, None, None, :].bool().expand(batch, 1, length, length)
        dim = self.hidden_size // self.heads
        for i in range(self.layers):
            p = f"encoder.layer.{i}."
            shape = (batch, length, -1, dim)
            q, k, v = (F.linear(hidden, w[p + f"attention.self.{n}.weight"],
                                w[p + f"attention.self.{n}.bias"]).view(shape).transpose(1, 2)
                       for n in ("query", "key", "value"))
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=attend, dropout_p=0.0,
                                                 scale=dim ** -0.5, is_causal=False)
            out = out.reshape(batch, -1, length, dim).transpose(1, 2).contiguous()
            out = out.reshape(batch, length, -1).contiguous()
            out = F.linear(out, w[p + "attention.output.dense.weight"],
                           w[p + "attention.output.dense.bias"])
            hidden = self._norm(out + hidden, p + "attention.output.LayerNorm")
            inner = F.gelu(F.linear(hidden, w[p + "intermediate.dense.weight"],
                                    w[p + "intermediate.dense.bias"]))
            out = F.linear(inner, w[p + "output.dense.weight"], w[p + "output.dense.bias"])
            hidden = self._norm(out + hidden, p + "output.LayerNorm")
        return hidden

    def _norm(self, x, name: str):
        import torch.nn.functional as F

        return F.layer_norm(x, (x.shape[-1],), self.w[name + ".weight"], self.w[name + ".bias"],
                            self.eps)
