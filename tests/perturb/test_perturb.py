"""Perturbation generators: validators on rewrites that must pass and must fail, seeded
model rewrites with retries, deterministic image perturbations, originals beside perturbed items."""

import asyncio
import json

import numpy as np
import pytest
from PIL import Image

from confeval.backends import ScriptedBackend
from confeval.perturb import (
    perturb_image,
    perturb_images,
    perturb_text,
    protected_content,
    validate_rewrite,
    with_originals,
)
from confeval.suites.steps import load_step_items

STEP = "Then $v_f = v_0 + at$ gives v_f = 3 + 2 × 4 = 11 m/s, so the cart moves faster."

PASS = [
    ("lexical", "Next $v_f = v_0 + at$ yields v_f = 3 + 2 × 4 = 11 m/s, so the cart travels "
                "faster."),
    ("syntactic", "So the cart moves faster, since $v_f = v_0 + at$ gives v_f = 3 + 2 × 4 = "
                  "11 m/s."),
    ("lexical", "Then $v_f=v_0+at$ gives v_f = 3 + 2 × 4 = 11 m/s, so the trolley moves "
                "quicker."),  # LaTeX spacing is not a change
]
FAIL = [
    ("lexical", "Then $v_f = v_0 + at$ gives v_f = 3 + 2 × 4 = 12 m/s, so the cart moves "
                "faster.", "numbers_changed"),
    ("lexical", "Then $v_f = u + at$ gives v_f = 3 + 2 × 4 = 11 m/s, so the cart moves "
                "faster.", "latex_changed"),
    ("syntactic", "Then $v_f = v_0 + at$ gives v = 3 + 2 × 4 = 11 m/s, so the cart moves "
                  "faster.", "variables_changed"),
    ("lexical", STEP, "unchanged"),
    ("lexical", "Then $v_f = v_0 + at$ gives v_f = 3 + 2 × 4 = 11 m/s.", "length_changed"),
    ("lexical", "Then $v_f = v_0 + at$ gives v_f = 3 + 2 × 4 = 11 m/s, so the cart faster "
                "moves.", "no_word_replaced"),  # reordered, no synonym
    ("syntactic", "", "empty"),
]


@pytest.mark.parametrize("kind,rewrite", PASS)
def test_valid_rewrites_pass(kind, rewrite):
    assert validate_rewrite(STEP, rewrite, kind=kind) == []


@pytest.mark.parametrize("kind,rewrite,problem", FAIL)
def test_invalid_rewrites_fail_for_the_right_reason(kind, rewrite, problem):
    assert problem in validate_rewrite(STEP, rewrite, kind=kind)


def test_protected_content_examples():
    got = protected_content("If x2 = 1,200 and F=ma then a −3 shift; A cat.")
    assert dict(got["numbers"]) == {"1200": 1, "-3": 1}  # the 2 of x2 is the variable's
    assert got["formulas"]["F=ma"] == 1 and got["variables"]["x2"] == 1
    assert "A" not in got["variables"] and "a" not in got["variables"]


def _rewriter(valid_after: int):
    """Replies with invalid rewrites for the first ``valid_after`` calls, then valid ones."""
    calls = {"n": 0}

    def reply(messages, params, i):
        calls["n"] += 1
        step = messages[-1]["content"].rsplit("Sentence: ", 1)[1]
        if calls["n"] <= valid_after:
            return json.dumps({"rewrites": [step, step.replace("4", "5")]})
        if "transformation" in messages[-1]["content"]:
            return json.dumps({"rewrites": [
                {"transformation": "clause_order", "text": "Indeed, " + step},
                {"transformation": "made_up", "text": "Truly, " + step}]})
        return json.dumps({"rewrites": ["Indeed, " + step, "Truly, " + step, "Alas"]})

    return reply


@pytest.mark.parametrize("kind", ["lexical", "syntactic"])
def test_text_perturbation_is_validated_seeded_and_recorded(kind):
    items = load_step_items("builtin:arith-steps", 5, seed=1)
    out, summary = asyncio.run(perturb_text(items, kind, ScriptedBackend(_rewriter(2)),
                                            seed=3, retries=3))
    again, _ = asyncio.run(perturb_text(items, kind, ScriptedBackend(_rewriter(2)), seed=3,
                                        retries=3))
    assert summary["steps"] == sum(len(it["steps"]) for it in items)
    assert summary["rewritten"] == summary["steps"]
    assert summary["rejected_candidates"]["unchanged"] >= 1
    for item, new in zip(items, out):
        assert new["variant"] == kind and new["labels"] == item["labels"]
        for old_step, new_step, rec in zip(item["steps"], new["steps"],
                                           new["perturbation"]["steps"]):
            assert rec["ok"] and new_step != old_step
            assert validate_rewrite(old_step, new_step, kind=kind) == []
            if kind == "syntactic":
                assert rec["transformation"] == "clause_order"
    if kind == "lexical":
        assert [it["steps"] for it in out] == [it["steps"] for it in again]


def test_a_step_without_valid_rewrites_keeps_its_text_and_says_why():
    items = load_step_items("builtin:arith-steps", 1, seed=2)
    out, summary = asyncio.run(perturb_text(items, "lexical",
                                            ScriptedBackend(lambda m, p, i: "no JSON here"),
                                            retries=1))
    assert summary["rewritten"] == 0 and out[0]["steps"] == items[0]["steps"]
    rec = out[0]["perturbation"]["steps"][0]
    assert rec["attempts"] == 2 and rec["rejected"] == {"unreadable_reply": 2}


def test_image_perturbations_are_deterministic_and_recorded():
    rng = np.random.default_rng(0)
    img = Image.fromarray(rng.integers(0, 255, (24, 32, 3), dtype=np.uint8))
    for kind in ("scale", "rotate", "noise", "invert"):
        a, pa = perturb_image(img, seed=5, kind=kind)
        b, pb = perturb_image(img, seed=5, kind=kind)
        assert pa == pb and pa["kind"] == kind
        assert np.array_equal(np.asarray(a), np.asarray(b))
    inverted, _ = perturb_image(img, kind="invert")
    assert np.array_equal(np.asarray(inverted), 255 - np.asarray(img))
    scaled, p = perturb_image(img, seed=1, kind="scale")
    assert scaled.size == (round(32 * p["factor"]), round(24 * p["factor"]))
    assert not 0.85 < p["factor"] < 1.15
    rotated, p = perturb_image(img, seed=1, kind="rotate")
    assert 5 <= abs(p["degrees"]) <= 15 and rotated.size[0] > 32
    _, p1 = perturb_image(img, seed=1)
    _, p2 = perturb_image(img, seed=1)
    assert p1 == p2  # the drawn kind too
    with pytest.raises(ValueError):
        perturb_image(img, kind="blur")


def test_image_dataset_with_originals(tmp_path):
    img_path = tmp_path / "fig.png"
    Image.new("RGB", (20, 10), (0, 128, 255)).save(img_path)
    items = load_step_items("builtin:arith-steps", 3, seed=0)
    rows = [{**it, "images": [str(img_path)] if i != 1 else []}
            for i, it in enumerate(items)]
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "run_id"}) + "\n"
                            for r in rows))
    out, summary = perturb_images(load_step_items(str(data)), tmp_path / "imgs", seed=2)
    assert summary["items"] == 2 and summary["skipped_without_images"] == 1
    assert all(o["variant"] == "image" and o["perturbation"]["images"][0]["kind"]
               for o in out)
    both = with_originals(load_step_items(str(data)), out, "image")
    assert [p["variant"] for p in both] == ["original", "original", "image", "image"]
    assert {p["item_id"] for p in both[2:]} == {p["item_id"] for p in both[:2]}
    assert all("run_id" not in p and "problem_id" not in p for p in both)
