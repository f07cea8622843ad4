"""A live run's start-up: from a new process's start to the end of its first forward pass on
the embedded model (exported already), on confeval's own Llama engine and on transformers.

    python benchmarks/live_startup.py [--repeats 5] [--threads 1]

Each measurement is a new Python process that loads the embedded model with
``local_backend(engine=...)`` and scores one five-option question; the time runs from just
before the process is started to the moment the scores are back (the child prints the clock),
so the interpreter's start, every import and the model's load count. The two engines take
turns; one untimed process of each runs first (the weights in the page cache, the modules
compiled, as after ``pip install``). Issue 41's target: 3 s."""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

ENGINES = ("confeval", "transformers")
TARGET = 3.0

CHILD = """
import asyncio, sys, time
from confeval.backends.local import local_backend
backend = local_backend(threads=int(sys.argv[2]), engine=sys.argv[1])
question = [{"role": "user", "content": "Which planet is largest? A. Mars B. Venus "
             "C. Jupiter D. Earth E. Mercury"}]
asyncio.run(backend.score(question, [" A", " B", " C", " D", " E"]))
print(time.time(), backend.engine, "transformers" in sys.modules)
"""


def _installed_env() -> dict[str, str]:
    """Bytecode caching on, as after ``pip install`` (see run_all.installed_env)."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def one_start(engine: str, threads: int) -> tuple[float, bool]:
    """Seconds from starting a process to its first scores, and whether it imported
    transformers."""
    started = time.time()
    done = subprocess.run([sys.executable, "-c", CHILD, engine, str(threads)],
                          capture_output=True, text=True, env=_installed_env(), check=False)
    if done.returncode != 0:
        raise SystemExit(f"the {engine} child failed:\n{done.stderr[-3000:]}")
    stamp, ran, imported = done.stdout.split()[-3:]
    if ran != engine:
        raise SystemExit(f"asked for {engine}, ran {ran}")
    return float(stamp) - started, imported == "True"


def measure(repeats: int = 5, threads: int = 1) -> dict[str, list[float]]:
    """Each engine's start-up times, the engines taking turns, after one untimed start each."""
    for engine in ENGINES:
        one_start(engine, threads)
    times: dict[str, list[float]] = {engine: [] for engine in ENGINES}
    for _ in range(repeats):
        for engine in ENGINES:
            times[engine].append(one_start(engine, threads)[0])
    return times


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5, help="timed starts per engine")
    parser.add_argument("--threads", type=int, default=1, help="torch threads of the model")
    args = parser.parse_args(argv)
    from confeval.backends.local import local_backend

    local_backend(threads=args.threads)   # exports the model once, if it is not yet
    times = measure(args.repeats, args.threads)
    for engine in ENGINES:
        t = times[engine]
        print(f"{engine:>12}: median {statistics.median(t):.2f} s, best {min(t):.2f} s "
              f"({', '.join(f'{x:.2f}' for x in t)})")
    ours, theirs = (statistics.median(times[e]) for e in ENGINES)
    print(f"transformers / confeval (medians): {theirs / ours:.2f}x")
    print(f"start-up to the first forward pass: {ours:.2f} s (target <= {TARGET:.0f} s: "
          f"{'met' if ours <= TARGET else 'NOT met'})")


if __name__ == "__main__":
    main()
