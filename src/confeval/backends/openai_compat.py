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

Raw prompts (:func:`~confeval.backends.base.raw_prompt`) go to the legacy ``/v1/completions``
endpoint, which vLLM, SGLang and llama.cpp serve. There, per-token scores of a given
continuation (``score_tokens``) come from ``echo``: the server returns the log-probabilities of
the prompt's own tokens, and the continuation's tokens are those at or after the prompt's end
(by ``text_offset``). When the server tokenises across that boundary (e.g. "(" + "A" as one
token "(A"), the continuation has no tokens of its own and the call fails with a clear error
rather than returning another string's probabilities. Token ids are known only when the server
returns tokens as ``token_id:N`` (vLLM's ``--return-tokens-as-token-ids``). Summed
continuation scoring (``score``) and attention are not offered; use the ``hf:`` or ``local``
backend for exact scoring of chat replies.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Sequence
from typing import Any
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from .base import (
    Backend,
    BackendError,
    CapabilityError,
    GenerateParams,
    Generation,
    ImagesRefused,
    TokenLogprob,
    TokenScores,
    _has_images,
    is_raw_prompt,
    redact_url,
)

__all__ = ["OpenAIBackend"]


def _split_query(url: str | None) -> dict:
    """The client's ``base_url`` and ``default_query``: a query string in ``--base-url``
    (``.../v1?api-key=K``, as Azure-style gateways want) goes with every request instead of
    being glued before the path (``/v1/?api-key=Kchat/completions``)."""
    if url is None:
        return {"base_url": None}
    parts = urlsplit(url)
    if not parts.query:
        return {"base_url": url}
    base = urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
    return {"base_url": base, "default_query": dict(parse_qsl(parts.query,
                                                              keep_blank_values=True))}


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
        self._client_args = [dict(**_split_query(u), api_key=self._key,
                                  max_retries=max_retries, timeout=timeout) for u in urls]
        self._clients: list = []
        self._loop = None  # clients and semaphores belong to one event loop
        self._urls = [u or "https://api.openai.com/v1" for u in urls]
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.concurrency = concurrency
        self._in_flight = [0] * len(urls)
        self._semaphores: list[asyncio.Semaphore] = []
        self._image_probe: asyncio.Future | None = None
        self.requests_sent = [0] * len(urls)
        caps = {"generate", "logprobs", "token_scores"} | ({"images"} if images else set())
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
            self._image_probe = None
            self._loop = loop
        return min(range(len(self._clients)), key=lambda i: (self._in_flight[i],
                                                             self.requests_sent[i]))

    def _kwargs(self, params: GenerateParams, n: int, max_tokens: int) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"model": self.model, "n": n, "max_tokens": max_tokens,
                                  "temperature": params.temperature, "top_p": params.top_p}
        if params.seed is not None:
            kwargs["seed"] = params.seed
        if params.stop:
            kwargs["stop"] = list(params.stop)
        if params.extra:
            kwargs["extra_body"] = dict(params.extra)
        return kwargs

    async def _call(self, make, *, images: bool = False, limited: bool = True):
        """One request through the least busy endpoint: ``make(client)`` returns the call,
        within the endpoint's concurrency unless not ``limited`` (the images probe, which
        must not wait behind the requests that wait for it). A request with ``images`` that
        waited while the server was found to refuse them is not sent."""
        i = self._pick()
        self._in_flight[i] += 1
        try:
            async with self._semaphores[i] if limited else contextlib.nullcontext():
                if images and await self._images_known_refused():
                    raise ImagesRefused(f"{self.describe()} takes no images (found out on an "
                                        "earlier request)")
                self.requests_sent[i] += 1
                response = await make(self._clients[i])
            if getattr(response, "choices", None) is None:
                raise BackendError(self._mask(_not_an_api_answer(self._urls[i], response)))
            return response
        except self._openai.APIStatusError as exc:
            raise BackendError(self._mask(f"{self._urls[i]}: HTTP {exc.status_code}: "
                                          f"{exc.message}")) from None
        except self._openai.APIError as exc:
            raise BackendError(self._mask(f"{self._urls[i]}: {type(exc).__name__}: "
                                          f"{exc}")) from None
        finally:
            self._in_flight[i] -= 1

    async def _request(self, messages: Sequence, params: GenerateParams, n: int):
        kwargs = {**self._kwargs(params, n, params.max_tokens), "messages": list(messages)}
        if params.logprobs:
            kwargs["logprobs"] = True
            if params.top_logprobs:
                kwargs["top_logprobs"] = params.top_logprobs
        return await self._call(lambda client: client.chat.completions.create(**kwargs),
                                images=_has_images(messages))

    async def _image_aware(self, messages: Sequence, params: GenerateParams, n: int):
        """:meth:`_request`, finding out once whether a failure was the server refusing images:
        after the first failed request with images, one text-only probe; if the server answers
        it, the images were the problem — the backend drops its ``images`` capability (every
        later image item is counted ``needs_image`` without a request) and raises
        :class:`ImagesRefused`; if not, the server is down and the error stands."""
        try:
            return await self._request(messages, params, n)
        except ImagesRefused:
            raise
        except BackendError:
            if not _has_images(messages) or not await self._refuses_images():
                raise
            raise ImagesRefused(f"{self.describe()} refused a request with images and "
                                "answers text: it is treated as text-only from now on "
                                "(--text-only says so from the start)") from None

    async def _refuses_images(self) -> bool:
        """Whether the server refuses images: one probe at a time, started at once (before
        any other request can take the freed slot), its answer shared by every request that
        waits on it."""
        if "images" not in self.capabilities:
            return True
        if self._image_probe is None:
            self._image_probe = asyncio.ensure_future(self._probe_text())
        return await asyncio.shield(self._image_probe)

    async def _images_known_refused(self) -> bool:
        if "images" not in self.capabilities:
            return True
        return self._image_probe is not None and await asyncio.shield(self._image_probe)

    async def _probe_text(self) -> bool:
        kwargs = {**self._kwargs(GenerateParams(max_tokens=1, temperature=0.0), 1, 1),
                  "messages": [{"role": "user", "content": "Reply with OK."}]}
        try:
            await self._call(lambda client: client.chat.completions.create(**kwargs),
                             limited=False)
        except BackendError:
            self._image_probe = None  # the server is down, not text-only: ask again later
            return False
        self.capabilities = self.capabilities - {"images"}
        return True

    async def _request_legacy(self, prompt: str, params: GenerateParams, n: int, *,
                              max_tokens: int, echo: bool = False):
        kwargs = {**self._kwargs(params, n, max_tokens), "prompt": prompt}
        if params.logprobs or echo:
            kwargs["logprobs"] = params.top_logprobs
        if echo:
            kwargs["echo"] = True
        return await self._call(lambda client: client.completions.create(**kwargs))

    async def _generate(self, messages: Sequence, params: GenerateParams,
                        n: int) -> list[Generation]:
        out: list[Generation] = []
        raw = is_raw_prompt(messages)
        while len(out) < n:
            if raw:
                response = await self._request_legacy(str(messages[0]["content"]), params,
                                                      n - len(out),
                                                      max_tokens=params.max_tokens)
            else:
                response = await self._image_aware(messages, params, n - len(out))
            if not response.choices:
                raise BackendError(f"{self.describe()}: the server returned no choices")
            convert = self._convert_legacy if raw else self._convert
            out.extend(convert(choice, params) for choice in response.choices)
        return out[:n]

    def _convert_legacy(self, choice, params: GenerateParams) -> Generation:
        tokens = None
        if params.logprobs:
            lp = choice.logprobs
            if lp is None or not lp.tokens:
                raise CapabilityError(f"token logprobs were requested; this server "
                                      f"({self.describe()}) returned none")
            tops = lp.top_logprobs or [None] * len(lp.tokens)
            tokens = tuple(TokenLogprob(t, float(v), tuple((a, float(b)) for a, b in
                                                           (top or {}).items()))
                           for t, v, top in zip(lp.tokens, lp.token_logprobs, tops)
                           if v is not None)
        return Generation(choice.text or "", tokens, choice.finish_reason)

    async def _score_tokens(self, messages, continuations, suffix, attention):
        if not is_raw_prompt(messages):
            raise CapabilityError(f"{self.describe()}: chat endpoints return no log-probabilities "
                                  "of given text; per-token scores need a raw prompt")
        prompt = str(messages[0]["content"])
        params = GenerateParams(temperature=0.0, logprobs=True, top_logprobs=0)

        async def one(continuation: str) -> TokenScores:
            response = await self._request_legacy(prompt + continuation + suffix, params, 1,
                                                  max_tokens=1, echo=True)
            return self._continuation(response, prompt, continuation)
        return list(await asyncio.gather(*(one(c) for c in continuations)))

    def _continuation(self, response, prompt: str, continuation: str) -> TokenScores:
        lp = response.choices[0].logprobs if response.choices else None
        if lp is None or not lp.tokens or not lp.text_offset:
            raise CapabilityError(f"{self.describe()} returned no prompt log-probabilities "
                                  "(echo); per-token scores need a server that does (vLLM, "
                                  "SGLang, llama.cpp)")
        start, end = len(prompt), len(prompt) + len(continuation)
        picked = [(t, v, o) for t, v, o in zip(lp.tokens, lp.token_logprobs, lp.text_offset)
                  if start <= o < end]
        text = "".join(t for t, _, _ in picked)
        if not picked or picked[0][2] != start or text != continuation or \
                any(v is None for _, v, _ in picked):
            raise BackendError(f"{self.describe()}: the server tokenised the prompt's end and "
                               f"the continuation {continuation[:30]!r} together, so the "
                               "continuation has no tokens of its own")
        ids = tuple(int(t[9:]) for t, _, _ in picked if t.startswith("token_id:"))
        return TokenScores(ids if len(ids) == len(picked) else (),
                           tuple(t for t, _, _ in picked), tuple(float(v) for _, v, _ in picked))

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


def _not_an_api_answer(url: str, response: Any) -> str:
    """The error for a 200 answer that is no OpenAI response: a login page, a proxy's HTML,
    a JSON of another API (the SDK hands those back as text or an object without choices)."""
    text = response if isinstance(response, str) else repr(response)
    shown = " ".join(text.split())[:80]
    kind = "HTML" if shown.lstrip().lower().startswith(("<!doctype", "<html")) else "text"
    return (f"{url}: answered with {kind}, not an OpenAI-compatible JSON response "
            f"({shown!r}); is --base-url the API's address (often ending in /v1)?")
