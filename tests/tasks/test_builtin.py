import re
import string

import pytest

from confeval.tasks import arith_mc, arith_steps, load_builtin

OPS = {"+": lambda a, b: a + b, "−": lambda a, b: a - b, "×": lambda a, b: a * b}
EQUATION = re.compile(r"(-?\d+)(?: [a-z]+)? ([+−×]) (-?\d+)(?: [a-z]+)? = (-?\d+)")
UNITS = {"centimetres": ("metres", 100), "metres": ("kilometres", 1000),
         "grams": ("kilograms", 1000), "millilitres": ("litres", 1000),
         "minutes": ("hours", 60), "seconds": ("minutes", 60)}


def true_answer(question):
    m = re.fullmatch(r"What is (\d+) ([+−×]) (\d+)\?", question)
    if m:
        return OPS[m[2]](int(m[1]), int(m[3]))
    m = re.fullmatch(r"How many (\w+) are in ([\d.]+) (\w+)\?", question)
    src, factor = UNITS[m[1]]
    assert m[3] == src
    return float(m[2]) * factor


def test_mc_items_have_one_right_answer_in_place():
    items = arith_mc(500, seed=3)
    assert {it["category"] for it in items} == {"arithmetic", "units"}
    for it in items:
        k = len(it["options"])
        assert 4 <= k <= 6 and len(set(it["options"])) == k
        gold = string.ascii_uppercase.index(it["answer"])
        assert float(it["options"][gold]) == pytest.approx(true_answer(it["question"]))
        others = [float(o) for j, o in enumerate(it["options"]) if j != gold]
        assert all(o != pytest.approx(true_answer(it["question"])) for o in others)
    letters = [it["answer"] for it in items]
    assert len(set(letters)) == 6  # gold position varies


def test_steps_have_exactly_one_error_of_the_stated_type():
    items = arith_steps(600, seed=4)
    kinds = {it["error_type"] for it in items}
    assert kinds == {"", "numerical_calculation", "reasoning", "question_understanding",
                     "symbolic_calculation"}
    for it in items:
        assert len(it["steps"]) == len(it["labels"]) == 4
        if it["error_step"] < 0:
            assert it["labels"] == [1, 1, 1, 1] and it["final_answer"] == it["student_answer"]
            assert it["error_types"] == [""] * 4
        else:
            assert it["labels"].count(0) == 1 and it["labels"][it["error_step"]] == 0
            assert it["final_answer"] != it["student_answer"]
            assert it["error_types"][it["error_step"]] == it["error_type"]
        assert not re.search(r"(?<![\d)])-\d", " ".join(it["steps"]))  # no negative pens
        for s, text in enumerate(it["steps"]):
            if s == it["error_step"]:
                continue
            for a, op, b, result in EQUATION.findall(text):
                assert OPS[op](int(a), int(b)) == int(result), (it, text)
        if it["error_type"] == "numerical_calculation":
            a, op, b, result = EQUATION.findall(it["steps"][it["error_step"]])[0]
            assert OPS[op](int(a), int(b)) != int(result)


def test_seeded_and_named():
    assert load_builtin("arith-mc", 20, seed=1) == arith_mc(20, seed=1)
    assert arith_mc(20, seed=1) != arith_mc(20, seed=2)
    with pytest.raises(ValueError, match="unknown built-in task 'nope'"):
        load_builtin("nope")


def test_a_builtin_task_is_a_fixed_dataset_whatever_the_runs_seed():
    """A live run draws a built-in task with its own seed (0, or builtin:NAME@SEED), not the
    run's --seed: two runs with different seeds ask the same items (and can be compared item
    by item); a data file is read with the run's seed."""
    from confeval.tasks import data_seed

    assert data_seed("builtin:arith-mc", 7) == 0
    assert data_seed("builtin:arith-mc@3", 7) == 3
    assert data_seed("questions.jsonl", 7) == 7
    assert load_builtin("arith-mc@3", 5) == arith_mc(5, seed=3)
    assert load_builtin("arith-mc@3", 5) != arith_mc(5, seed=0)
    with pytest.raises(ValueError, match="builtin:NAME@SEED takes a whole number"):
        data_seed("builtin:arith-mc@x", 0)


def test_arith_pairwise_puts_the_right_answer_and_the_padding_in_random_slots():
    from confeval.tasks import load_builtin

    items = load_builtin("arith-pairwise", 400, 0)
    assert items == load_builtin("arith-pairwise", 400, 0)          # seeded
    right = [it["human"] for it in items]
    padded = [it["padded"] for it in items]
    for it in items:
        answers = {"a": it["answer_a"], "b": it["answer_b"]}
        assert len(answers[it["padded"]].split()) > len(answers["ab".replace(
            it["padded"], "")].split())
        assert answers["a"].split(".")[0] != answers["b"].split(".")[0]
    # both slots used for the right answer and for the padding, independently of each other
    assert 0.4 < right.count("a") / 400 < 0.6 and 0.4 < padded.count("a") / 400 < 0.6
    same = sum(r == p for r, p in zip(right, padded)) / 400
    assert 0.4 < same < 0.6
