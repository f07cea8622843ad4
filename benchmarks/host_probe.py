"""The fixed piece of CPU work that says how fast the host is at the moment (benchmarks/
run_all.py runs it before and after a run, in its own process and on every core at once).

    python benchmarks/host_probe.py                              # prints the probe's seconds
    python benchmarks/host_probe.py --core 1 --start-at 1795000000.5   # held on core 1, from then

Only numpy and the standard library, so that a child process starts in a fraction of a second.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

PROBE_ADDITIONS = 1_000_000


def host_probe() -> float:
    """Seconds of one fixed piece of CPU work, best of 3: 10^6 additions in Python and a sort
    of 10^6 seeded numbers. The load average does not show it, but this host's speed swings by
    tens of percent from minute to minute (a virtual machine's neighbours); the probe before
    and after a run says where in a swing the run's figures were taken."""
    data = np.random.default_rng(0).uniform(size=PROBE_ADDITIONS)
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        total = 0
        for i in range(PROBE_ADDITIONS):
            total += i
        np.sort(data)
        best = min(best, time.perf_counter() - started)
    return best


def main(argv: list[str] | None = None) -> None:
    """Print the probe's seconds, held on ``--core`` and started at the time ``--start-at``
    where given (run_all.host_probe_on_every_core starts one such process per core)."""
    parser = argparse.ArgumentParser(description="The fixed piece of CPU work that says how "
                                     "fast this host is now; prints its seconds, best of 3.")
    parser.add_argument("--core", type=int, help="run held on this core (Linux)")
    parser.add_argument("--start-at", type=float, default=0.0,
                        help="wait until this time (seconds since the epoch), so that "
                             "processes on several cores start together")
    args = parser.parse_args(argv)
    if args.core is not None and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {args.core})   # one core each, so the slowest core is seen
    while time.time() < args.start_at:
        time.sleep(0.001)
    print(host_probe())

if __name__ == "__main__":
    main()
