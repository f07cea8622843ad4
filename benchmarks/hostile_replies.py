"""Parsing hostile model replies in process: the time of every parser on each hostile reply of
the tests (tests/fuzz/test_parser_limits.py, tests/parse/test_diagnosis.py,
tests/parse/test_answers.py), and its time over the time of the same reply built half as long
(half the repeats: a first half would lose the reply's end, often what is read). A linear
parser gives a ratio near 2, a quadratic one near 4 (the bracket reply that once took 15 GB
was worse). Target: each parse < 5 s, each ratio < 3. Not a pass/fail test: the tests check
what is read from these replies, this script how long it takes.

Each figure is the best of ``--repeats`` rounds, the reply and its half interleaved within a
round, so that a burst of load on the machine slows both sides of a ratio alike.

    python benchmarks/hostile_replies.py [--scale 1.0] [--repeats 3]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from confeval.parse import (
    MAX_REPLY_CHARS,
    extract_score_from_text,
    parse_step_judgement,
)
from confeval.parse.answers import check_answer
from confeval.parse.diagnosis import parse_diagnosis


def replies(scale: float) -> dict[str, str]:
    """The hostile replies of the tests, each repeated ``scale`` times as often."""
    def k(count: int) -> int:
        return max(1, int(count * scale))

    return {
        "brackets": "[" * k(100_000) + "]" * k(100_000),
        "nested lists just under the cap": "[" * k(MAX_REPLY_CHARS // 2 - 10) + "]" * 10,
        "quotes": '["' + '" "' * k(300_000) + '"]',
        "closing quotes": "[[1, 0.5, " + '"a"b' * k(240_000) + "]]",
        "backslashes": '["' + "\\" * k(900_000) + '"]',
        "tags": "<evaluation>[" * k(70_000),
        "fences": "```\n[{" * k(150_000),
        "many brackets then a list": "{" * k(400_000) + '[["s", 1, 0.9, ""]]',
        "score anchors": "Score: " * k(140_000),
        "20 brackets then quotes": "[" * 20 + '"' + 'a"b' * k(300_000),
        "diagnosis: a long chain": "The chain is long. " * k(47_000) + "Answer: C",
        "diagnosis: markers": "answer: " * k(110_000),
        "diagnosis: parentheses": "(" * k(900_000) + "B",
        "diagnosis: dots": "B) x" + "." * k(990_000) + "y",
        "diagnosis: spaces": "B" + " " * k(990_000) + "x",
        "diagnosis: boxes": "\\boxed{" * k(90_000),
        "diagnosis: a name, spaces": "reasoning" + " " * k(990_000) + "x",
        "diagnosis: lines": "A\n" * k(450_000),
        "diagnosis: think tags": "<think>" * k(100_000) + "B",
        "answers: markers": "answer: " * k(120_000) + "5",
    }


PARSERS: dict[str, Callable[[str], object]] = {
    "steps": lambda text: parse_step_judgement(text, 3),
    "score": extract_score_from_text,
    "diagnosis": parse_diagnosis,
    "answer": lambda text: check_answer(text, 5),
}


def parsers_of(name: str) -> list[str]:
    """The parsers a reply was written against (the step soups: the step and score parsers)."""
    for prefix in ("diagnosis", "answer"):
        if name.startswith(prefix):
            return [prefix]
    return ["steps", "score"]


def best_seconds(parse: Callable[[str], object], texts: list[str], repeats: int) -> list[float]:
    """The best time of ``parse`` on each text over ``repeats`` rounds, texts interleaved."""
    best = [float("inf")] * len(texts)
    for _ in range(repeats):
        for i, text in enumerate(texts):
            started = time.perf_counter()
            parse(text)
            best[i] = min(best[i], time.perf_counter() - started)
    return best


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0,
                        help="Reply lengths relative to the tests' (default 1).")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    print(f"{'reply':34s} {'parser':9s} {'chars':>9s} {'whole s':>8s} {'half s':>8s} "
          f"{'ratio':>6s}   (targets: < 5 s, ratio < 3)")
    halves = replies(args.scale / 2)
    for name, text in replies(args.scale).items():
        for parser_name in parsers_of(name):
            whole, half = best_seconds(PARSERS[parser_name], [text, halves[name]],
                                       args.repeats)
            ratio = whole / half if half > 0 else float("nan")
            print(f"{name:34s} {parser_name:9s} {len(text):9,d} {whole:8.3f} {half:8.3f} "
                  f"{ratio:6.2f}")


if __name__ == "__main__":
    main()
