"""``confeval score`` at 10^4, 10^5, 10^6 and 10^7 rows with 1,000 bootstrap resamples (the
default): wall time, CPU time (user + system; CPU time / wall time above 100% means the second
core was used), peak memory (the child's maximum resident set) and the machine's load average
before each run, as a user runs it — the installed entry point, a new process per size, a
Parquet file of seeded random rows (confidence uniform, correct ~ Bernoulli(confidence)).

Issue #41's targets: times increasing with the rows (10^5 faster than 10^6), 10^7 rows within
60 s and 2 GB. Not a pass/fail test; the numbers mean something only on a quiet machine (the
load is printed: above ~0.5 on a 2-core machine, another process shares the cores).

    python benchmarks/bootstrap_scale.py [--sizes 4,5,6,7] [--resamples 1000]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from run_all import installed_env


def _write(path: Path, n: int) -> None:
    rng = np.random.default_rng(0)
    conf = rng.uniform(size=n)
    correct = (rng.uniform(size=n) < conf).astype(np.int8)
    pd.DataFrame({"confidence": conf, "correct": correct}).to_parquet(path)


# bytecode caching on, as after ``pip install``: where PYTHONDONTWRITEBYTECODE is set (this
# workplace's machines) an editable install would compile its modules in every child
_ENV = installed_env()


def _run(argv: list[str], cwd: str) -> tuple[float, float, float]:
    """(wall s, CPU s, peak resident MB) of one child process."""
    started = time.perf_counter()
    child = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             env=_ENV)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    err = child.stderr.read().decode(errors="replace") if child.stderr else ""
    if child.returncode:
        raise SystemExit(f"{' '.join(argv)} failed ({child.returncode}):\n{err}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024  # KB on Linux


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="4,5,6,7", help="powers of ten of the rows")
    parser.add_argument("--resamples", type=int, default=1000)
    args = parser.parse_args()
    entry = Path(sys.executable).with_name("confeval")
    exe = [str(entry)] if entry.exists() else [sys.executable, "-m", "confeval.cli"]
    import confeval

    print(f"confeval score ({Path(confeval.__file__).parent}), {args.resamples:,} bootstrap "
          f"resamples, {os.cpu_count()} cores")
    print(f"{'rows':>12s} {'wall':>9s} {'CPU':>9s} {'CPU/wall':>9s} {'peak MB':>9s} "
          f"{'load 1 min':>11s}")
    with tempfile.TemporaryDirectory() as tmp:
        _run([*exe, "--help"], tmp)   # untimed: writes the bytecode caches an install has
        for power in (int(p) for p in args.sizes.split(",")):
            n = 10 ** power
            path = Path(tmp) / f"rows_{n}.parquet"
            _write(path, n)
            load = os.getloadavg()[0]
            wall, cpu, peak = _run([*exe, "score", str(path), "-c", "confidence", "-y",
                                    "correct", "--bootstrap", str(args.resamples), "--json"],
                                   tmp)
            print(f"{n:>12,d} {wall:8.2f}s {cpu:8.2f}s {cpu / wall:8.0%} {peak:9.0f} "
                  f"{load:11.2f}", flush=True)
            path.unlink()


if __name__ == "__main__":
    main()
