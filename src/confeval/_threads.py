"""One pool of worker threads for numpy work that releases the GIL (LAPACK, BLAS, array loops and
reductions): the measures' batched forms split their rows across it and the large-sample
bootstrap its blocks of resamples. Every caller's work is per row or per block, so results do
not depend on how many threads there are or where the rows are cut (tested per caller)."""

from __future__ import annotations

import functools
import itertools
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

import numpy as np

__all__ = ["parallel_map", "row_parts", "usable_cores"]

T = TypeVar("T")
R = TypeVar("R")

_PREFIX = "confeval-worker"
_MAX_THREADS = 8


@functools.cache
def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system has one), at most
    :data:`_MAX_THREADS`."""
    usable = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    return max(1, min(len(usable) if usable else (os.cpu_count() or 1), _MAX_THREADS))


@functools.cache
def _pool():
    from concurrent.futures import ThreadPoolExecutor

    return ThreadPoolExecutor(max_workers=usable_cores(), thread_name_prefix=_PREFIX)


def parallel_map(function: Callable[[T], R], items: Iterable[T]) -> Iterator[R]:
    """``map(function, items)`` shared between the calling thread and the pool, results in
    order as they are ready. The caller works too: it computes the next item nobody has
    claimed whenever the result it needs next is not ready, so the work starts at once even
    when the pool's threads are slow to wake (a virtual machine's idle cores can take
    milliseconds) and a stalled helper costs at most one item. Called from one of the pool's
    own threads it runs inline (a worker waiting on its pool could wait forever). The first
    exception, in item order, is raised when its result is reached."""
    items = list(items)
    helpers = min(usable_cores(), len(items)) - 1
    if helpers < 1 or threading.current_thread().name.startswith(_PREFIX):
        yield from map(function, items)
        return
    claims = itertools.count()   # next() on it is atomic under the GIL
    results: list = [None] * len(items)
    failed: dict[int, BaseException] = {}
    done = [threading.Event() for _ in items]

    def run(i: int) -> None:
        try:
            results[i] = function(items[i])
        except BaseException as exc:   # re-raised in the caller, in item order
            failed[i] = exc
        done[i].set()

    def work() -> None:
        for i in claims:
            if i >= len(items) or failed:
                return
            run(i)

    for _ in range(helpers):
        _pool().submit(work)
    for i in range(len(items)):
        while not done[i].is_set():   # help rather than wait
            j = next(claims)
            if j >= len(items) or failed:
                done[i].wait()
                break
            run(j)
        if i in failed:
            raise failed[i]
        yield results[i]


def row_parts(n: int, min_rows: int, workers: int | None = None) -> list[slice]:
    """``n`` rows cut into at most ``workers`` (default: the usable cores) contiguous parts of
    at least ``min_rows`` rows each — one part when the work is too small to share."""
    workers = min(usable_cores() if workers is None else workers, n // max(1, min_rows))
    if workers < 2:
        return [slice(0, n)]
    bounds = np.linspace(0, n, workers + 1).astype(int)
    return [slice(int(a), int(b)) for a, b in itertools.pairwise(bounds)]
