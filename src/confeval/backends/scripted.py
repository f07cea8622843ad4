"""Backends that need no model: a scripted fake for tests, and replay of recorded answers."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from .._untrusted import loads_unique
from ..runs import RunFolder
from .base import (
    CAPABILITIES,
    Backend,
    BackendError,
    GenerateParams,
    Generation,
    TokenLogprob,
    TokenScores,
    WrappingBackend,
)
from .cache import call_key

__all__ = ["RecordingBackend", "ReplayBackend", "ScriptedBackend"]

Reply = Callable[[Sequence[dict], GenerateParams, int], "str | Generation"]
Scorer = Callable[[Sequence[dict], str], float]
TokenScorer = Callable[[Sequence[dict], str, str], TokenScores]


class ScriptedBackend(Backend):
    """A fake model whose answers come from Python functions (for unit tests).

    ``reply(messages, params, sample_index)`` returns the text (or a full
    :class:`Generation`); ``scorer(messages, continuation)`` returns a log-probability;
    ``token_scorer(messages, continuation, suffix)`` a :class:`TokenScores` (with attention
    rows if ``"attention"`` is among the ``capabilities``). Every call is recorded in
    :attr:`calls`.
    """

    kind = "scripted"

    def __init__(self, reply: Reply | None = None, scorer: Scorer | None = None, *,
                 token_scorer: TokenScorer | None = None, model: str = "scripted",
                 capabilities: Iterable[str] | None = None) -> None:
        super().__init__(model)
        self.reply = reply or (lambda messages, params, i: "A")
        self.scorer = scorer
        self.token_scorer = token_scorer
        caps = set(capabilities) if capabilities is not None else (
            {"generate", "logprobs"} | ({"score"} if scorer else set())
            | ({"token_scores"} if token_scorer else set()))
        if caps - set(CAPABILITIES):
            raise ValueError(f"unknown capabilities {caps - set(CAPABILITIES)}")
        self.capabilities = frozenset(caps)
        self.calls: list[tuple[str, Any]] = []

    async def _generate(self, messages, params, n):
        self.calls.append(("generate", messages))
        out = []
        for i in range(n):
            r = self.reply(messages, params, i)
            if isinstance(r, Generation):
                out.append(r)
            else:
                tokens = (TokenLogprob(str(r), 0.0, ((str(r), 0.0),)),) if params.logprobs \
                    else None
                out.append(Generation(str(r), tokens, "stop"))
        return out

    async def _score(self, messages, continuations):
        self.calls.append(("score", messages))
        if self.scorer is None:
            return await super()._score(messages, continuations)
        return [float(self.scorer(messages, c)) for c in continuations]

    async def _score_tokens(self, messages, continuations, suffix, attention):
        self.calls.append(("score_tokens", messages))
        if self.token_scorer is None:
            return await super()._score_tokens(messages, continuations, suffix, attention)
        return [self.token_scorer(messages, c, suffix) for c in continuations]


class ReplayBackend(Backend):
    """Answers from a previous run: re-score offline without calling any model.

    Reads ``records.jsonl`` of a run folder (or any JSONL file) whose lines carry
    ``request_key`` and ``response`` (as written by ``confeval run``). A request that was not
    recorded is an error naming the missing key, never a silent default.
    """

    kind = "replay"

    def __init__(self, source: str | Path) -> None:
        path = Path(source)
        if path.is_dir():
            path = path / RunFolder.RECORDS
        if not path.is_file():
            raise BackendError(f"replay: {path}: no such file")
        super().__init__(str(path))
        self._answers: dict[str, Any] = {}
        methods: set[str] = set()
        self.skipped = 0  # lines or calls of another shape: counted, never half-used
        with open(path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                try:   # a key named twice: a line of two readings, skipped and counted
                    rec = loads_unique(line)
                except (ValueError, RecursionError):   # a number past the digit limit too
                    self.skipped += bool(line.strip())
                    continue
                calls = rec.get("calls", ()) if isinstance(rec, dict) else None
                if not isinstance(calls, (list, tuple)):
                    self.skipped += 1
                    continue
                for call in calls:
                    if not (isinstance(call, dict) and isinstance(call.get("request_key"), str)
                            and "response" in call):
                        self.skipped += 1
                        continue
                    self._answers[call["request_key"]] = call["response"]
                    methods.add(str(call.get("method", "generate")))
        if not self._answers:
            raise BackendError(f"replay: {path} holds no recorded calls (lines or calls of "
                               f"another shape: {self.skipped}); replay needs the "
                               "records.jsonl of a confeval run")
        # Offer what the recorded run used, so a suite picks the same path again.
        caps = {"images"} | ({"score"} if "score" in methods else set())
        if "score_tokens" in methods:
            caps |= {"token_scores", "attention"}
        if "generate" in methods or not methods:
            caps |= {"generate", "logprobs"}
        self.capabilities = frozenset(caps)

    def identity(self) -> dict[str, Any]:
        return {"kind": self.kind, "source": self.model}

    def lookup(self, key: str) -> Any:
        if key not in self._answers:
            raise BackendError(f"replay: no recorded answer for request {key[:12]}… in "
                               f"{self.model}")
        return self._answers[key]

    async def _generate(self, messages, params, n):
        key = call_key("generate", messages, params=params.to_dict(), n=n)
        try:
            return [Generation.from_dict(g) for g in self.lookup(key)]
        except (TypeError, KeyError, ValueError, AttributeError) as exc:
            raise BackendError(f"replay: the recorded answer for {key[:12]}… is not a "
                               f"generation ({type(exc).__name__})") from None

    async def _score(self, messages, continuations):
        key = call_key("score", messages, continuations=continuations)
        try:
            values = [float(v) for v in self.lookup(key)]
        except (TypeError, ValueError) as exc:
            raise BackendError(f"replay: the recorded scores for {key[:12]}… are not numbers "
                               f"({type(exc).__name__})") from None
        if len(values) != len(continuations):
            raise BackendError(f"replay: {len(values)} recorded scores for "
                               f"{len(continuations)} continuations")
        return values

    async def _score_tokens(self, messages, continuations, suffix, attention):
        key = call_key("score_tokens", messages, continuations=continuations, suffix=suffix,
                       attention=attention)
        try:
            values = [TokenScores.from_dict(v) for v in self.lookup(key)]
        except (TypeError, KeyError, ValueError, AttributeError) as exc:
            raise BackendError(f"replay: the recorded token scores for {key[:12]}… are not "
                               f"token scores ({type(exc).__name__})") from None
        if len(values) != len(continuations):
            raise BackendError(f"replay: {len(values)} recorded token scores for "
                               f"{len(continuations)} continuations")
        return values


class RecordingBackend(WrappingBackend):
    """Pass-through that remembers each call's backend-independent key and response, so a
    run's records can be replayed offline (``--model replay:RUN_DIR``)."""

    def __init__(self, inner: Backend) -> None:
        super().__init__(inner)
        self.calls: list[dict] = []

    async def _generate(self, messages, params: GenerateParams, n):
        gens = await self.inner.generate(messages, params, n=n)
        self.calls.append({"method": "generate",
                           "request_key": call_key("generate", messages,
                                                   params=params.to_dict(), n=n),
                           "response": [g.to_dict() for g in gens]})
        return gens

    async def _score(self, messages, continuations):
        values = await self.inner.score(messages, continuations)
        self.calls.append({"method": "score",
                           "request_key": call_key("score", messages,
                                                   continuations=list(continuations)),
                           "response": list(values)})
        return values

    async def _score_tokens(self, messages, continuations, suffix, attention):
        scores = await self.inner.score_tokens(messages, continuations, suffix=suffix,
                                               attention=attention)
        self.calls.append({"method": "score_tokens",
                           "request_key": call_key("score_tokens", messages,
                                                   continuations=list(continuations),
                                                   suffix=suffix, attention=attention),
                           "response": [t.to_dict() for t in scores]})
        return scores
