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

from .base import Backend, GenerateParams, Generation, TokenScores, WrappingBackend

__all__ = ["CacheError", "CachedBackend", "ResponseCache", "call_key", "default_cache_path",
           "request_key"]


def default_cache_path() -> Path:
    """$CONFEVAL_CACHE, or ~/.cache/confeval/responses.sqlite."""
    env = os.environ.get("CONFEVAL_CACHE")
    if env:
        return Path(env)
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "confeval" / "responses.sqlite"


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


class ResponseCache:
    """A key -> JSON value store in one SQLite file, safe to interrupt at any point."""

    COLUMNS = ("key", "value", "backend", "created")

    def __init__(self, path: str | Path | None = None, *, repair: bool = False) -> None:
        """Open (or create) the cache at ``path``. A file that is not such a cache (corrupt,
        truncated, another SQLite database, a directory) is a :class:`CacheError` naming it;
        with ``repair`` (``confeval cache clear``) such a file is replaced by an empty cache."""
        self.path = Path(path) if path is not None else default_cache_path()
        try:
            self._open()
        except (sqlite3.Error, OSError) as exc:
            if not repair or self.path.is_dir():
                raise CacheError(f"{self.path}: not a usable response cache ({exc}); run with "
                                 "--no-cache or another --cache, or remove it with `confeval "
                                 f"cache clear --cache {self.path}`") from None
            for stale in self.path.parent.glob(self.path.name + "*"):
                stale.unlink()
            self._open()

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
        count, = self._db.execute("SELECT COUNT(*) FROM responses").fetchone()
        per_backend = dict(self._db.execute(
            "SELECT backend, COUNT(*) FROM responses GROUP BY backend").fetchall())
        size = sum(p.stat().st_size for p in self.path.parent.glob(self.path.name + "*")
                   if p.is_file())
        return {"path": str(self.path), "entries": int(count), "bytes": int(size),
                "by_backend": per_backend}

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
