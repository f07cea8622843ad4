"""builtin:arith-diagnose: one error of a known type at a known step, or none; seeded."""

import base64
import io
import re
from collections import Counter

from PIL import Image

from confeval.tasks import load_builtin


def _numbers(step):
    return [int(x) for x in re.findall(r"\d+", step)]


def test_types_steps_and_answer_keys():
    items = load_builtin("arith-diagnose", 400, 3)
    counts = Counter(it["gold_type"] for it in items)
    assert set(counts) == {"vpe", "re", "qce", "kde", "no_error"}
    assert min(counts.values()) > 40
    for it in items:
        steps = it["steps"]
        assert it["chain"].splitlines()[0].startswith("Step 1: ")
        if it["gold_type"] == "no_error":
            assert it["error_step"] == -1 and it["chain_answer"] == it["correct_answer"]
            continue
        assert it["chain_answer"] != it["correct_answer"]
        wrong = steps[it["error_step"]]
        if it["gold_type"] == "kde":
            assert wrong == "A dozen is 10 pens."
        elif it["gold_type"] == "vpe":
            assert wrong.startswith("The inventory card shows") and it["image"]
        elif it["subtype"] == "wrong_arithmetic":
            a, b, result = _numbers(wrong.split(":")[-1])[-3:]
            assert result not in (a + b, a - b, a * b)
        elif it["subtype"] == "wrong_operation":
            assert "+" in wrong or "−" in wrong
        elif it["subtype"] == "wrong_target":
            assert wrong.endswith("boxes.")


def test_images_are_real_pngs_and_the_task_is_seeded():
    items = load_builtin("arith-diagnose", 60, 1)
    with_image = [it for it in items if it["image"]]
    assert with_image
    png = base64.b64decode(with_image[0]["image"].split(",", 1)[1])
    assert Image.open(io.BytesIO(png)).size == (240, 90)
    assert load_builtin("arith-diagnose", 60, 1) == items
    assert load_builtin("arith-diagnose", 60, 2) != items
