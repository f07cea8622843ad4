"""Live scoring throughput on the embedded model: a 5-option question set scored in process,
batched on a shared prefix (the prompt run once, its key/value cache reused by every option)
against one option at a time (the prompt repeated for each option, batch size 1), measured in
one run. Target (issue 14): at least 3x. Not a pass/fail test.

Two workloads, both 5 options per question:
* ``judge``   — a 1-5 rating after a grading rubric, each option "Score: k" (the intervals
  suite's scored mode): continuations of 3-4 tokens after a ~150-token prompt;
* ``measures`` — MCQA-Eval's white-box pass: each option injected after the question and
  scored token by token (CommonsenseQA options when ../shared/data is present, else built-in
  arithmetic options).

    python benchmarks/live_throughput.py [--questions 30]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from pathlib import Path

import numpy as np

CQA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "commonsenseqa" / \
    "dev_rand_split.jsonl"


def _workloads(n: int):
    from confeval.backends import raw_prompt
    from confeval.suites.intervals.live import LEVELS, build_judge_messages
    from confeval.suites.measures.live import GENERATION_PROMPT
    from confeval.tasks import load_builtin

    judge = [(build_judge_messages(it, direct=True), [f"Score: {k}" for k in LEVELS])
             for it in load_builtin("arith-judge", n, 0)]
    if CQA.is_file():
        from confeval.suites._multiple_choice import load_mc_items

        items = load_mc_items(str(CQA), n)
    else:
        items = [{**it, "options": it["options"][:5]} for it in load_builtin("arith-mc", n, 0)]
    measures = [(raw_prompt(GENERATION_PROMPT.format(question=it["question"])),
                 [" " + o for o in it["options"][:5]]) for it in items]
    return {"judge": judge, "measures": measures}


def _time(backend, work, per_token: bool) -> tuple[float, list]:
    started = time.perf_counter()
    out = []
    for messages, conts in work:
        if per_token:
            out.append([sum(s.logprobs) for s in
                        asyncio.run(backend.score_tokens(messages, conts))])
        else:
            out.append(asyncio.run(backend.score(messages, conts)))
    return time.perf_counter() - started, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=30)
    args = parser.parse_args()
    from confeval.backends.local import local_backend

    backend = local_backend()
    for name, work in _workloads(args.questions).items():
        per_token = name == "measures"
        backend.kv_reuse, backend.batch_size = True, 8
        _time(backend, work[:2], per_token)  # warm-up
        fast_s, fast = _time(backend, work, per_token)
        backend.kv_reuse, backend.batch_size = False, 1
        slow_s, slow = _time(backend, work, per_token)
        diff = float(np.max(np.abs(np.array(fast) - np.array(slow))))
        n = len(work)
        print(f"{name:9s} {n} questions x 5 options: shared prefix, batched "
              f"{n / fast_s:6.2f} questions/s; one option at a time {n / slow_s:6.2f} "
              f"questions/s; ratio {slow_s / fast_s:.2f} (target >= 3); largest difference "
              f"{diff:.1e}")


if __name__ == "__main__":
    main()
