"""Procedurally generated tasks with verifiable gold answers (seeded, shippable, offline).

The public datasets cannot be shipped with confeval, so every suite's live path and the demo
can run on these instead (``--data builtin:NAME``).

``arith-mc``
    Multiple-choice questions with 4-6 options: arithmetic ("What is 37 × 4?") and unit
    conversions ("How many centimetres are in 3.5 metres?"). Distractors are the mistakes
    people make (off by one, a slipped digit, the wrong operation, a factor of ten), so they
    are plausible. The gold letter is uniformly placed.

``arith-steps``
    Four-step word problems (boxes of pens bought, sold and restocked) solved step by step.
    A share of chains (``error_rate``, default 0.75) carries exactly one injected error at a
    known step, of a known type:

    * ``numerical_calculation`` — right operation and numbers, wrong result;
    * ``reasoning`` — the wrong operation (adds what should be subtracted, ...);
    * ``question_understanding`` — a number the problem does not use for that quantity;
    * ``symbolic_calculation`` — the final step combines the terms with invalid algebra.

    Steps after the error compute correctly from the (wrong) values before them, so they are
    labelled correct: only the injected step is wrong (label 0). The rest are error-free chains.

``arith-judge``
    Candidate answers to grade 1-5 against a reference, for the judge suites.

``arith-pairwise``
    Two answers to one question, one right and one wrong, in random slots, one of them padded
    with sentences that add nothing: for position and length tests of a pairwise judge.
"""

from __future__ import annotations

import re
import string

import numpy as np

from .._registry import Registry
from ..taxonomy import error_types
from ._chains import steps_for
from .diagnose import arith_diagnose

__all__ = ["BUILTIN_TASKS", "ERROR_TYPES", "arith_mc", "arith_pairwise", "arith_steps",
           "load_builtin"]

ERROR_TYPES = ("numerical_calculation", "reasoning", "question_understanding",
               "symbolic_calculation")
"""The ConfProBench types (:mod:`confeval.taxonomy`) that arith-steps injects, in draw order."""
assert set(ERROR_TYPES) <= set(error_types("confprobench"))

_UNITS = [  # (from, to, factor)
    ("metres", "centimetres", 100), ("kilometres", "metres", 1000), ("kilograms", "grams", 1000),
    ("litres", "millilitres", 1000), ("hours", "minutes", 60), ("minutes", "seconds", 60),
]


def _fmt(x: float) -> str:
    return f"{x:g}" if float(x) != int(x) else str(int(x))


def _arith_question(rng: np.random.Generator) -> tuple[str, float, list[float]]:
    a, b = int(rng.integers(12, 99)), int(rng.integers(3, 19))
    op = rng.choice(["+", "−", "×"])
    if op == "+":
        right, wrong_op = a + b, a - b
    elif op == "−":
        right, wrong_op = a - b, a + b
    else:
        right, wrong_op = a * b, a + b
    distractors = [right + 1, right - 1, right + 10, right - 10, wrong_op, right * 10]
    return f"What is {a} {op} {b}?", right, distractors


def _units_question(rng: np.random.Generator) -> tuple[str, float, list[float]]:
    src, dst, factor = _UNITS[int(rng.integers(len(_UNITS)))]
    value = float(rng.integers(2, 40)) / (2 if rng.uniform() < 0.5 else 1)
    right = value * factor
    distractors = [value * factor / 10, value * factor * 10, value / factor, value + factor,
                   right + factor]
    return f"How many {dst} are in {_fmt(value)} {src}?", right, distractors


def arith_mc(n: int = 200, *, seed: int = 0, min_options: int = 4,
             max_options: int = 6) -> list[dict]:
    """``n`` multiple-choice items: ``item_id, question, options, answer, category``."""
    if not 2 <= min_options <= max_options <= 26:
        raise ValueError("need 2 <= min_options <= max_options <= 26")
    rng = np.random.default_rng(seed)
    items = []
    for i in range(n):
        category = "units" if rng.uniform() < 0.4 else "arithmetic"
        question, right, distractors = (_units_question if category == "units"
                                        else _arith_question)(rng)
        k = int(rng.integers(min_options, max_options + 1))
        pool = list(dict.fromkeys(d for d in distractors if d != right))
        picked = [pool[j] for j in rng.permutation(len(pool))[:k - 1]]
        while len(picked) < k - 1:  # top up with off-by-n values if the pool was small
            extra = right + int(rng.integers(2, 50)) * (1 if rng.uniform() < 0.5 else -1)
            if extra != right and extra not in picked:
                picked.append(extra)
        options = picked
        gold = int(rng.integers(k))
        options.insert(gold, right)
        items.append({"item_id": f"arith-mc-{i}", "question": question,
                      "options": [_fmt(o) for o in options],
                      "answer": string.ascii_uppercase[gold], "category": category})
    return items


def arith_steps(n: int = 200, *, seed: int = 0, error_rate: float = 0.75) -> list[dict]:
    """``n`` step-by-step solutions in the ``steps`` suite's format: ``item_id, problem,
    final_answer`` (the correct answer, shown to a judge), ``steps, labels, error_types``
    (per step), plus ``error_step, error_type`` and ``student_answer`` (``error_step`` -1 and
    ``error_type`` "" when the chain is error-free)."""
    rng = np.random.default_rng(seed)
    items = []
    for i in range(n):
        error_step, error_type = -1, ""
        if rng.uniform() < error_rate:
            error_type = str(rng.choice(ERROR_TYPES))
            error_step = 3 if error_type == "symbolic_calculation" else int(rng.integers(4))
        while True:  # redraw until no step, even after the error, counts negative pens
            a, b = int(rng.integers(3, 20)), int(rng.integers(4, 13))
            c = int(rng.integers(2, a * b - 1))
            d = int(rng.integers(2, 9))
            if d == b:
                continue
            steps, final = steps_for(a, b, c, d, error_step, error_type, rng)
            correct = a * b - c + d * b
            negative = any(re.search(r"(?<![\d)])-\d", step) for step in steps)
            if not negative and (error_step < 0 or final != correct):
                break
        problem = (f"A shop has {a} boxes with {b} pens in each box. It sells {c} pens and "
                   f"then receives {d} more boxes of {b} pens. How many pens does it have now?")
        items.append({"item_id": f"arith-steps-{i}", "problem": problem, "steps": steps,
                      "labels": [0 if s == error_step else 1 for s in range(len(steps))],
                      "error_types": [error_type if s == error_step else ""
                                      for s in range(len(steps))],
                      "error_step": error_step, "error_type": error_type,
                      "final_answer": correct, "student_answer": final})
    return items


def _judge_grade(rel_error: float) -> int:
    """The reference 1-5 grade of an answer by its relative error: exact 5, within 2% 4,
    within 10% 3, within 50% 2, else 1."""
    for bound, grade in ((0.0, 5), (0.02, 4), (0.10, 3), (0.50, 2)):
        if rel_error <= bound:
            return grade
    return 1


def arith_judge(n: int = 200, *, seed: int = 0) -> list[dict]:
    """Answers to grade 1-5 (for judge suites): a word-problem or arithmetic question, a
    candidate answer, and its reference grade ``gt_score`` from the relative error (see
    :func:`_judge_grade`). Candidate errors are drawn so every grade occurs."""
    rng = np.random.default_rng(seed)
    items = []
    for i in range(n):
        make = _arith_question if rng.uniform() < 0.5 else _units_question
        question, right, _ = make(rng)
        while right == 0:  # a relative error needs a non-zero answer
            question, right, _ = make(rng)
        grade_wanted = int(rng.integers(1, 6))
        # relative error inside the band of the wanted grade (strictly, away from its edges)
        band = {5: (0.0, 0.0), 4: (0.004, 0.018), 3: (0.03, 0.09), 2: (0.15, 0.45),
                1: (0.7, 3.0)}[grade_wanted]
        rel = float(rng.uniform(*band))
        if rel < 1 and rng.uniform() < 0.5:  # too low as often as too high, never negative
            rel = -rel
        answer = right * (1 + rel)
        shown = round(answer, 2) if answer != int(answer) else int(answer)
        rel_error = abs(shown - right) / abs(right) if right else abs(shown)
        items.append({"item_id": f"arith-judge-{seed}-{i}", "question": question,
                      "response": f"The answer is {_fmt(shown)}.",
                      "reference": _fmt(right), "gt_score": _judge_grade(rel_error)})
    return items


_PADDING = ("Let me explain how this follows.", "We start from the numbers in the question.",
            "Each step is checked once more.", "The units are kept the same throughout.",
            "Nothing else in the question changes the result.", "So the result stands.")


def arith_pairwise(n: int = 200, *, seed: int = 0) -> list[dict]:
    """Pairs of answers to compare (for ``confeval judge position``): a question, a right and a
    wrong answer in random slots (``answer_a``, ``answer_b``), the right one's letter as the
    human pick (``human``), and one of the two — drawn independently of which is right —
    padded with two to six sentences that add nothing (``padded``: ``a`` or ``b``), so that a
    preference for length can be told from a preference for the right answer."""
    rng = np.random.default_rng(seed)
    items = []
    for i in range(n):
        make = _arith_question if rng.uniform() < 0.5 else _units_question
        question, right, distractors = make(rng)
        wrong = [d for d in dict.fromkeys(distractors) if d != right]
        answers = [f"The answer is {_fmt(right)}.",
                   f"The answer is {_fmt(wrong[int(rng.integers(len(wrong)))])}."]
        right_slot = int(rng.integers(2))
        if right_slot == 1:
            answers.reverse()
        padded = int(rng.integers(2))
        extra = rng.permutation(len(_PADDING))[:int(rng.integers(2, 7))]
        answers[padded] += " " + " ".join(_PADDING[j] for j in sorted(extra))
        items.append({"item_id": f"arith-pairwise-{seed}-{i}", "question": question,
                      "answer_a": answers[0], "answer_b": answers[1],
                      "human": "ab"[right_slot], "padded": "ab"[padded]})
    return items


BUILTIN_TASKS = Registry("built-in task", {
    "arith-mc": arith_mc, "arith-steps": arith_steps, "arith-judge": arith_judge,
    "arith-diagnose": arith_diagnose, "arith-pairwise": arith_pairwise})


def load_builtin(name: str, n: int = 200, seed: int = 0) -> list[dict]:
    """Items of a built-in task by name (``arith-mc``, ``arith-steps``, ``arith-judge``,
    ``arith-pairwise`` or ``arith-diagnose``, see :mod:`confeval.tasks.diagnose`), drawn
    with ``seed``; a name ``TASK@SEED`` names its own draw (:func:`data_seed`)."""
    task, _, own = name.partition("@")
    return BUILTIN_TASKS[task](n, seed=int(own) if own else seed)


def data_seed(data: str, run_seed: int) -> int:
    """The seed a live run draws its items with: a built-in task is a fixed dataset —
    ``builtin:NAME`` draws with 0, ``builtin:NAME@SEED`` with SEED — whatever the run's own
    ``--seed`` (which seeds its sampling, splits and resamples), so that runs with different
    seeds ask the same items and can be compared item by item; a data file's items are read
    with the run's seed."""
    if not data.startswith("builtin:"):
        return run_seed
    _, _, own = data.partition("@")
    if own and not own.isdigit():
        raise ValueError(f"--data {data!r}: builtin:NAME@SEED takes a whole number")
    return int(own) if own else 0
