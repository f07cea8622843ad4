"""The corrected mean (``confeval judge mean``) at scale: 10^6 judged items of which 10^4 carry
a human score, the classical, PPI and PPI++ estimates with their intervals — ours
(:func:`confeval.judge.corrected_mean`) against ppi_py's (``classical_mean_ci``,
``ppi_mean_pointestimate`` and ``ppi_mean_ci`` with ``lam=1`` and ``lam=None``) on the same
arrays, best of ``--repeats`` interleaved runs; and the whole command on a Parquet file of the
same items (reading and validating included). Target: under 1 s for the estimates. Prints the
times and the ratio; not a pass/fail test (tests assert values, never times).

    python benchmarks/judge_mean.py [--items 1000000] [--labels 10000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import tempfile
import time
from pathlib import Path

import numpy as np


def _arrays(items: int, labels: int, seed: int):
    rng = np.random.default_rng(seed)
    human = rng.choice(np.arange(1, 6), items, p=[.1, .1, .2, .35, .25]).astype(float)
    judge = np.clip(np.round(human + 0.4 + rng.normal(0, 0.9, items)), 1, 5)
    labelled = np.zeros(items, bool)
    labelled[rng.choice(items, labels, replace=False)] = True
    return human, judge, labelled


def _best(function, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=1_000_000, help="judged items")
    parser.add_argument("--labels", type=int, default=10_000, help="of them with a human score")
    parser.add_argument("--repeats", type=int, default=5, help="runs of each (best kept)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the simulated items")
    args = parser.parse_args(argv)

    from confeval.judge import corrected_mean

    human, judge, labelled = _arrays(args.items, args.labels, args.seed)
    y, f, fu = human[labelled], judge[labelled], judge[~labelled]

    def ours():
        return corrected_mean(y, f, fu, 0.1)

    ours_s = _best(ours, args.repeats)
    print(f"{args.items:,} items, {args.labels:,} labelled: classical, PPI and PPI++ with "
          "90% intervals")
    print(f"  confeval.judge.corrected_mean:     {ours_s:8.4f} s  (target < 1 s)")
    try:
        import ppi_py
        from ppi_py.baselines import classical_mean_ci
    except ImportError:
        print("  ppi_py: not installed (pip install ppi-python) — no reference time")
        ppi_s = None
    else:
        def reference():
            classical_mean_ci(y, alpha=0.1)
            for lam in (1, None):
                ppi_py.ppi_mean_pointestimate(y, f, fu, lam=lam)
                ppi_py.ppi_mean_ci(y, f, fu, alpha=0.1, lam=lam)

        ppi_s = _best(reference, args.repeats)
        ref = ppi_py.ppi_mean_ci(y, f, fu, alpha=0.1, lam=None)
        ours_pp = ours().methods["ppi++"]
        diff = max(abs(ours_pp.low - ref[0][0]), abs(ours_pp.high - ref[1][0]))
        print(f"  ppi_py (the same three):           {ppi_s:8.4f} s  "
              f"({ppi_s / ours_s:.1f}x ours; PPI++ ends differ by {diff:.1e})")

    from confeval.cli import main as confeval

    with tempfile.TemporaryDirectory() as tmp:
        import pandas as pd

        path = Path(tmp) / "judged.parquet"
        pd.DataFrame({"judge": judge, "human": np.where(labelled, human, np.nan)}).to_parquet(
            path, index=False)
        argv_ = ["judge", "mean", str(path), "--judge-col", "judge", "--human-col", "human",
                 "--json"]

        def command():
            with contextlib.redirect_stdout(io.StringIO()):
                assert confeval(argv_) == 0

        command_s = _best(command, max(1, args.repeats // 2))
    print(f"  'confeval judge mean FILE --json': {command_s:8.4f} s  (Parquet, reading and "
          "validating included)")


if __name__ == "__main__":
    main()
