"""``confeval run``: drive a suite end to end, resumably.

Records are appended to ``RUN_DIR/records.jsonl`` one complete line per item as soon as the
item is done (flushed, so a killed process loses nothing the OS has received). Started again
with the same arguments, a run reads the records it already has — dropping a last line that a
kill cut short — and only queries the items that have none, so no record is lost or
duplicated. Finished model calls are not repeated either: they are in the response cache,
which is written before the record. A run folder refuses to be resumed with different
arguments.

Items whose backend call failed for good (after the backend's own retries) get no record; they
are counted, named, and retried by the next run with the same arguments.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .backends import (
    Backend,
    BackendError,
    CachedBackend,
    CapabilityError,
    GenerateParams,
    ResponseCache,
    call_key,
    require,
)
from .report import render_report
from .runs import RunFolder, dumps
from .suites.base import LiveSuite

__all__ = ["RecordingBackend", "RunMismatchError", "RunResult", "load_run_records", "run_suite"]


class RunMismatchError(ValueError):
    """The run folder holds a run made with different arguments."""


class RecordingBackend(Backend):
    """Pass-through that remembers each call's backend-independent key and response, so a
    run's records can be replayed offline (``--model replay:RUN_DIR``)."""

    def __init__(self, inner: Backend) -> None:
        super().__init__(inner.model)
        self.inner = inner
        self.kind = inner.kind
        self.capabilities = inner.capabilities
        self.calls: list[dict] = []

    def describe(self) -> str:
        return self.inner.describe()

    def identity(self) -> dict[str, Any]:
        return self.inner.identity()

    async def _generate(self, messages, params: GenerateParams, n):
        gens = await self.inner.generate(messages, params, n=n)
        self.calls.append({"method": "generate",
                           "request_key": call_key("generate", messages,
                                                   params=params.to_dict(), n=n),
                           "response": [g.to_dict() for g in gens]})
        return gens

    async def _score(self, messages, continuations):
        values = await self.inner.score(messages, continuations)
        self.calls.append({"method": "score",
                           "request_key": call_key("score", messages,
                                                   continuations=list(continuations)),
                           "response": list(values)})
        return values


def load_run_records(path: Path) -> list[dict]:
    """Read records.jsonl, cutting off a last line left incomplete by a kill."""
    if not path.is_file():
        return []
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        data = data[: data.rfind(b"\n") + 1]
        path.write_bytes(data)
    records = []
    for line in data.decode("utf-8").splitlines():
        if line.strip():
            records.append(json.loads(line))
    return records


@dataclass
class RunResult:
    run_dir: Path
    n_items: int
    n_new: int
    n_resumed: int
    failures: list[tuple[str, str]] = field(default_factory=list)
    metrics: dict | None = None
    model_calls: int = 0


def _check_config(run: RunFolder, config: Mapping[str, Any]) -> None:
    path = run.file(RunFolder.RUN)
    if not path.is_file():
        run.write_run(config)
        return
    old = json.loads(path.read_text(encoding="utf-8")).get("config")
    if json.loads(dumps(config)) != old:
        raise RunMismatchError(f"{run.path} holds a run with different arguments; use another "
                               "--out, or the same arguments to resume it")


async def _drive(suite: LiveSuite, backend: Backend, items: Sequence[dict], run: RunFolder,
                 options: Mapping[str, Any], max_in_flight: int,
                 progress: Callable[[str | None], None]) -> list[tuple[str, str]]:
    gate = asyncio.Semaphore(max_in_flight)
    failures: list[tuple[str, str]] = []
    records_path = run.file(RunFolder.RECORDS)

    async def one(item: dict, fh) -> None:
        async with gate:
            recorder = RecordingBackend(backend)
            try:
                record = await suite.run_item(item, recorder, options)
            except CapabilityError:
                raise
            except BackendError as exc:
                failures.append((str(item["item_id"]), str(exc)))
                progress(None)
                return
            record["calls"] = recorder.calls
            fh.write(dumps(record, indent=None) + "\n")
            fh.flush()
            progress(None)

    with open(records_path, "a", encoding="utf-8") as fh:
        tasks = [asyncio.ensure_future(one(item, fh)) for item in items]
        try:
            await asyncio.gather(*tasks)
        except BaseException:
            for t in tasks:
                t.cancel()
            raise
        finally:
            await backend.aclose()
    return failures


def run_suite(suite: LiveSuite, backend: Backend, items: Sequence[dict], out: str | Path, *,
              config: Mapping[str, Any], options: Mapping[str, Any] | None = None,
              cache: ResponseCache | None = None, max_in_flight: int = 32,
              progress: Callable[[str | None], None] | None = None) -> RunResult:
    """Run ``suite`` over ``items`` into the run folder ``out`` (resuming if it exists)."""
    options = dict(options or {})
    require(backend, suite.needs(backend, options), f"the {suite.name} suite needs it")
    ids = [str(it["item_id"]) for it in items]
    if len(set(ids)) != len(ids):
        raise ValueError("item_id values must be unique")
    run = RunFolder(out)
    _check_config(run, config)
    existing = load_run_records(run.file(RunFolder.RECORDS))
    done = {str(r["item_id"]) for r in existing}
    todo = [it for it in items if str(it["item_id"]) not in done]
    wrapped = CachedBackend(backend, cache) if cache is not None else backend
    step = progress or (lambda _msg=None: None)
    for _ in range(len(items) - len(todo)):
        step("resumed")
    failures = asyncio.run(_drive(suite, wrapped, todo, run, options, max_in_flight, step))
    records = load_run_records(run.file(RunFolder.RECORDS))
    order = {i: k for k, i in enumerate(ids)}
    records = sorted((r for r in records if str(r["item_id"]) in order),
                     key=lambda r: order[str(r["item_id"])])
    metrics = suite.score(records, options)
    metrics.setdefault("failed_items", len(failures))
    run.write_metrics(metrics)
    run.write_report(render_report(metrics, run.read_run()))
    calls = wrapped.calls if isinstance(wrapped, CachedBackend) else len(todo)
    return RunResult(run.path, len(items), len(todo) - len(failures), len(items) - len(todo),
                     failures, metrics, calls)
