"""Content-addressed response cache in SQLite (standard library only).

A response is stored under the SHA-256 of a canonical JSON description of the request: the
backend kind and model identity, the method, the messages (an inline image is represented by
the hash of its bytes, not the bytes), every generation parameter including the seed, and the
sample index. Re-running the same command therefore makes no model call. The identity never
holds a secret (API keys are not part of any backend's identity), so the cache file is safe to
share.

Default location: ``$CONFEVAL_CACHE`` or ``~/.cache/confeval/responses.sqlite``.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .base import (
    Backend,
    GenerateParams,
    Generation,
    TokenScores,
    WrappingBackend,
    user_cache_root,
)

__all__ = ["CacheError", "CachedBackend", "ResponseCache", "cache_info", "call_key",
           "clear_cache", "default_cache_path", "request_key"]


def default_cache_path() -> Path:
    """$CONFEVAL_CACHE, or confeval/responses.sqlite in $XDG_CACHE_HOME (else ~/.cache)."""
    env = os.environ.get("CONFEVAL_CACHE")
    if env:
        return Path(env)
    return user_cache_root() / "confeval" / "responses.sqlite"


def _normalise_content(content: Any) -> Any:
    if not isinstance(content, list):
        return content
    parts = []
    for part in content:
        if isinstance(part, Mapping) and part.get("type") == "image_url":
            url = part.get("image_url", {}).get("url", "")
            digest = hashlib.sha256(url.encode("utf-8")).hexdigest()
            parts.append({"type": "image", "sha256": digest})
        else:
            parts.append(part)
    return parts


def request_key(payload: Mapping[str, Any]) -> str:
    """SHA-256 of the canonical JSON of a request description (images by content hash)."""
    payload = dict(payload)
    if "messages" in payload:
        payload["messages"] = [{**m, "content": _normalise_content(m.get("content"))}
                               for m in payload["messages"]]
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def call_key(method: str, messages: Sequence, **details: Any) -> str:
    """Backend-independent key of one call, recorded in run records for replay."""
    return request_key({"method": method, "messages": list(messages), **details})


class CacheError(RuntimeError):
    """The cache file cannot be used (the message names it and what to do)."""


_SIDE_FILES = ("-wal", "-shm", "-journal")
"""SQLite's files beside a database: the write-ahead log, its index, the rollback journal."""

_SQLITE_HEADER = b"SQLite format 3\x00"


def _cache_files(path: Path) -> list[Path]:
    """The cache file and SQLite's files beside it: the only files the cache ever touches."""
    return [path, *(path.with_name(path.name + side) for side in _SIDE_FILES)]


def _read_only(path: Path) -> sqlite3.Connection:
    """A read-only connection that creates nothing. SQLite's ``mode=ro`` still creates the
    -wal and -shm files of a database whose log is gone (a cache closed cleanly), and leaves
    them; ``immutable=1`` reads the file alone. With a log beside it a writer may be at work
    (or stopped before checkpointing), so the reader joins the log's protocol instead, through
    the files that are already there (a confeval cache is always in WAL mode: its writers keep
    the log while they are connected)."""
    log = path.with_name(path.name + "-wal")
    mode = "mode=ro" if log.exists() else "immutable=1"
    return sqlite3.connect(f"{path.resolve().as_uri()}?{mode}", uri=True, timeout=30)


def _schema_problem(db: sqlite3.Connection) -> str:
    """Why the database is not a confeval cache ("" when it is one, or empty)."""
    tables = sorted(r[0] for r in db.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"))
    if not tables:
        return ""
    if tables != ["responses"]:
        return f"it holds the tables {tables}"
    columns = tuple(r[1] for r in db.execute("PRAGMA table_info(responses)"))
    if columns != ResponseCache.COLUMNS:
        return f"its table 'responses' has columns {list(columns)}"
    return ""


def _inspect(path: Path) -> tuple[str, str]:
    """What the file at ``path`` is, read only: ``("absent" | "cache" | "damaged" |
    "foreign", why)``. "damaged": it starts as an SQLite database does but cannot be read as
    one (cut short, overwritten); "foreign": anything else that is not a confeval cache
    (another program's database, a text file, a folder)."""
    if not path.exists():
        return ("foreign", "a symbolic link to nothing") if path.is_symlink() else ("absent", "")
    if not path.is_file():
        return "foreign", "it is not a file"
    with open(path, "rb") as handle:
        head = handle.read(len(_SQLITE_HEADER))
    if not head:
        return "cache", ""   # SQLite takes an empty file as an empty database
    if head != _SQLITE_HEADER:
        return "foreign", "it is not an SQLite database"
    try:
        db = _read_only(path)
        try:
            problem = _schema_problem(db)
            if not problem:
                _counts(db)   # reads the table's pages: a file cut short fails here
        finally:
            db.close()
    except sqlite3.OperationalError as exc:
        if _in_use(exc):   # another process holds it (a writer recovering its log): not damage
            raise CacheError(f"{path}: in use by another process ({exc}); try again, or run "
                             "with --no-cache or another --cache") from None
        return "damaged", str(exc)
    except sqlite3.Error as exc:
        return "damaged", str(exc)
    return ("foreign", problem) if problem else ("cache", "")


def _in_use(exc: sqlite3.OperationalError) -> bool:
    """SQLite's "database is locked" (SQLITE_BUSY) after the connection's 30 s wait."""
    code = getattr(exc, "sqlite_errorcode", None)
    return code in (5, 6) or "locked" in str(exc)   # SQLITE_BUSY, SQLITE_LOCKED


def _counts(db: sqlite3.Connection) -> dict[str, int]:
    """Responses per backend ({} for an empty database)."""
    if not db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = "
                      "'responses'").fetchone():
        return {}
    return {str(backend): int(count) for backend, count in db.execute(
        "SELECT backend, COUNT(*) FROM responses GROUP BY backend")}


def _refuse_link(path: Path) -> None:
    if path.is_symlink():
        raise CacheError(f"{path}: is a symbolic link; confeval writes a cache only to a "
                         "file of its own (give the link's target as --cache)")


def _unusable(path: Path, why: str) -> CacheError:
    return CacheError(f"{path}: not a usable response cache ({why}); run with --no-cache or "
                      "another --cache")


def cache_info(path: str | Path | None = None) -> dict[str, Any]:
    """What ``confeval cache info`` prints: the cache's entries, per backend, and the bytes of
    its files. Reads only: a missing cache is reported as such (``exists`` false), not made,
    and nothing is written to the file or beside it."""
    path = Path(path) if path is not None else default_cache_path()
    kind, why = _inspect(path)
    if kind in ("foreign", "damaged"):
        hint = f"; `confeval cache clear --cache {path}` removes it" if kind == "damaged" \
            else ""
        raise CacheError(f"{path}: not a usable response cache ({why}); run with --no-cache or "
                         f"another --cache{hint}")
    found = {"path": str(path), "exists": kind == "cache", "entries": 0, "bytes": 0,
             "by_backend": {}}
    if kind == "absent":
        return found
    try:
        db = _read_only(path)
        try:
            found["by_backend"] = _counts(db)
        finally:
            db.close()
    except sqlite3.Error as exc:
        raise _unusable(path, str(exc)) from None
    found["entries"] = sum(found["by_backend"].values())
    found["bytes"] = int(sum(f.stat().st_size for f in _cache_files(path)
                             if f.is_file() and not f.is_symlink()))
    return found


def clear_cache(path: str | Path | None = None) -> tuple[int, str]:
    """Empty the cache at ``path``: ``(responses removed, what was done)``. A damaged cache
    file (an SQLite database that cannot be read) is removed with SQLite's files beside it;
    anything that is not a confeval cache (another program's database, a text file) is a
    :class:`CacheError` and stays as it is. No other file is touched."""
    path = Path(path) if path is not None else default_cache_path()
    _refuse_link(path)
    kind, why = _inspect(path)
    if kind == "absent":
        return 0, f"no cache at {path}"
    if kind == "foreign":
        raise CacheError(f"{path}: not a confeval response cache ({why}); nothing removed")
    if kind == "damaged":
        for file in _cache_files(path):
            if file.is_symlink() or file.exists():
                file.unlink()   # a link itself, never its target
        return 0, f"removed the damaged cache file {path} ({why})"
    store = ResponseCache(path)
    try:
        return store.clear(), f"from {path}"
    finally:
        store.close()


class ResponseCache:
    """A key -> JSON value store in one SQLite file, safe to interrupt at any point."""

    COLUMNS = ("key", "value", "backend", "created")

    def __init__(self, path: str | Path | None = None) -> None:
        """Open (or create) the cache at ``path``. A file that is not such a cache (corrupt,
        truncated, another program's database, a folder) is a :class:`CacheError` naming it,
        found by reading it before anything is written; so is a symbolic link (a write never
        follows one)."""
        self.path = Path(path) if path is not None else default_cache_path()
        _refuse_link(self.path)
        kind, why = _inspect(self.path)
        if kind == "damaged":
            raise CacheError(f"{self.path}: not a usable response cache ({why}); run with "
                             "--no-cache or another --cache, or remove it with `confeval "
                             f"cache clear --cache {self.path}`")
        if kind == "foreign":
            raise _unusable(self.path, why)
        try:
            self._open()
        except (sqlite3.Error, OSError) as exc:
            raise _unusable(self.path, str(exc)) from None

    def _open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, "
                         "value TEXT NOT NULL, backend TEXT, created REAL)")
        columns = tuple(r[1] for r in self._db.execute("PRAGMA table_info(responses)"))
        if columns != self.COLUMNS:
            self._db.close()
            raise sqlite3.DatabaseError(f"table 'responses' has columns {list(columns)}")
        self._db.commit()

    def get(self, key: str) -> Any | None:
        row = self._db.execute("SELECT value FROM responses WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        try:
            value = json.loads(row[0])
        except (TypeError, json.JSONDecodeError):  # a damaged entry is a miss, then rewritten
            return None
        return value

    def put(self, key: str, value: Any, backend: str = "") -> None:
        self._db.execute("INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?)",
                         (key, json.dumps(value, ensure_ascii=False), backend, time.time()))
        self._db.commit()

    def info(self) -> dict[str, Any]:
        """:func:`cache_info` of this cache."""
        return cache_info(self.path)

    def clear(self) -> int:
        count, = self._db.execute("SELECT COUNT(*) FROM responses").fetchone()
        self._db.execute("DELETE FROM responses")
        self._db.commit()
        self._db.execute("VACUUM")
        return int(count)

    def close(self) -> None:
        self._db.close()


class CachedBackend(WrappingBackend):
    """Wrap a backend so that every answer is looked up in, and stored to, a cache.

    Each of the ``n`` samples of a request is cached under its own sample index, so asking
    for more samples later only requests the missing ones.
    """

    def __init__(self, inner: Backend, cache: ResponseCache) -> None:
        super().__init__(inner)
        self.cache = cache
        self.calls = 0  # requests that reached the inner backend

    def _key(self, method: str, messages, extra: Mapping[str, Any]) -> str:
        return request_key({"backend": self.identity(), "method": method,
                            "messages": list(messages), **extra})

    async def _generate(self, messages: Sequence, params: GenerateParams,
                        n: int) -> list[Generation]:
        keys = [self._key("generate", messages, {"params": params.to_dict(), "sample": i})
                for i in range(n)]
        found = [self.cache.get(k) for k in keys]
        missing = [i for i, v in enumerate(found) if v is None]
        if missing:
            self.calls += 1
            fresh = await self.inner.generate(messages, params, n=len(missing))
            for i, gen in zip(missing, fresh):
                found[i] = gen.to_dict()
                self.cache.put(keys[i], found[i], self.describe())
        return [Generation.from_dict(v) for v in found]

    async def _score(self, messages: Sequence, continuations: list[str]) -> list[float]:
        key = self._key("score", messages, {"continuations": continuations})
        value = self.cache.get(key)
        if value is None:
            self.calls += 1
            value = await self.inner.score(messages, continuations)
            self.cache.put(key, value, self.describe())
        return [float(v) for v in value]

    async def _score_tokens(self, messages: Sequence, continuations: list[str], suffix: str,
                            attention: bool) -> list[TokenScores]:
        key = self._key("score_tokens", messages, {"continuations": continuations,
                                                   "suffix": suffix, "attention": attention})
        value = self.cache.get(key)
        if value is None:
            self.calls += 1
            scores = await self.inner.score_tokens(messages, continuations, suffix=suffix,
                                                   attention=attention)
            value = [t.to_dict() for t in scores]
            self.cache.put(key, value, self.describe())
        return [TokenScores.from_dict(v) for v in value]

    async def aclose(self) -> None:
        await self.inner.aclose()
