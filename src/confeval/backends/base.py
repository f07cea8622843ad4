"""The backend protocol: one async interface to every model, with declared capabilities.

Messages are OpenAI chat messages: ``{"role": ..., "content": str | [parts]}`` where a part is
``{"type": "text", "text": ...}`` or ``{"type": "image_url", "image_url": {"url": ...}}``
(``data:`` URLs for local images). Every backend returns log-probabilities in one schema,
:class:`TokenLogprob`, whatever its server or library calls them.

Capabilities
------------
``generate``   sample text (``n`` samples per request)
``logprobs``   per-token log-probabilities with top-k alternatives on generated tokens
``score``      exact log-probability of given continuations after a prompt
``token_scores`` the same per token, with token ids (:class:`TokenScores`)
``attention``  with ``token_scores``: the attention of a readout position over the continuation
``images``     image parts in messages

A *raw prompt* (:func:`raw_prompt`) is a completion prompt sent as is, without a chat template:
one message of role ``prompt``. Backends that cannot take one say so.

A suite states what it needs with :func:`require`; a backend that lacks it fails before any
request is sent, with a message that says what is missing and why it is needed.
"""

from __future__ import annotations

import abc
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["CAPABILITIES", "RAW_ROLE", "Backend", "BackendError", "CapabilityError",
           "user_cache_root",
           "GenerateParams", "Generation", "ImagesRefused", "PromptTooLong", "TokenLogprob",
           "TokenScores",
           "WrappingBackend", "is_raw_prompt", "raw_prompt", "redact_url", "require"]

CAPABILITIES = ("generate", "logprobs", "score", "token_scores", "attention", "images")

Message = Mapping[str, Any]

RAW_ROLE = "prompt"


def raw_prompt(text: str) -> list[dict]:
    """A completion prompt the backend sends as is (no chat template), as a message list.

    Examples
    --------
    >>> raw_prompt("Q: 2+2? A:")
    [{'role': 'prompt', 'content': 'Q: 2+2? A:'}]
    """
    return [{"role": RAW_ROLE, "content": str(text)}]


def is_raw_prompt(messages: Sequence[Message]) -> bool:
    """Whether ``messages`` is a :func:`raw_prompt`."""
    return len(messages) == 1 and messages[0].get("role") == RAW_ROLE


_SECRET_QUERY = re.compile(r"(?i)([?&][^=&#]*(?:key|token|secret|pass|sig|auth)[^=&#]*=)[^&#]*")


def redact_url(url: str) -> str:
    """A URL without credentials: ``user:pass@`` and the values of query parameters that
    look secret (``api-key``, ``token``, ``sig``, ...) become ``***``. Applied to every URL
    that is written to the cache, a run folder or a message.

    Examples
    --------
    >>> redact_url("https://u:p@host/v1?api-key=abc&x=1")
    'https://***@host/v1?api-key=***&x=1'
    """
    text = re.sub(r"(?<=://)[^/@]*@", "***@", str(url))
    return _SECRET_QUERY.sub(r"\1***", text)


class BackendError(RuntimeError):
    """A model call failed for good (after retries), or a backend is misconfigured."""


class CapabilityError(BackendError):
    """The backend cannot do what the suite needs."""


class PromptTooLong(BackendError):
    """A prompt (with what is to be generated or scored after it) longer than the model's
    context: refused before any forward pass, counted as ``prompt_too_long``."""


class ImagesRefused(CapabilityError):
    """A server refused a request because of its images while it answers text (found out
    once, by a text-only probe after the first failed image request): the backend has lost
    its ``images`` capability and the item is counted as ``needs_image``, never sent
    text-only."""


@dataclass(frozen=True)
class TokenLogprob:
    """One generated token, its log-probability, and the top alternatives (token, logprob)."""

    token: str
    logprob: float
    top: tuple[tuple[str, float], ...] = ()

    def to_dict(self) -> dict:
        return {"token": self.token, "logprob": self.logprob, "top": [list(t) for t in self.top]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> TokenLogprob:
        return cls(d["token"], float(d["logprob"]),
                   tuple((str(t), float(lp)) for t, lp in d.get("top", ())))


@dataclass(frozen=True)
class Generation:
    """One sampled completion: its text and, when asked for, per-token log-probabilities."""

    text: str
    tokens: tuple[TokenLogprob, ...] | None = None
    finish_reason: str | None = None

    def to_dict(self) -> dict:
        return {"text": self.text, "finish_reason": self.finish_reason,
                "tokens": None if self.tokens is None else [t.to_dict() for t in self.tokens]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Generation:
        tokens = d.get("tokens")
        return cls(d["text"], None if tokens is None else
                   tuple(TokenLogprob.from_dict(t) for t in tokens), d.get("finish_reason"))


@dataclass(frozen=True)
class TokenScores:
    """One continuation scored token by token: its token ids and decoded tokens (as the model
    tokenised it after the prompt), each token's log-probability, and, when asked for, the
    attention of the readout position over these tokens: one row per (layer, head), layer-major.
    """

    token_ids: tuple[int, ...]
    tokens: tuple[str, ...]
    logprobs: tuple[float, ...]
    attention: tuple[tuple[float, ...], ...] | None = None

    def to_dict(self) -> dict:
        return {"token_ids": list(self.token_ids), "tokens": list(self.tokens),
                "logprobs": list(self.logprobs),
                "attention": None if self.attention is None else [list(r)
                                                                  for r in self.attention]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> TokenScores:
        attention = d.get("attention")
        return cls(tuple(int(i) for i in d["token_ids"]), tuple(str(t) for t in d["tokens"]),
                   tuple(float(v) for v in d["logprobs"]),
                   None if attention is None else tuple(tuple(float(v) for v in row)
                                                        for row in attention))


@dataclass(frozen=True)
class GenerateParams:
    """Every parameter that changes what a model returns (all of it goes into cache keys)."""

    max_tokens: int = 256
    temperature: float = 0.0
    top_p: float = 1.0
    seed: int | None = 0
    logprobs: bool = False
    top_logprobs: int = 0
    stop: tuple[str, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["stop"] = list(self.stop)
        d["extra"] = dict(self.extra)
        return d


class Backend(abc.ABC):
    """Base class of every model backend.

    Subclasses set :attr:`kind` and :attr:`capabilities` and implement :meth:`_generate`
    (and :meth:`_score` if they can). :meth:`identity` describes the model for cache keys; it
    must never contain a secret.
    """

    kind: str = "abstract"
    capabilities: frozenset[str] = frozenset()
    parallel_items: int = 32
    """Items a run keeps in flight at once. A server answers many requests at a time; an
    in-process model runs one forward pass at a time, so items in flight together would
    only interleave and all finish at the end (a progress bar stuck at 0 until then)."""
    pack_items: int = 0
    """Items a run keeps in flight so that their scoring calls meet and go to the backend
    together (:meth:`score_many`, :meth:`score_tokens_many`; see
    :class:`~confeval.backends.gathering.GatheringBackend`); 0: none, each call goes alone.
    An in-process model that packs several questions into one forward pass sets it."""

    def __init__(self, model: str) -> None:
        self.model = model

    def identity(self) -> dict[str, Any]:
        return {"kind": self.kind, "model": self.model}

    def describe(self) -> str:
        return f"{self.kind}:{self.model}"

    async def generate(self, messages: Sequence[Message], params: GenerateParams | None = None,
                       *, n: int = 1) -> list[Generation]:
        """Return ``n`` samples for the chat ``messages``."""
        params = params or GenerateParams()
        require(self, ["generate"] + (["logprobs"] if params.logprobs else []),
                "this call asks for them")
        if _has_images(messages) and "images" not in self.capabilities:
            raise ImagesRefused(f"{self.describe()} takes no images; the messages contain some")
        if n < 1:
            raise ValueError("n must be at least 1")
        return await self._generate(messages, params, n)

    async def score(self, messages: Sequence[Message], continuations: Sequence[str]
                    ) -> list[float]:
        """Total log-probability of each continuation as the assistant's reply to ``messages``."""
        require(self, ["score"], "scoring continuations needs exact log-probabilities")
        if _has_images(messages) and "images" not in self.capabilities:
            raise ImagesRefused(f"{self.describe()} takes no images; the messages contain some")
        return await self._score(messages, list(continuations))

    async def score_many(self, requests: Sequence[tuple[Sequence[Message], Sequence[str]]]
                         ) -> list[list[float]]:
        """:meth:`score` of several ``(messages, continuations)`` requests, in order: the
        same values as one call each. A backend may run them together (the ``hf`` and
        ``local`` backends pack several questions into one forward pass)."""
        require(self, ["score"], "scoring continuations needs exact log-probabilities")
        requests = [(messages, list(continuations)) for messages, continuations in requests]
        for messages, _ in requests:
            if _has_images(messages) and "images" not in self.capabilities:
                raise ImagesRefused(f"{self.describe()} takes no images; the messages contain "
                                    "some")
        return await self._score_many(requests)

    async def _score_many(self, requests: list[tuple[Sequence[Message], list[str]]]
                          ) -> list[list[float]]:
        return [await self._score(messages, continuations)
                for messages, continuations in requests]

    async def score_tokens(self, messages: Sequence[Message], continuations: Sequence[str], *,
                           suffix: str = "", attention: bool = False) -> list[TokenScores]:
        """Each continuation scored token by token as the assistant's reply to ``messages``
        (or right after a :func:`raw_prompt`). With ``attention``, the attention that the
        last position of ``continuation + suffix`` pays to the continuation's tokens is
        returned too: ``suffix=""`` reads it from the continuation's own last token
        (CSL-Next); an eliciting suffix such as ``"\n Decision:"`` from that suffix's end
        (CSL). The suffix is tokenised on its own and never scored."""
        require(self, ["token_scores"] + (["attention"] if attention else []),
                "per-token scores of given continuations")
        if _has_images(messages) and "images" not in self.capabilities:
            raise ImagesRefused(f"{self.describe()} takes no images; the messages contain some")
        return await self._score_tokens(messages, list(continuations), str(suffix),
                                        bool(attention))

    async def score_tokens_many(self, requests: Sequence[tuple[Sequence[Message],
                                                                Sequence[str]]], *,
                                suffix: str = "", attention: bool = False
                                ) -> list[list[TokenScores]]:
        """:meth:`score_tokens` of several ``(messages, continuations)`` requests, in order:
        the same scores as one call each. A backend may run them together (the ``hf`` and
        ``local`` backends pack several questions into one forward pass)."""
        require(self, ["token_scores"] + (["attention"] if attention else []),
                "per-token scores of given continuations")
        requests = [(messages, list(continuations)) for messages, continuations in requests]
        for messages, _ in requests:
            if _has_images(messages) and "images" not in self.capabilities:
                raise ImagesRefused(f"{self.describe()} takes no images; the messages contain "
                                    "some")
        return await self._score_tokens_many(requests, str(suffix), bool(attention))

    async def _score_tokens_many(self, requests: list[tuple[Sequence[Message], list[str]]],
                                 suffix: str, attention: bool) -> list[list[TokenScores]]:
        return [await self._score_tokens(messages, continuations, suffix, attention)
                for messages, continuations in requests]

    async def _score_tokens(self, messages: Sequence[Message], continuations: list[str],
                            suffix: str, attention: bool) -> list[TokenScores]:
        raise CapabilityError(f"{self.describe()} cannot score continuations per token")

    @abc.abstractmethod
    async def _generate(self, messages: Sequence[Message], params: GenerateParams,
                        n: int) -> list[Generation]:
        ...

    async def _score(self, messages: Sequence[Message], continuations: list[str]) -> list[float]:
        raise CapabilityError(f"{self.describe()} cannot score continuations")

    async def aclose(self) -> None:  # noqa: B027 - optional hook, a no-op by default
        """Release connections or memory; the default has nothing to release."""


class WrappingBackend(Backend):
    """A backend around another (a cache, a recorder): the same model, identity,
    capabilities — as the inner backend learns them (a server found to refuse images) — and
    items in flight."""

    def __init__(self, inner: Backend) -> None:
        super().__init__(inner.model)
        self.inner = inner
        self.kind = inner.kind

    @property
    def capabilities(self) -> frozenset[str]:
        return self.inner.capabilities

    @property
    def parallel_items(self) -> int:
        return self.inner.parallel_items

    @property
    def pack_items(self) -> int:
        return self.inner.pack_items

    def identity(self) -> dict[str, Any]:
        return self.inner.identity()

    def describe(self) -> str:
        return self.inner.describe()


def require(backend: Backend, needed: Sequence[str], why: str = "") -> None:
    """Raise :class:`CapabilityError` unless ``backend`` has every capability in ``needed``."""
    unknown = [c for c in needed if c not in CAPABILITIES]
    if unknown:
        raise ValueError(f"unknown capabilities {unknown}; known: {CAPABILITIES}")
    missing = [c for c in needed if c not in backend.capabilities]
    if missing:
        has = ", ".join(sorted(backend.capabilities)) or "none"
        because = f" ({why})" if why else ""
        raise CapabilityError(f"{backend.describe()} lacks {', '.join(missing)}{because}; "
                              f"it has: {has}")


def _has_images(messages: Sequence[Message]) -> bool:
    for m in messages:
        content = m.get("content")
        if isinstance(content, list) and any(
                isinstance(p, Mapping) and p.get("type") in ("image_url", "image")
                for p in content):
            return True
    return False


def user_cache_root() -> Path:
    """The user's cache folder: $XDG_CACHE_HOME when it is an absolute path (the XDG spec
    ignores a relative one: it would put the model export under the working folder), else
    ~/.cache. The response cache and the model export live under its ``confeval``."""
    xdg = os.environ.get("XDG_CACHE_HOME")
    return Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
