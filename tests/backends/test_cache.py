import asyncio
import json

import pytest

from confeval.backends import (
    CachedBackend,
    GenerateParams,
    ReplayBackend,
    ResponseCache,
    ScriptedBackend,
    call_key,
    request_key,
)


def test_key_is_canonical_and_images_hash_by_content():
    a = request_key({"b": 1, "a": [1, 2]})
    assert a == request_key({"a": [1, 2], "b": 1})
    img = {"role": "user", "content": [{"type": "image_url",
                                        "image_url": {"url": "data:image/png;base64,AAAA"}}]}
    img2 = {"role": "user", "content": [{"type": "image_url",
                                         "image_url": {"url": "data:image/png;base64,AAAB"}}]}
    assert request_key({"messages": [img]}) != request_key({"messages": [img2]})


def test_rerun_makes_zero_calls_and_samples_are_cached_individually(tmp_path):
    counter = {"n": 0}

    def reply(messages, params, i):
        counter["n"] += 1
        return f"answer {counter['n']}"

    cache = ResponseCache(tmp_path / "c.sqlite")
    backend = CachedBackend(ScriptedBackend(reply), cache)
    msgs = [{"role": "user", "content": "hi"}]
    first = asyncio.run(backend.generate(msgs, GenerateParams(temperature=1.0), n=2))
    again = asyncio.run(backend.generate(msgs, GenerateParams(temperature=1.0), n=2))
    assert [g.text for g in first] == [g.text for g in again] == ["answer 1", "answer 2"]
    more = asyncio.run(backend.generate(msgs, GenerateParams(temperature=1.0), n=3))
    assert [g.text for g in more] == ["answer 1", "answer 2", "answer 3"]
    assert backend.calls == 2
    other_seed = asyncio.run(backend.generate(msgs, GenerateParams(temperature=1.0, seed=5)))
    assert other_seed[0].text == "answer 4"
    # A new cache object on the same file: still zero calls.
    fresh = CachedBackend(ScriptedBackend(reply), ResponseCache(tmp_path / "c.sqlite"))
    asyncio.run(fresh.generate(msgs, GenerateParams(temperature=1.0), n=3))
    assert fresh.calls == 0
    info = cache.info()
    assert info["entries"] == 4 and info["by_backend"] == {"scripted:scripted": 4}
    assert cache.clear() == 4 and cache.info()["entries"] == 0


def test_score_is_cached(tmp_path):
    backend = CachedBackend(ScriptedBackend(scorer=lambda m, c: -len(c)),
                            ResponseCache(tmp_path / "c.sqlite"))
    msgs = [{"role": "user", "content": "q"}]
    assert asyncio.run(backend.score(msgs, ["A", "BB"])) == [-1.0, -2.0]
    asyncio.run(backend.score(msgs, ["A", "BB"]))
    assert backend.calls == 1


def test_replay_answers_recorded_calls_and_refuses_unknown_ones(tmp_path):
    msgs = [{"role": "user", "content": "q"}]
    params = GenerateParams()
    key = call_key("generate", msgs, params=params.to_dict(), n=1)
    rec = tmp_path / "records.jsonl"
    call = {"method": "generate", "request_key": key,
            "response": [{"text": "B", "tokens": None, "finish_reason": "stop"}]}
    rec.write_text(json.dumps({"item_id": 1, "calls": [call]}) + "\n")
    replay = ReplayBackend(tmp_path)
    assert asyncio.run(replay.generate(msgs, params))[0].text == "B"
    with pytest.raises(Exception, match="no recorded answer"):
        asyncio.run(replay.generate([{"role": "user", "content": "other"}], params))
