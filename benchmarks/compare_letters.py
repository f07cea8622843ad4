"""``confeval compare``'s group letters at scale: 300 simulated models x 100 items, every
metric of the score suite with the default options (1,000 paired resamples, Holm at 0.05),
timed whole and in its letters; then 60 models, whose letters the insert-absorb of confeval
before #36 (pair by pair, transcribed below) still computes, timed both ways on the same
separations, with their ratio and whether the letters agree. Insert-absorb took 80 s for 160
models and was killed at 900 s for 300; it is not run at that size. Not a pass/fail test.

    python benchmarks/compare_letters.py [--models 300] [--items 100] [--old-models 60]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from confeval.evaluate import compare_confidence
from confeval.metrics.compare import TooManyGroups, significance_groups


def simulated(models: int, items: int, seed: int = 0) -> dict:
    """(confidence, correct) of each model on the same items: skills and biases drawn per
    model, so some pairs differ clearly and many do not."""
    rng = np.random.default_rng(seed)
    truth = rng.random(items)
    out = {}
    for k in range(models):
        skill = rng.uniform(0.0, 1.5)
        conf = np.round(np.clip(truth * skill + rng.random(items) * (1.5 - skill / 2), 0, 1), 2)
        correct = (rng.random(items) < np.clip(truth + rng.uniform(-0.3, 0.3), 0, 1)).astype(float)
        out[f"model{k:03d}"] = (conf, correct)
    return out


def separations(table: dict, alpha: float = 0.05) -> tuple[list[str], set]:
    """(models best first, the pairs a Holm-adjusted test separates) of one metric's table."""
    order = sorted(table["models"], key=lambda n: (table["models"][n]["rank"], n))
    apart = {frozenset((p["a"], p["b"])) for p in table["pairs"]
             if p["p_holm"] == p["p_holm"] and p["p_holm"] < alpha}
    return order, apart


def letters_now(order: list[str], apart: set) -> tuple[dict, str]:
    """The letters as ``confeval compare`` gives them: every maximal group while there are at
    most 100, else the cover."""
    try:
        return significance_groups(order, apart), "maximal"
    except TooManyGroups:
        return significance_groups(order, apart, method="cover"), "cover"


def insert_absorb(order: list[str], apart: set) -> dict:
    """The letters of confeval before #36: Piepho's insert-absorb, one separated pair at a
    time, groups as bit masks (exponential where the groups are)."""
    position = {name: i for i, name in enumerate(order)}
    groups = [(1 << len(order)) - 1]
    for pair in sorted(apart, key=lambda p: sorted(position[x] for x in p)):
        a, b = (1 << position[x] for x in pair)
        split: set[int] = set()
        for g in groups:
            if g & a and g & b:
                split.update((g & ~a, g & ~b))
            else:
                split.add(g)
        split.discard(0)
        kept: list[int] = []
        for g in sorted(split, key=lambda m: -m.bit_count()):
            if not any(g & h == g for h in kept):
                kept.append(g)
        groups = kept
    members = sorted([i for i in range(len(order)) if g >> i & 1] for g in groups)
    from confeval.metrics.compare import _letters

    names = _letters(len(members))
    return {n: "".join(names[k] for k, m in enumerate(members) if i in m)
            for i, n in enumerate(order)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=300)
    parser.add_argument("--items", type=int, default=100)
    parser.add_argument("--old-models", type=int, default=60)
    args = parser.parse_args()

    start = time.perf_counter()
    doc = compare_confidence(simulated(args.models, args.items))
    whole = time.perf_counter() - start
    spent, kinds = 0.0, []
    for table in doc["metrics"].values():
        order, apart = separations(table)
        start = time.perf_counter()
        _, kind = letters_now(order, apart)
        spent += time.perf_counter() - start
        kinds.append(kind)
    pairs = len(next(iter(doc["metrics"].values()))["pairs"])
    print(f"{args.models} models x {args.items} items, {pairs:,} pairs x {len(kinds)} metrics, "
          f"1,000 paired resamples: {whole:.1f} s (letters {spent:.2f} s: every maximal group "
          f"for {kinds.count('maximal')} metrics, a cover for {kinds.count('cover')}; "
          "insert-absorb: killed at 900 s)")

    doc = compare_confidence(simulated(args.old_models, args.items))
    new = old = 0.0
    agree, compared = True, 0
    for table in doc["metrics"].values():
        order, apart = separations(table)
        start = time.perf_counter()
        letters, kind = letters_now(order, apart)
        new += time.perf_counter() - start
        start = time.perf_counter()
        before = insert_absorb(order, apart)
        old += time.perf_counter() - start
        if kind == "maximal":
            compared += 1
            agree &= letters == before
    print(f"{args.old_models} models: letters {new:.3f} s against {old:.3f} s by insert-absorb "
          f"(ratio {old / new:.1f}x); the same letters on the {compared} metrics whose maximal "
          f"groups are shown: {agree}")


if __name__ == "__main__":
    main()
