"""Gathering the scoring calls of a run's items in flight into one call of the backend.

An in-process model packs several questions into one forward pass
(:meth:`~confeval.backends.base.Backend.score_tokens_many`), but a suite asks one item at a
time (``run_item`` awaits ``backend.score(...)``). A run therefore keeps
:attr:`~confeval.backends.base.Backend.pack_items` items in flight, each in a *slot*
(:meth:`GatheringBackend.slot`, all made before any item starts), and sends their ``score``
and ``score_tokens`` calls through a
:class:`GatheringBackend`: a call waits until every busy slot is waiting on one, then all the
waiting calls go to the backend together (``score_many``, ``score_tokens_many``; calls with the
same ``suffix`` and ``attention`` in one many-call), and each item gets its own answer and
carries on. An item busy with anything else (a generation, its own computation) is waited for,
so nothing waits on a call that cannot come; a slot's next item starts in the same step as its
last one ends.

A suite sees the answers one call alone would give (the backends' many-calls equal one call
each, to float32 rounding), in the same order per item. A many-call that fails is sent again
one call at a time, so a call that fails fails its own item only, with its own error. A call
made outside a slot goes to the backend at once. Generation is passed through.

The response cache goes above this backend (``CachedBackend(GatheringBackend(model))``): its
keys are those of single calls, and a call it answers never waits here.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .base import Backend, WrappingBackend

__all__ = ["GatheringBackend"]

_SLOT: contextvars.ContextVar[_Slot | None] = contextvars.ContextVar("confeval_slot",
                                                                     default=None)


class _Slot:
    """One item at a time in flight: busy from when it is made (so slots made together wait
    for one another before any of them starts) until it is closed or its ``with`` ends; the
    calls made inside its ``with`` (by that task and the tasks it starts) are gathered."""

    def __init__(self, owner: GatheringBackend) -> None:
        self.owner = owner
        self._open = True
        self._token: contextvars.Token | None = None
        owner._busy += 1

    def __enter__(self) -> _Slot:
        self._token = _SLOT.set(self)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._token is not None:
            _SLOT.reset(self._token)
            self._token = None
        self.close()

    def close(self) -> None:
        if self._open:
            self._open = False
            self.owner._busy -= 1
            self.owner._send_if_all_wait()


@dataclass(eq=False)
class _Call:
    method: str                 # "score" or "score_tokens"
    messages: Sequence[Any]
    continuations: list[str]
    suffix: str
    attention: bool
    slot: _Slot
    future: asyncio.Future = field(repr=False)


class GatheringBackend(WrappingBackend):
    """A backend whose scoring calls, made from :meth:`slot` s, are sent to the inner
    backend together once every busy slot waits on one (module docstring).
    :attr:`sent` lists the size of each many-call made."""

    def __init__(self, inner: Backend) -> None:
        super().__init__(inner)
        self._busy = 0
        self._waiting: list[_Call] = []
        self._sending: set[asyncio.Task] = set()
        self.sent: list[int] = []

    def slot(self) -> _Slot:
        """A place for one item at a time in flight, busy from now on: ``with slot:`` around
        the items it runs, one after another (:class:`_Slot`)."""
        return _Slot(self)

    # ------------------------------------------------------------------ calls
    async def _generate(self, messages, params, n):
        return await self.inner.generate(messages, params, n=n)

    async def _score(self, messages, continuations):
        return await self._gather("score", messages, continuations, "", False)

    async def _score_tokens(self, messages, continuations, suffix, attention):
        return await self._gather("score_tokens", messages, continuations, suffix, attention)

    async def _score_many(self, requests):
        return await self.inner.score_many(requests)

    async def _score_tokens_many(self, requests, suffix, attention):
        return await self.inner.score_tokens_many(requests, suffix=suffix, attention=attention)

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def _gather(self, method: str, messages, continuations: list[str], suffix: str,
                      attention: bool):
        slot = _SLOT.get()
        if slot is None or slot.owner is not self:   # not from a run's slot: at once
            return await self._alone(method, messages, continuations, suffix, attention)
        future = asyncio.get_running_loop().create_future()
        self._waiting.append(_Call(method, messages, list(continuations), suffix, attention,
                                   slot, future))
        self._send_if_all_wait()
        return await future

    def _send_if_all_wait(self) -> None:
        """Send the waiting calls once every busy slot has one waiting (a slot whose item is
        busy otherwise will call, or end, without waiting on these)."""
        if not self._waiting or len({id(c.slot) for c in self._waiting}) < self._busy:
            return
        calls, self._waiting = self._waiting, []
        task = asyncio.ensure_future(self._send(calls))
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)

    async def _alone(self, method: str, messages, continuations, suffix, attention):
        if method == "score":
            return await self.inner.score(messages, continuations)
        return await self.inner.score_tokens(messages, continuations, suffix=suffix,
                                             attention=attention)

    async def _send(self, calls: list[_Call]) -> None:
        groups: dict[tuple, list[_Call]] = {}
        for call in calls:
            groups.setdefault((call.method, call.suffix, call.attention), []).append(call)
        for (method, suffix, attention), group in groups.items():
            answers = None
            if len(group) > 1:
                requests = [(c.messages, c.continuations) for c in group]
                try:
                    answers = await (self.inner.score_many(requests) if method == "score"
                                     else self.inner.score_tokens_many(
                                         requests, suffix=suffix, attention=attention))
                    self.sent.append(len(group))
                except Exception:   # sent again one at a time, below
                    answers = None
            if answers is not None:
                for call, answer in zip(group, answers):
                    if not call.future.done():
                        call.future.set_result(answer)
                continue
            for call in group:   # alone: a failing call fails its own item only
                try:
                    answer = await self._alone(method, call.messages, call.continuations,
                                               suffix, attention)
                except Exception as exc:   # handed to the item that asked it
                    if not call.future.done():
                        call.future.set_exception(exc)
                else:
                    self.sent.append(1)
                    if not call.future.done():
                        call.future.set_result(answer)
