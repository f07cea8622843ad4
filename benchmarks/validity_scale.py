"""The validity checks at scale (``confeval.validity``), timed in one run.

Target (issue 40): the batch test of 10^5 calibration values against 10^5 new ones in under
1 s without permutations. Prints that (KS and the rank sum, on continuous values and on a
verbalised 0.05 grid), separately the permutation test with 1,000 permutations, the
conformal test martingale over a stream of 10^5 after 5,000 calibration values, and the risk
monitor over 10^5 labels. Not a pass/fail test (no test asserts a time).

    python benchmarks/validity_scale.py [--n 100000] [--permutations 1000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from confeval.validity import (
    conformal_martingale,
    monitor_risk,
    summarise_calibration,
    two_sample_test,
)


def best(fn, repeats: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return min(times), out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000,
                        help="values on each side of the batch test (default 100,000)")
    parser.add_argument("--permutations", type=int, default=1000,
                        help="permutations of the permutation test (default 1,000)")
    parser.add_argument("--repeats", type=int, default=3,
                        help="best of this many runs for the fast rows (default 3)")
    args = parser.parse_args(argv)
    n, b = args.n, args.permutations
    rng = np.random.default_rng(0)
    cal, new = rng.beta(5, 2, size=n), rng.beta(5, 2, size=n)
    grid_cal, grid_new = np.round(cal * 20) / 20, np.round(new * 20) / 20

    rows = []
    for label, x, y in (("continuous", cal, new), ("0.05 grid", grid_cal, grid_new)):
        for statistic in ("ks", "rank_sum"):
            t, r = best(lambda x=x, y=y, s=statistic: two_sample_test(x, y, statistic=s),
                        args.repeats)
            rows.append((f"batch test {statistic}, {n:,} vs {n:,}, {label}", t,
                         f"{r.method}, p = {r.p_value:.3g}  (target < 1 s)"))
    for statistic in ("ks", "rank_sum"):
        t, r = best(lambda s=statistic: two_sample_test(cal, new, statistic=s,
                                                        method="permutation",
                                                        n_permutations=b, seed=0), 1)
        rows.append((f"permutation test {statistic}, {n:,} vs {n:,}, {b:,} permutations", t,
                     f"p = {r.p_value:.3g}"))
    t, s = best(lambda: summarise_calibration(cal), args.repeats)
    rows.append((f"calibration summary of {n:,} (cap {s['cap']:,})", t,
                 f"{s['stored']:,} values kept"))
    t, r = best(lambda: conformal_martingale(cal[:5000], new, seed=0), 1)
    rows.append((f"martingale, 5,000 calibration + {n:,} stream", t,
                 f"alarm {r.alarm}, max M {np.exp(r.log_path.max()):.3g}"))
    wrong = rng.uniform(size=n) < 0.1
    t, m = best(lambda: monitor_risk(~wrong, target=0.1), args.repeats)
    rows.append((f"risk monitor, {n:,} labels", t, f"alarm {m.alarm}"))

    width = max(len(w) for w, _, _ in rows)
    for work, seconds, note in rows:
        print(f"{work:<{width}}  {seconds:9.4f} s  {note}")


if __name__ == "__main__":
    main()
