"""Model backends behind one async protocol, plus a response cache.

``get_backend(spec)`` understands:

* ``openai:MODEL`` — an OpenAI-compatible endpoint (``base_urls=`` for vLLM/SGLang/llama.cpp);
* ``hf:PATH_OR_NAME`` — in-process, on our own Llama forward pass or on transformers (the
  ``local`` extra; ``engine=`` chooses, see :data:`confeval.backends.hf.ENGINES`);
* ``local`` (or no model at all) — the embedded SmolLM2-135M-Instruct (the ``local`` extra);
* ``replay:RUN_DIR_OR_FILE`` — answers recorded by an earlier ``confeval run``.
"""

from __future__ import annotations

from typing import Any

from .base import (
    CAPABILITIES,
    Backend,
    BackendError,
    CapabilityError,
    GenerateParams,
    Generation,
    ImagesRefused,
    PromptTooLong,
    TokenLogprob,
    TokenScores,
    is_raw_prompt,
    raw_prompt,
    require,
)
from .cache import CachedBackend, CacheError, ResponseCache, call_key, request_key
from .gathering import GatheringBackend
from .scripted import RecordingBackend, ReplayBackend, ScriptedBackend

__all__ = ["CAPABILITIES", "Backend", "BackendError", "CacheError", "CachedBackend",
           "CapabilityError", "GatheringBackend", "ImagesRefused", "PromptTooLong",
           "GenerateParams", "Generation", "RecordingBackend", "ReplayBackend", "ResponseCache",
           "ScriptedBackend",
           "TokenLogprob", "TokenScores", "call_key", "get_backend", "is_raw_prompt", "raw_prompt",
           "request_key", "require"]


def get_backend(spec: str | None, **options: Any) -> Backend:
    """Build a backend from a ``kind:model`` spec (see the module docstring)."""
    if spec in (None, "", "local"):
        from .local import local_backend

        return local_backend(**_only(options, "device", "batch_size", "threads", "engine"))
    kind, _, target = spec.partition(":")
    if not target:
        raise BackendError(f"model spec {spec!r} must look like openai:MODEL, hf:PATH, "
                           "replay:RUN_DIR or local")
    if kind == "openai":
        from .openai_compat import OpenAIBackend

        return OpenAIBackend(target, **_only(options, "base_urls", "api_key_env",
                                             "concurrency", "max_retries", "timeout"))
    if kind == "hf":
        from .hf import HFBackend

        return HFBackend(target, **_only(options, "device", "batch_size", "threads", "engine"))
    if kind == "replay":
        return ReplayBackend(target)
    raise BackendError(f"unknown backend {kind!r} in {spec!r}; use openai:, hf:, replay: or "
                       "local")


def _only(options: dict[str, Any], *names: str) -> dict[str, Any]:
    return {k: v for k, v in options.items() if k in names and v is not None}
