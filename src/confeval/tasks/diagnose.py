"""``arith-diagnose``: seeded reasoning chains with exactly one error of a known MMErroR type at a
known step (or none), for the diagnose suite.

Every item is a word problem about a shop's pens, solved in four steps, with a numeric answer
key (``correct_answer``) and the error's step (``error_step``, -1 when error-free):

* **RE** (reasoning) — wrong arithmetic ("77 − 31 = 44") or the wrong operation (adding what
  was sold), from :func:`~confeval.tasks.builtin.arith_steps`' generator;
* **QCE** (question comprehension) — a quantity the problem does not give for it (the number of
  new boxes used as the number sold), a dropped constraint (the boxes received are ignored), or
  the wrong target (the chain counts boxes when pens are asked for);
* **KDE** (knowledge deployment) — a wrong fact: the problem counts pens in dozens and the chain
  states "a dozen is 10 pens";
* **VPE** (visual perception) — the number of boxes is shown only on an inventory card (a
  generated PNG, inline as a ``data:`` URL) and the chain misreads it (a swapped or neighbouring
  digit) before computing correctly. Text-only models cannot see it: the suite counts and
  excludes these items for them.

Steps after an error compute correctly from the values before them. Half of the problems (of
every type) count pens in dozens, so the wording does not give the KDE items away; likewise the
inventory card appears in problems of other types too, read correctly there.
"""

from __future__ import annotations

import base64
import io

import numpy as np

from ..taxonomy import MMERROR_LETTER_ORDER
from ._chains import steps_for

__all__ = ["DIAGNOSE_TYPES", "arith_diagnose", "inventory_card"]

DIAGNOSE_TYPES = MMERROR_LETTER_ORDER
"""Gold types of the task: the four MMErroR error types and ``no_error``."""

_SUBTYPES = {"re": ("wrong_arithmetic", "wrong_operation"),
             "qce": ("quantity_not_given", "dropped_constraint", "wrong_target"),
             "kde": ("wrong_fact",), "vpe": ("misread_image",), "no_error": ("none",)}


def inventory_card(boxes: int) -> str:
    """A small PNG card that shows the number of boxes, as a ``data:`` URL (deterministic)."""
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (240, 90), "white")
    draw = ImageDraw.Draw(image)
    draw.rectangle((2, 2, 237, 87), outline="black", width=2)
    draw.text((14, 14), "INVENTORY CARD", fill="black")
    draw.text((14, 46), f"Boxes in stock: {boxes}", fill="black")
    buf = io.BytesIO()
    image.save(buf, format="PNG", optimize=False)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _misread(value: int, rng: np.random.Generator) -> int:
    digits = str(value)
    if len(digits) == 2 and digits[0] != digits[1] and rng.uniform() < 0.5:
        return int(digits[::-1])
    return value + int(rng.choice([-1, 1])) * int(rng.integers(1, 3))


def _problem(a: int, b: int, c: int, d: int, *, dozens: bool, card: bool) -> str:
    per_box = "a dozen pens" if dozens else f"{b} pens"
    boxes = "the number of boxes on its inventory card" if card else f"{a} boxes"
    return (f"A shop has {boxes}, each with {per_box}. It sells {c} pens and then receives "
            f"{d} more boxes like these. How many pens does it have now?")


def _chain(a, b, c, d, gold, subtype, error_step, rng, *, dozens, card):
    """Steps and the chain's own final value for one item."""
    seen = a
    prefix = []
    if card:
        seen = _misread(a, rng) if gold == "vpe" else a
        prefix = [f"The inventory card shows {seen} boxes."]
    if gold == "kde":
        b_used = 10
        prefix.append("A dozen is 10 pens.")
    else:
        b_used = b
        if dozens:
            prefix.append("A dozen is 12 pens.")
    if gold == "re":
        kind = "numerical_calculation" if subtype == "wrong_arithmetic" else "reasoning"
        steps, final = steps_for(seen, b_used, c, d, error_step, kind, rng)
    elif gold == "qce" and subtype == "quantity_not_given":
        steps, final = steps_for(seen, b_used, c, d, error_step, "question_understanding", rng)
    else:
        steps, final = steps_for(seen, b_used, c, d, -1, "", rng)
        if gold == "qce" and subtype == "dropped_constraint":
            left = seen * b_used - c
            steps[2:] = [f"So the shop has {left} pens now."]
            final = left
        elif gold == "qce" and subtype == "wrong_target":
            steps[3] = f"Total: {seen} + {d} = {seen + d} boxes."
            final = seen + d
    return prefix + steps, final, len(prefix)


def arith_diagnose(n: int = 200, *, seed: int = 0, error_rate: float = 0.8) -> list[dict]:
    """``n`` items ``{item_id, question, chain, steps, gold_type, subtype, error_step,
    correct_answer, chain_answer, image, domain, subdomain}`` (module docstring)."""
    rng = np.random.default_rng(seed)
    types = [t for t in DIAGNOSE_TYPES if t != "no_error"]
    items = []
    for i in range(n):
        gold = str(rng.choice(types)) if rng.uniform() < error_rate else "no_error"
        subtype = str(rng.choice(_SUBTYPES[gold]))
        dozens = gold == "kde" or bool(rng.uniform() < 0.5)
        card = gold == "vpe" or bool(rng.uniform() < 0.25)
        while True:
            a, d = int(rng.integers(12, 40)), int(rng.integers(2, 9))
            b = 12 if dozens else int(rng.integers(4, 11))
            c = int(rng.integers(2, a * b // 2))
            step = {"re": int(rng.integers(4)), "qce": int(rng.integers(2))}.get(gold, -1)
            steps, final, offset = _chain(a, b, c, d, gold, subtype, step, rng,
                                          dozens=dozens, card=card)
            correct = a * b - c + d * b
            if (gold == "no_error") == (final == correct):
                break
        error_step = {"vpe": 0, "kde": offset - 1, "no_error": -1}.get(gold)
        if error_step is None:  # RE/QCE: where the injected step landed after the prefix
            error_step = offset + (step if subtype in ("wrong_arithmetic", "wrong_operation",
                                                       "quantity_not_given")
                                   else (2 if subtype == "dropped_constraint" else 3))
        items.append({
            "item_id": f"arith-diagnose-{i}", "question": _problem(a, b, c, d, dozens=dozens,
                                                                   card=card),
            "steps": steps, "chain": "\n".join(f"Step {k + 1}: {s}" for k, s in enumerate(steps)),
            "gold_type": gold, "subtype": subtype, "error_step": error_step,
            "correct_answer": correct, "chain_answer": final,
            "image": inventory_card(a) if card else None,
            "domain": "arithmetic", "subdomain": "dozens" if dozens else "boxes"})
    return items
