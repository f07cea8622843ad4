"""``openai:`` — any OpenAI-compatible chat endpoint (OpenAI, vLLM, SGLang, llama.cpp server).

Built on the official ``openai`` client, which retries 408/409/429/5xx responses, timeouts and
dropped connections with exponential backoff and honours ``Retry-After`` /
``Retry-After-Ms`` (up to two minutes); ``max_retries`` and ``timeout`` are passed through.
On top of it this backend adds:

* bounded concurrency (``concurrency`` requests in flight *per endpoint*);
* scale-out: several ``base_urls`` serving the same model; each request goes to the endpoint
  with the fewest requests in flight;
* ``n > 1`` on servers that ignore it: the missing samples are requested again until there are
  ``n``;
* log-probabilities normalised to :class:`~confeval.backends.base.TokenLogprob`, and a clear
  error when a server returns none although they were asked for.

The API key is read from the environment variable ``api_key_env`` (default
``OPENAI_API_KEY``) only; it is not part of the backend identity (so never in cache keys or run
folders) and is masked in every error message. The endpoint URLs are not part of the identity
either: the same model behind different URLs shares its cache.

Continuation scoring (``score``) is not offered: chat endpoints do not return prompt
log-probabilities. Use the ``hf:`` or ``local`` backend for exact scoring.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from typing import Any

from .base import (
    Backend,
    BackendError,
    CapabilityError,
    GenerateParams,
    Generation,
    TokenLogprob,
    redact_url,
)

__all__ = ["OpenAIBackend"]


class OpenAIBackend(Backend):
    """Any OpenAI-compatible chat endpoint (OpenAI, vLLM, SGLang, llama.cpp) through the
    official client: generation with top-k log-probabilities and images; requests spread over
    several ``base_urls`` (fewest in flight first), ``concurrency`` per endpoint, retries by
    the client. No continuation scoring (chat endpoints return no prompt log-probabilities)."""

    kind = "openai"

    def __init__(self, model: str, *, base_urls: Sequence[str] | None = None,
                 api_key_env: str = "OPENAI_API_KEY", concurrency: int = 8,
                 max_retries: int = 5, timeout: float = 120.0, images: bool = True) -> None:
        super().__init__(model)
        try:
            import openai
        except ImportError as exc:  # pragma: no cover - openai is a core dependency
            raise BackendError("the openai package is missing: pip install openai") from exc
        self._openai = openai
        urls = list(base_urls or [None])
        key = os.environ.get(api_key_env)
        if key is None and urls == [None]:
            raise BackendError(f"no API key: set the environment variable {api_key_env} "
                               "(or pass --base-url for a local server)")
        # Local servers accept any key; the client insists on a non-empty one.
        self._key = key or "not-needed"
        self._client_args = [dict(base_url=u, api_key=self._key, max_retries=max_retries,
                                  timeout=timeout) for u in urls]
        self._clients: list = []
        self._loop = None  # clients and semaphores belong to one event loop
        self._urls = [u or "https://api.openai.com/v1" for u in urls]
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.concurrency = concurrency
        self._in_flight = [0] * len(urls)
        self._semaphores: list[asyncio.Semaphore] = []
        self.requests_sent = [0] * len(urls)
        caps = {"generate", "logprobs"} | ({"images"} if images else set())
        self.capabilities = frozenset(caps)

    def describe(self) -> str:
        where = (redact_url(self._urls[0]) if len(self._urls) == 1
                 else f"{len(self._urls)} endpoints")
        return f"openai:{self.model} at {where}"

    def _mask(self, text: str) -> str:
        """An error message without the API key or credentials in a URL."""
        text = text.replace(self._key, "***") if len(self._key) >= 4 else text
        for url in self._urls:
            text = text.replace(url, redact_url(url))
        return text

    def _pick(self) -> int:
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            # A new event loop (e.g. a second asyncio.run): connections of the old one are
            # unusable there, so open fresh clients for this loop.
            self._clients = [self._openai.AsyncOpenAI(**a) for a in self._client_args]
            self._semaphores = [asyncio.Semaphore(self.concurrency) for _ in self._clients]
            self._loop = loop
        return min(range(len(self._clients)), key=lambda i: (self._in_flight[i],
                                                             self.requests_sent[i]))

    async def _request(self, messages: Sequence, params: GenerateParams, n: int):
        i = self._pick()
        self._in_flight[i] += 1
        try:
            async with self._semaphores[i]:
                self.requests_sent[i] += 1
                kwargs: dict[str, Any] = {
                    "model": self.model, "messages": list(messages), "n": n,
                    "max_tokens": params.max_tokens, "temperature": params.temperature,
                    "top_p": params.top_p,
                }
                if params.seed is not None:
                    kwargs["seed"] = params.seed
                if params.stop:
                    kwargs["stop"] = list(params.stop)
                if params.logprobs:
                    kwargs["logprobs"] = True
                    if params.top_logprobs:
                        kwargs["top_logprobs"] = params.top_logprobs
                if params.extra:
                    kwargs["extra_body"] = dict(params.extra)
                return await self._clients[i].chat.completions.create(**kwargs)
        except self._openai.APIStatusError as exc:
            raise BackendError(self._mask(f"{self._urls[i]}: HTTP {exc.status_code}: "
                                          f"{exc.message}")) from None
        except self._openai.APIError as exc:
            raise BackendError(self._mask(f"{self._urls[i]}: {type(exc).__name__}: "
                                          f"{exc}")) from None
        finally:
            self._in_flight[i] -= 1

    async def _generate(self, messages: Sequence, params: GenerateParams,
                        n: int) -> list[Generation]:
        out: list[Generation] = []
        while len(out) < n:
            response = await self._request(messages, params, n - len(out))
            if not response.choices:
                raise BackendError(f"{self.describe()}: the server returned no choices")
            out.extend(self._convert(choice, params) for choice in response.choices)
        return out[:n]

    def _convert(self, choice, params: GenerateParams) -> Generation:
        text = choice.message.content or ""
        tokens = None
        if params.logprobs:
            content = getattr(choice.logprobs, "content", None) if choice.logprobs else None
            if not content:
                what = ("score-token logprobs need top_logprobs"
                        if params.top_logprobs else "token logprobs were requested")
                raise CapabilityError(f"{what}; this server ({self.describe()}) returned none")
            tokens = tuple(
                TokenLogprob(t.token, float(t.logprob),
                             tuple((a.token, float(a.logprob)) for a in (t.top_logprobs or ())))
                for t in content)
            if params.top_logprobs and not any(t.top for t in tokens):
                raise CapabilityError(f"score-token logprobs need top_logprobs; this server "
                                      f"({self.describe()}) returned none")
        return Generation(text, tokens, choice.finish_reason)

    async def aclose(self) -> None:
        if self._loop is asyncio.get_running_loop():
            for client in self._clients:
                await client.close()
        self._clients, self._loop = [], None
