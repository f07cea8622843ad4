import dataclasses
import json

import pytest

from confeval.backends import Generation, ScriptedBackend
from confeval.runs import RunMismatchError, load_run_records
from confeval.tasks import arith_mc
from confeval.verbs.run import live_part as get_suite
from confeval.verbs.run import run_suite


@pytest.fixture
def items():
    return arith_mc(30, seed=0)


def scorer_for(items):
    gold = {it["question"]: it["answer"] for it in items}

    def scorer(messages, letter):
        question = messages[-1]["content"].split("\n\n")[0]
        return -0.1 if letter == gold[question] else -2.0

    return scorer


def test_run_writes_records_and_metrics_with_exact_scoring(tmp_path, items):
    suite = get_suite("sets")
    backend = ScriptedBackend(scorer=scorer_for(items), capabilities={"score"})
    result = run_suite(suite, backend, items, tmp_path / "run", config={"x": 1},
                       options=suite.Options(bootstrap=0))
    records = load_run_records(tmp_path / "run" / "records.jsonl")
    assert [r["item_id"] for r in sorted(records, key=lambda r: int(r["item_id"][9:]))] == \
        [it["item_id"] for it in items]
    assert all(r["method"] == "score" and r["correct"] == 1 for r in records)
    assert all(r["calls"][0]["response"] == [-0.1 if L == r["answer"] else -2.0
                                             for L in "ABCDEF"[: r["n_options"]]]
               for r in records)
    res = result.metrics["sections"][0]["results"]["model"]
    assert res["accuracy"] == 1.0 and res["n_used"] == 30


def test_unparseable_outputs_are_kept_and_counted(tmp_path, items):
    def reply(messages, params, i):
        return Generation("I refuse.", (), "stop")

    suite = get_suite("sets")
    result = run_suite(suite, ScriptedBackend(reply), items[:5], tmp_path / "r",
                       config={}, options=suite.Options(bootstrap=0))
    records = load_run_records(tmp_path / "r" / "records.jsonl")
    assert len(records) == 5 and {r["status"] for r in records} == {"unparseable"}
    assert result.metrics["records_by_status"] == {"unparseable": 5}
    # each section says why it has no result: no record had a usable confidence or options
    assert all(not section["results"] for section in result.metrics["sections"])
    assert any("missing_confidence': 5" in w for w in result.metrics["warnings"])


def test_resume_refuses_other_arguments_and_repairs_a_cut_line(tmp_path, items):
    backend = ScriptedBackend(scorer=scorer_for(items), capabilities={"score"})
    suite = get_suite("sets")
    options = suite.Options(bootstrap=0)
    run_suite(suite, backend, items[:10], tmp_path / "r", config={"n": 10}, options=options)
    with pytest.raises(RunMismatchError, match="--n 10; this one has --n 30"):
        run_suite(suite, backend, items, tmp_path / "r", config={"n": 30}, options=options)
    with pytest.raises(RunMismatchError, match="--alpha 0.1; this one has --alpha 0.05"):
        run_suite(suite, backend, items[:10], tmp_path / "r", config={"n": 10},
                  options=suite.Options(bootstrap=0, alpha=0.05))
    path = tmp_path / "r" / "records.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:7]) + lines[7][:25])  # as if killed mid-write
    result = run_suite(suite, backend, items[:10], tmp_path / "r", config={"n": 10},
                       options=options)
    assert result.n_resumed == 7 and result.n_new == 3
    records = load_run_records(path)
    assert sorted(r["item_id"] for r in records) == sorted(it["item_id"] for it in items[:10])


def test_options_are_written_whole_and_alpha_reaches_the_metrics(tmp_path, items):
    suite = get_suite("sets")
    backend = ScriptedBackend(scorer=scorer_for(items), capabilities={"score"})
    result = run_suite(suite, backend, items, tmp_path / "r", config={"n": 30},
                       options=suite.Options(bootstrap=0, alpha=0.05, idk=True))
    run = json.loads((tmp_path / "r" / "run.json").read_text())["config"]
    assert set(run["options"]) == {f.name for f in dataclasses.fields(suite.Options)}
    assert run["options"] == {**suite.Options(bootstrap=0, alpha=0.05, idk=True).to_dict(),
                              **suite.record_layout}
    sets = result.metrics["sections"][1]["results"]["model"]
    assert sets["alpha"] == 0.05 and sets["coverage_target"] == 0.95


@pytest.mark.parametrize("suite_name, bad, message", [
    ("sets", {"alpha": 1.5}, "--alpha must be in (0, 1)"),
    ("sets", {"method": "guess"}, "--method must be one of auto, score, top_logprobs"),
    ("steps", {"consistency": "bogus"}, "--consistency must be one of flag, mirror, exclude"),
    ("steps", {"max_tokens": 0}, "--max-tokens must be at least 1"),
    ("intervals", {"methods": "naive,r2d2"}, "unknown method(s) ['r2d2']"),
    ("intervals", {"seeds": "5-1"}, "runs backwards"),
])
def test_options_validate_themselves_before_any_call(suite_name, bad, message):
    with pytest.raises(ValueError) as caught:
        get_suite(suite_name).Options(**bad)
    assert message in str(caught.value)


def test_the_one_live_driver_refuses_an_unknown_option_before_making_a_backend(tmp_path):
    from confeval.verbs.run import run_live

    def never():
        raise AssertionError("the backend was made")

    with pytest.raises(ValueError, match="--epsilon: not an option of the sets suite"):
        run_live("sets", {"epsilon": 0.1}, tmp_path / "R", backend=never)
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="holds files confeval did not write"):
        run_live("sets", {}, tmp_path / "busy", backend=never)


def test_an_in_process_backend_runs_items_one_at_a_time(tmp_path, monkeypatch):
    """An in-process model runs one forward pass at a time: items in flight together would
    only interleave and all finish at the end, with the progress bar at 0 until then — unless
    it packs their calls into shared passes (``pack_items``; tests/verbs/test_run_packing.py)."""
    import asyncio

    from confeval.backends import ScriptedBackend
    from confeval.tasks import arith_mc
    from confeval.verbs.run import live_part as get_suite
    from confeval.verbs.run import run_suite

    suite = get_suite("sets")
    active, most = 0, 0
    original = suite.run_item

    async def counted(item, backend, options):
        nonlocal active, most
        active += 1
        most = max(most, active)
        await asyncio.sleep(0.001)
        try:
            return await original(item, backend, options)
        finally:
            active -= 1

    monkeypatch.setattr(suite, "run_item", counted)
    for parallel, expected in ((1, 1), (32, 6)):
        backend = ScriptedBackend(scorer=lambda m, c: -1.0 - "ABCDEF".index(c))
        backend.parallel_items = parallel
        most = 0
        run_suite(suite, backend, arith_mc(6, seed=0), tmp_path / f"r{parallel}",
                  options=suite.Options(bootstrap=0))
        assert most == expected
    pytest.importorskip("transformers", reason="the hf backend needs the 'local' extra")
    from confeval.backends.hf import HFBackend

    assert HFBackend.parallel_items == 1 and HFBackend.pack_items > 1
