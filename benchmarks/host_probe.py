"""The fixed piece of CPU work that says how fast the host is at the moment (benchmarks/
run_all.py runs it before and after a run, in its own process and on every core at once).

    python benchmarks/host_probe.py START_AT CORE   # held on CORE, from time START_AT; prints s

Only numpy and the standard library, so that a child process starts in a fraction of a second.
"""

from __future__ import annotations

import os
import sys
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
    """Held on core ``argv[1]``, wait until the time ``argv[0]``, then print the probe's
    seconds (run_all.host_probe_on_every_core starts one per core)."""
    start_at, core = argv if argv is not None else sys.argv[1:]
    start_at, core = float(start_at), int(core)
    if hasattr(os, "sched_setaffinity"):   # one core each (Linux), so the slowest core is seen
        os.sched_setaffinity(0, {core})
    while time.time() < start_at:
        time.sleep(0.001)
    print(host_probe())


if __name__ == "__main__":
    main()
