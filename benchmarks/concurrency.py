"""Concurrency and cache speed of the OpenAI-compatible backend.

Against the local stub server taking 200 ms per request, 64 requests are sent with
``--concurrency 1`` and ``--concurrency 8`` (target: >= 6x faster), then the same 64 requests
again through a warm response cache (target: >= 100x faster than the first, uncached run).
All figures are measured in this one run. Not a pass/fail test.

    python benchmarks/concurrency.py [--requests 64] [--delay 0.2]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path

from confeval.backends import CachedBackend, ResponseCache, get_backend
from confeval.backends.stub_server import StubServer


async def send_all(backend, n: int) -> None:
    await asyncio.gather(*[backend.generate([{"role": "user", "content": f"question {i}"}])
                           for i in range(n)])
    await backend.aclose()  # close connections inside the loop that opened them


def timed(backend, n: int) -> float:
    start = time.perf_counter()
    asyncio.run(send_all(backend, n))
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=64)
    parser.add_argument("--delay", type=float, default=0.2)
    args = parser.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "benchmark")
    with StubServer(delay=args.delay) as server, tempfile.TemporaryDirectory() as tmp:
        serial = timed(get_backend("openai:stub", base_urls=[server.base_url], concurrency=1),
                       args.requests)
        parallel = timed(get_backend("openai:stub", base_urls=[server.base_url],
                                     concurrency=8), args.requests)
        cache = ResponseCache(Path(tmp) / "cache.sqlite")
        cold = CachedBackend(get_backend("openai:stub", base_urls=[server.base_url],
                                         concurrency=8), cache)
        first = timed(cold, args.requests)
        warm = CachedBackend(get_backend("openai:stub", base_urls=[server.base_url],
                                         concurrency=8), cache)
        cached = timed(warm, args.requests)
    print(f"{args.requests} requests, {args.delay * 1000:.0f} ms each on a local stub server")
    print(f"concurrency 1:            {serial:8.3f} s")
    print(f"concurrency 8:            {parallel:8.3f} s   speed-up {serial / parallel:6.1f}x "
          "(target >= 6x)")
    print(f"first run (cache filled): {first:8.3f} s")
    print(f"cached rerun:             {cached:8.4f} s   speed-up {first / cached:6.0f}x "
          f"(target >= 100x; {warm.calls} model calls)")


if __name__ == "__main__":
    main()
