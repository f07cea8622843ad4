"""Tiny random-init models built offline for backend tests (no download, a few MB)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

CORPUS = [
    "Reply with the letter of the correct option (A, B, C, D) and nothing else.",
    "What is 12 + 7? A. 19 B. 18 C. 20 D. 91",
    "You answer multiple-choice questions with a single option letter.",
    "system user assistant The capital of France is Paris.",
] * 20

CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}</s>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


def build_tokenizer(folder: Path):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=["</s>", "<pad>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(CORPUS, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="</s>", pad_token="<pad>")
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(folder)
    return fast


def build_tiny_llama(folder: Path, *, seed: int = 0, peak_token: str | None = None,
                     kv_heads: int = 2, heads: int = 2):
    """Save a 2-layer random Llama and its tokenizer to ``folder``; return the folder.

    Weights come from a seeded numpy Generator (the global torch RNG is not used).
    ``peak_token`` biases the output layer so that this token dominates every next-token
    distribution (a peaked model). ``heads`` query heads share ``kv_heads`` key/value heads
    (fewer key/value heads: grouped-query attention, as in the embedded model).
    """
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    folder.mkdir(parents=True, exist_ok=True)
    tok = build_tokenizer(folder)
    config = LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64,
                         num_hidden_layers=2, num_attention_heads=heads,
                         num_key_value_heads=kv_heads,
                         max_position_embeddings=2048, eos_token_id=tok.eos_token_id,
                         pad_token_id=tok.pad_token_id, tie_word_embeddings=False)
    model = LlamaForCausalLM(config)
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for _, p in sorted(model.named_parameters()):
            p.copy_(torch.from_numpy(rng.normal(0, 0.3, size=tuple(p.shape))).to(p.dtype))
        if peak_token is not None:
            # Constant residual stream (same embedding everywhere, attention and MLP outputs
            # zeroed), then one output row aligned with it: that token dominates every step.
            model.model.embed_tokens.weight.fill_(1.0)
            for layer in model.model.layers:
                layer.self_attn.o_proj.weight.zero_()
                layer.mlp.down_proj.weight.zero_()
            model.model.norm.weight.fill_(1.0)
            model.lm_head.weight[tok.convert_tokens_to_ids(peak_token)] = 0.5
    model.save_pretrained(folder)
    return folder


MM_CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{% for c in m['content'] %}"
    "{% if c['type'] == 'image' %}<image>{% else %}{{ c['text'] }}{% endif %}{% endfor %}</s>"
    "{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


def build_tiny_llava(folder: Path, *, seed: int = 0):
    """Save a tiny random LLaVA (CLIP vision tower + 2-layer Llama) with its processor."""
    import torch
    from transformers import (
        CLIPImageProcessor,
        CLIPVisionConfig,
        LlamaConfig,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaProcessor,
    )

    folder.mkdir(parents=True, exist_ok=True)
    tok = build_tokenizer(folder / "_tok")
    tok.add_special_tokens({"additional_special_tokens": ["<image>"]})
    vision = CLIPVisionConfig(hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                              num_attention_heads=2, image_size=28, patch_size=14,
                              projection_dim=16)
    text = LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64,
                       num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=2,
                       max_position_embeddings=2048, eos_token_id=tok.eos_token_id,
                       pad_token_id=tok.pad_token_id)
    config = LlavaConfig(vision_config=vision, text_config=text,
                         image_token_index=tok.convert_tokens_to_ids("<image>"),
                         vision_feature_select_strategy="default", vision_feature_layer=-1)
    model = LlavaForConditionalGeneration(config)
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for _, p in sorted(model.named_parameters()):
            p.copy_(torch.from_numpy(rng.normal(0, 0.3, size=tuple(p.shape))).to(p.dtype))
    images = CLIPImageProcessor(size={"shortest_edge": 28},
                                crop_size={"height": 28, "width": 28})
    processor = LlavaProcessor(image_processor=images, tokenizer=tok, patch_size=14,
                               num_additional_image_tokens=1,  # the CLS token
                               vision_feature_select_strategy="default",
                               chat_template=MM_CHAT_TEMPLATE)
    processor.save_pretrained(folder)
    model.save_pretrained(folder)
    return folder
