"""A model folder's tokenizer read with ``tokenizers`` alone, as transformers reads it.

Companion of :mod:`confeval.backends._llama` (why: start-up without importing transformers).
transformers 5's ``TokenizersBackend`` loads ``tokenizer.json`` into the same ``tokenizers``
object and then adjusts it in some cases: it rewrites the post-processor when
``tokenizer_config.json`` sets ``add_bos_token``/``add_eos_token``, adds special tokens the
file lacks, patches the pre-tokenizer of vocabularies over 100,000 tokens, and cleans up
decoded spaces on non-BPE models. :func:`unsupported_tokenizer_reason` sends every such folder
to transformers; on the rest the two give the same ids and text (tested on the embedded
model's tokenizer and on a trained one, ``tests/backends/test_llama.py``). Chat templates are
rendered by jinja2's sandbox with the settings transformers uses (``trim_blocks``,
``lstrip_blocks``, loop controls, its ``tojson``, ``raise_exception`` and ``strftime_now``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .._untrusted import read_small_json, read_tokenizer_file

__all__ = ["FolderTokenizer", "Unsupported", "unsupported_tokenizer_reason"]

_CLASSES = frozenset({None, "TokenizersBackend", "PreTrainedTokenizerFast", "GPT2Tokenizer",
                      "GPT2TokenizerFast"})
_NAMED = ("bos_token", "eos_token", "unk_token", "pad_token", "sep_token", "cls_token",
          "mask_token")
_MAX_VOCAB = 100_000   # above it transformers may patch the pre-tokenizer (Mistral's regex)
def _token_text(value: Any) -> str | None:
    if isinstance(value, dict):
        value = value.get("content")
    return value if isinstance(value, str) else None


def _chat_template(folder: Path, config: dict) -> str | None:
    path = folder / "chat_template.jinja"
    if path.is_file():
        return path.read_text(encoding="utf-8")
    template = config.get("chat_template")
    return template if isinstance(template, str) else None


class Unsupported(Exception):
    """The folder's tokenizer is one transformers would adjust on load: the reason."""


def unsupported_tokenizer_reason(folder: str | Path) -> str | None:
    """Why transformers must read this folder's tokenizer, or None."""
    try:
        FolderTokenizer(folder)
    except Unsupported as exc:
        return str(exc)
    except (OSError, ValueError) as exc:
        return f"tokenizer files unreadable: {exc}"
    return None


def _check(config: dict, tokenizer, template: str | None) -> None:
    """Raise :class:`Unsupported` where transformers would read the tokenizer otherwise
    (the module's docstring lists the cases)."""
    if config.get("tokenizer_class") not in _CLASSES:
        raise Unsupported(f"tokenizer_class {config.get('tokenizer_class')!r}")
    if "add_bos_token" in config or "add_eos_token" in config:
        raise Unsupported("add_bos_token/add_eos_token set (transformers rewrites the "
                          "post-processor)")
    if not isinstance(config.get("chat_template", ""), str):
        raise Unsupported("several named chat templates")
    if "{% generation" in (template or ""):
        raise Unsupported("a chat template with generation tags")
    if tokenizer.get_vocab_size(with_added_tokens=True) > _MAX_VOCAB:
        raise Unsupported("a vocabulary over 100,000 tokens")
    model = type(tokenizer.model).__name__
    if config.get("clean_up_tokenization_spaces") and model != "BPE":
        raise Unsupported(f"clean_up_tokenization_spaces on a {model} tokenizer")
    added = {t.content for t in tokenizer.get_added_tokens_decoder().values()}
    named = [_token_text(config.get(k)) for k in _NAMED] + [
        _token_text(t) for key in ("additional_special_tokens", "extra_special_tokens")
        for t in (config.get(key) or [])]
    if any(t is not None and t not in added for t in named):
        raise Unsupported("a special token the tokenizer file does not hold")


class FolderTokenizer:
    """The parts of a transformers tokenizer the ``hf:`` backend calls: ``__call__``,
    ``decode``, ``apply_chat_template``, ``chat_template`` and the special token ids.
    Raises :class:`Unsupported` for a folder transformers would read otherwise, ``OSError``
    or ``ValueError`` for one it cannot read."""

    def __init__(self, folder: str | Path) -> None:
        folder = Path(folder)
        self._config = read_small_json(folder / "tokenizer_config.json")
        if not isinstance(self._config, dict):
            raise ValueError(f"{folder / 'tokenizer_config.json'}: not a JSON object")
        self._tokenizer = read_tokenizer_file(folder / "tokenizer.json")
        self.chat_template = _chat_template(folder, self._config)
        _check(self._config, self._tokenizer, self.chat_template)
        self._tokenizer.no_truncation()
        self._tokenizer.no_padding()
        self._tokenizer.encode_special_tokens = bool(self._config.get("split_special_tokens"))
        self._special = {key: _token_text(self._config.get(key)) for key in _NAMED}
        self._template = None

    def _id(self, key: str) -> int | None:
        text = self._special.get(key)
        return None if text is None else self._tokenizer.token_to_id(text)

    @property
    def eos_token_id(self) -> int | None:
        return self._id("eos_token")

    @property
    def pad_token_id(self) -> int | None:
        return self._id("pad_token")

    def __len__(self) -> int:
        return self._tokenizer.get_vocab_size(with_added_tokens=True)

    def __call__(self, text: str, add_special_tokens: bool = True) -> dict:
        return {"input_ids": self._tokenizer.encode(
            text, add_special_tokens=add_special_tokens).ids}

    def decode(self, ids, skip_special_tokens: bool = False) -> str:
        return self._tokenizer.decode(list(ids), skip_special_tokens=skip_special_tokens)

    def apply_chat_template(self, messages, add_generation_prompt: bool = False,
                            tokenize: bool = True):
        """The template rendered with the messages and the special tokens (as
        transformers passes them), then tokenised without adding special tokens."""
        if self.chat_template is None:
            raise ValueError("this tokenizer has no chat template")
        if self._template is None:
            self._template = _compile(self.chat_template)
        text = self._template.render(messages=list(messages),
                                     add_generation_prompt=add_generation_prompt,
                                     **{k: v for k, v in self._special.items() if v is not None})
        return self(text, add_special_tokens=False)["input_ids"] if tokenize else text


def _compile(template: str):
    """jinja2's immutable sandbox with the options and helpers transformers gives templates."""
    from datetime import datetime

    import jinja2
    import jinja2.ext
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                          sort_keys=sort_keys)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
    return env.from_string(template)
