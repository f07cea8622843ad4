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
    # a line naming a key twice (two readings) or holding a number past Python's digit limit
    # is skipped and counted, as any line of another shape; the good line still answers
    twice = json.dumps({"item_id": 2, "calls": [call]})[:-1] + ', "calls": []}'
    huge = '{"item_id": ' + "9" * 5000 + "}"
    rec.write_text("\n".join([twice, huge, json.dumps({"item_id": 1, "calls": [call]})]) + "\n")
    replay = ReplayBackend(tmp_path)
    assert replay.skipped == 2
    assert asyncio.run(replay.generate(msgs, params))[0].text == "B"


# ---------------------------------------------------------------- the cache file and its folder

def _snapshot(folder):
    """Every file under ``folder`` with its bytes (links as their targets' names)."""
    return {str(p.relative_to(folder)): (f"-> {p.readlink()}" if p.is_symlink()
                                         else p.read_bytes() if p.is_file() else "dir")
            for p in sorted(folder.rglob("*"))}


def _filled_cache(path, rows=3):
    cache = ResponseCache(path)
    for i in range(rows):
        cache.put(f"k{i}", {"text": i}, backend="openai" if i else "local")
    cache.close()   # closed cleanly: SQLite removes the log and its index


def _other_program_database(path):
    import sqlite3

    db = sqlite3.connect(path)
    db.execute("CREATE TABLE responses (a INTEGER)")
    db.execute("CREATE TABLE survey (answer TEXT)")
    db.execute("INSERT INTO survey VALUES ('keep me')")
    db.commit()
    db.close()


def test_clear_touches_the_cache_and_sqlites_files_only(tmp_path):
    """Files whose names start with the cache's (a backup, notes) are not its files: `cache
    clear` once removed every file matching the name followed by anything."""
    from confeval.backends.cache import clear_cache

    _filled_cache(tmp_path / "c.sqlite")
    for name in ("c.sqlite.bak", "c.sqlite-old", "c.sqlite_notes.txt", "c"):
        (tmp_path / name).write_text(name)
    others = {k: v for k, v in _snapshot(tmp_path).items() if k != "c.sqlite"}
    assert clear_cache(tmp_path / "c.sqlite") == (3, f"from {tmp_path / 'c.sqlite'}")
    after = _snapshot(tmp_path)
    assert {k: v for k, v in after.items() if not k.startswith("c.sqlite") or k in others} \
        == others
    assert set(after) - set(others) <= {"c.sqlite", "c.sqlite-wal", "c.sqlite-shm"}
    assert ResponseCache(tmp_path / "c.sqlite").info()["entries"] == 0


@pytest.mark.parametrize("kind", ["text", "other program's database", "link"])
def test_clear_leaves_what_is_not_a_confeval_cache(tmp_path, kind):
    from confeval.backends.cache import CacheError, clear_cache

    path = tmp_path / "notes"
    if kind == "text":
        path.write_text("my notes")
    elif kind == "link":
        _filled_cache(tmp_path / "real.sqlite")
        path.symlink_to(tmp_path / "real.sqlite")
    else:
        _other_program_database(path)
    (tmp_path / "notes.txt").write_text("more notes")
    before = _snapshot(tmp_path)
    with pytest.raises(CacheError, match=r"notes: .*(nothing removed|symbolic link)"):
        clear_cache(path)
    assert _snapshot(tmp_path) == before


def test_clear_removes_a_damaged_cache_with_its_sqlite_files_only(tmp_path):
    from confeval.backends.cache import clear_cache

    path = tmp_path / "c.sqlite"
    _filled_cache(path, rows=200)
    path.write_bytes(path.read_bytes()[:700])   # cut short: an SQLite header, no table pages
    (tmp_path / "c.sqlite-wal").write_bytes(b"")
    (tmp_path / "c.sqlite.bak").write_text("a backup")
    removed, what = clear_cache(path)
    assert removed == 0 and what.startswith(f"removed the damaged cache file {path}")
    assert _snapshot(tmp_path) == {"c.sqlite.bak": b"a backup"}


@pytest.mark.parametrize("state", ["closed", "open", "missing", "other program's database",
                                   "link"])
def test_info_reads_only(tmp_path, state):
    """`cache info` writes nothing: no database made for a missing path (nor its folders), no
    table added to another program's database, no log or index beside a closed cache."""
    from confeval.backends.cache import CacheError, cache_info

    path = tmp_path / "c.sqlite"
    writer = None
    if state in ("closed", "link"):
        _filled_cache(tmp_path / "real.sqlite" if state == "link" else path)
        if state == "link":
            path.symlink_to(tmp_path / "real.sqlite")
    elif state == "open":   # a writer at work: its rows are still in the log
        writer = ResponseCache(path)
        writer.put("a", 1, backend="openai")
        writer.put("b", 2, backend="openai")
    elif state == "other program's database":
        _other_program_database(path)
    if state == "missing":
        path = tmp_path / "deeper" / "c.sqlite"
    before = _snapshot(tmp_path)
    if state == "other program's database":
        with pytest.raises(CacheError, match=r"c\.sqlite: not a usable response cache \(it "
                                             r"holds the tables \['responses', 'survey'\]\)"):
            cache_info(path)
    else:
        found = cache_info(path)
        assert found["exists"] == (state != "missing")
        assert found["entries"] == {"missing": 0, "open": 2}.get(state, 3)
        assert found["by_backend"] == ({} if state == "missing" else {"openai": 2, "local": 1}
                                       if state != "open" else {"openai": 2})
    if writer is not None:
        writer.close()
    else:
        assert _snapshot(tmp_path) == before


def test_a_cache_is_written_only_to_a_file_of_its_own(tmp_path):
    """A link is refused (a write never follows one), and another program's database is found
    by reading it before anything is written: not switched to WAL, no table added."""
    from confeval.backends.cache import CacheError

    _other_program_database(tmp_path / "app.db")
    (tmp_path / "link.sqlite").symlink_to(tmp_path / "target.sqlite")
    before = _snapshot(tmp_path)
    with pytest.raises(CacheError, match=r"app\.db: not a usable response cache"):
        ResponseCache(tmp_path / "app.db")
    with pytest.raises(CacheError, match=r"link\.sqlite: is a symbolic link"):
        ResponseCache(tmp_path / "link.sqlite")
    assert _snapshot(tmp_path) == before


def test_a_cache_another_process_holds_is_in_use_not_damaged(tmp_path, monkeypatch):
    """SQLite's "database is locked" after its 30 s wait is another process at work: clear must
    not take it for damage and remove the file."""
    import sqlite3

    from confeval.backends import cache as module

    path = tmp_path / "c.sqlite"
    _filled_cache(path)
    before = _snapshot(tmp_path)

    def locked(_path):
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(module, "_read_only", locked)
    for call in (module.clear_cache, module.cache_info, module.ResponseCache):
        with pytest.raises(module.CacheError, match=r"c\.sqlite: in use by another process"):
            call(path)
    assert _snapshot(tmp_path) == before
