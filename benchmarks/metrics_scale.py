"""Metrics at scale: AUROC, AUARC, ECE and RCE on 10^6 random items.

Prints the wall time of each (best of 5) and its ratio to scikit-learn's
``roc_auc_score`` on the same data, measured in this one run; and AUARC against the two peer
implementations the hardening issue compared with, re-implemented here from their published
formulas (both break ties by row order; ours keeps the order-free tie rule):

* LM-Polygraph (``ue_metrics/pred_rej_area.py``): min-max normalise the target, argsort,
  cumulative sum over k, mean of the running means (plus its array append);
* UQ-NLG (``area_under_accuracy_coverage_curve``): pandas sort, expanding mean, and
  ``sklearn.metrics.auc`` over ``linspace(0, 1, n)``.

Not a pass/fail test; the targets are <= 2 s per metric on the project machine (2 cores) and
AUARC at least as fast as both peers (ratio >= 1).

    python benchmarks/metrics_scale.py [--n 1000000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
from sklearn import metrics as skm
from sklearn.metrics import roc_auc_score

from confeval.metrics import auarc, auroc, expected_calibration_error, rank_calibration_error


def best_of(fn, repeats: int = 5) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def lm_polygraph_auarc(confidence: np.ndarray, target: np.ndarray) -> float:
    """LM-Polygraph's PredictionRejectionArea, step for step (its estimator is an uncertainty:
    here -confidence, so that the most confident come first as in our AUARC)."""
    estimator = -confidence
    lo, hi = np.min(target), np.max(target)           # normalize(target)
    target = (np.array(target) - lo) / (hi - lo)
    ue = -np.array(estimator)
    num_obs = len(ue)
    ue_argsort = np.argsort(-ue)                       # most certain first
    sorted_metrics = np.array(target)[ue_argsort]
    cumsum = np.cumsum(sorted_metrics)
    scores = (cumsum / np.arange(1, num_obs + 1))[::-1]
    prr_score = np.sum(scores) / num_obs
    np.append(scores, 1)
    return float(prr_score)


def uq_nlg_auarc(confidence: np.ndarray, target: np.ndarray) -> float:
    """UQ-NLG's area under the accuracy-coverage curve (uncertainty = -confidence)."""
    df = pd.DataFrame({"u": -confidence, "a": target}).sort_values("u", ascending=True)
    df["amean"] = df["a"].expanding().mean()
    return float(skm.auc(np.linspace(0, 1, len(df)), df["amean"]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--bootstrap", type=int, default=0,
                        help="also time evaluate_confidence with this many resamples (the "
                             "count-weighted path; 1000 takes minutes at 10^6)")
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
    ours = best_of(lambda: auarc(conf, correct))
    peers = {"LM-Polygraph": best_of(lambda: lm_polygraph_auarc(conf, correct)),
             "UQ-NLG": best_of(lambda: uq_nlg_auarc(conf, correct))}
    # the same number without ties (the peers' trapezoid/mean conventions as theirs)
    assert abs(lm_polygraph_auarc(conf, correct) - auarc(conf, correct)) < 1e-9
    assert abs(uq_nlg_auarc(conf, correct) - auarc(conf, correct, integration="trapezoid")) < 1e-9
    print(f"n = {args.n:,} items; best of 5 runs")
    print(f"{'metric':36s} {'seconds':>9s} {'x sklearn AUROC':>16s}")
    for name, seconds in rows:
        print(f"{name:36s} {seconds:9.3f} {seconds / reference:16.2f}")
    worst = max(s for name, s in rows[1:])
    print(f"slowest confeval metric: {worst:.3f} s (target <= 2 s)")
    if args.bootstrap:
        from confeval.evaluate import evaluate_confidence

        started = time.perf_counter()
        evaluate_confidence(conf, correct, n_resamples=args.bootstrap)
        print(f"evaluate_confidence with {args.bootstrap} resamples: "
              f"{time.perf_counter() - started:.1f} s")
    print(f"\nAUARC, {args.n:,} untied items: confeval {ours:.4f} s")
    for name, seconds in peers.items():
        print(f"  {name:14s} {seconds:.4f} s   ratio peer / confeval = {seconds / ours:.2f} "
              "(target >= 1)")


if __name__ == "__main__":
    main()
