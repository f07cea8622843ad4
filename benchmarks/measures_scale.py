"""Black-box measures at the scale of CommonsenseQA: 1,221 questions x 5 options, 20 sampled
answers each, Jaccard similarity — Deg(J) and Ecc(J) of every option by Algorithm 1 (the
samples' matrix once per question, one row per option, batched eigendecompositions) against a
naive recomputation of the whole (21 x 21) similarity matrix and its measures per option,
measured in one run. Target (issue 12, Jaccard part): <= 60 s; not a pass/fail test.

The samples are simulated (no model here): each is an option text of the question or a
paraphrase-like variant with extra words, drawn with a seeded generator. The option texts are
CommonsenseQA's when ../shared/data is present, else simulated too.

    python benchmarks/measures_scale.py [--questions 1221] [--samples 20]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from confeval.measures import degree, eccentricity, jaccard_similarity, option_confidences

CQA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "commonsenseqa" / \
    "dev_rand_split.jsonl"
FILLER = ["the", "a", "maybe", "probably", "answer", "is", "it", "I", "think", "likely"]


def _questions(n: int, rng: np.random.Generator) -> list[list[str]]:
    if CQA.is_file():
        from confeval.suites.measures import load_mcq_items

        return [it["options"] for it in load_mcq_items(str(CQA))[:n]]
    words = [f"w{i}" for i in range(2000)]
    return [[" ".join(rng.choice(words, rng.integers(1, 4))) for _ in range(5)]
            for _ in range(n)]


def _samples(options: list[str], m: int, rng: np.random.Generator) -> list[str]:
    out = []
    for _ in range(m):
        text = options[int(rng.integers(len(options)))]
        extra = rng.choice(FILLER, rng.integers(0, 3)).tolist()
        out.append(" ".join([*extra, text]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=1221)
    parser.add_argument("--samples", type=int, default=20)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    questions = _questions(args.questions, rng)
    samples = [_samples(opts, args.samples, rng) for opts in questions]

    started = time.perf_counter()
    fast = []
    for opts, sam in zip(questions, samples):
        base = jaccard_similarity(sam)
        cross = np.array([[jaccard_similarity([o, s])[0, 1] for s in sam] for o in opts])
        fast.append(option_confidences(base, cross))
    fast_s = time.perf_counter() - started

    started = time.perf_counter()
    naive = []
    for opts, sam in zip(questions, samples):
        per = {"degree": [], "eccentricity": []}
        for o in opts:
            full = jaccard_similarity([*sam, o])
            per["degree"].append(degree(full).confidence[-1])
            per["eccentricity"].append(eccentricity(full).confidence[-1])
        naive.append(per)
    naive_s = time.perf_counter() - started

    diff = max(max(np.max(np.abs(f[k] - np.array(v[k]))) for k in ("degree", "eccentricity"))
               for f, v in zip(fast, naive))
    rows = sum(len(o) for o in questions)
    print(f"{len(questions):,} questions, {rows:,} options, {args.samples} samples each "
          f"(Jaccard)")
    print(f"Algorithm 1 (reused matrix, batched eigh): {fast_s:6.2f} s  "
          f"({rows / fast_s:,.0f} options/s; target <= 60 s)")
    print(f"naive (full matrix and measures per option): {naive_s:6.2f} s  "
          f"ratio naive / Algorithm 1 = {naive_s / fast_s:.2f}")
    print(f"largest difference between the two: {diff:.1e}")


if __name__ == "__main__":
    main()
