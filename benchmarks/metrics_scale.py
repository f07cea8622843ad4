"""Metrics at scale: AUROC, AUARC, ECE and RCE on 10^6 random items.

Prints the wall time of each (best of 3) and its ratio to scikit-learn's
``roc_auc_score`` on the same data, measured in this one run. Not a pass/fail test; the target
of the foundation issue is <= 2 s per metric on the project machine (2 cores).

    python benchmarks/metrics_scale.py [--n 1000000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.metrics import roc_auc_score

from confeval.metrics import auarc, auroc, expected_calibration_error, rank_calibration_error


def best_of(fn, repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    conf = rng.uniform(size=args.n)
    correct = (rng.uniform(size=args.n) < conf).astype(np.float64)
    likert = np.round(conf * 4) / 4  # heavy ties: the discrete case

    reference = best_of(lambda: roc_auc_score(correct, conf))
    rows = [
        ("sklearn roc_auc_score (reference)", reference),
        ("auroc", best_of(lambda: auroc(conf, correct))),
        ("auroc, Likert ties", best_of(lambda: auroc(likert, correct))),
        ("auarc", best_of(lambda: auarc(conf, correct))),
        ("auarc, Likert ties", best_of(lambda: auarc(likert, correct))),
        ("ece (15 bins)", best_of(lambda: expected_calibration_error(conf, correct))),
        ("rce (20 bins)", best_of(lambda: rank_calibration_error(conf, correct))),
        ("rce, Likert ties", best_of(lambda: rank_calibration_error(likert, correct))),
    ]
    print(f"n = {args.n:,} items; best of 3 runs")
    print(f"{'metric':36s} {'seconds':>9s} {'x sklearn AUROC':>16s}")
    for name, seconds in rows:
        print(f"{name:36s} {seconds:9.3f} {seconds / reference:16.2f}")
    worst = max(s for name, s in rows[1:])
    print(f"slowest confeval metric: {worst:.3f} s (target <= 2 s)")


if __name__ == "__main__":
    main()
