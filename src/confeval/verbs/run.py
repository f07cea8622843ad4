"""``confeval SUITE run``: drive a suite's live part end to end, resumably — written once for
every suite.

Records are appended to ``RUN_DIR/records.jsonl`` one complete line per item as soon as the
item is done (flushed, so a killed process loses nothing the OS has received). Started again
with the same arguments, a run reads the records it already has — dropping a last line that a
kill cut short — and only queries the items that have none, so no record is lost or
duplicated. Finished model calls are not repeated either: they are in the response cache,
which is written before the record. A run folder refuses to be resumed with different
arguments.

Items whose backend call failed for good (after the backend's own retries) get no record; they
are counted, named, and retried by the next run with the same arguments.

Items in flight: a server's ``parallel_items`` at once; on a model that packs several questions
into one forward pass (``pack_items``: the in-process ``local`` and ``hf:`` backends) that many,
their scoring calls sent to it together by a
:class:`~confeval.backends.gathering.GatheringBackend` (each item's records as if asked alone,
to float32 rounding; a failing call fails its own item only).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..backends import (
    Backend,
    BackendError,
    CachedBackend,
    CapabilityError,
    GatheringBackend,
    ImagesRefused,
    PromptTooLong,
    RecordingBackend,
    ResponseCache,
    require,
)
from ..report import publish
from ..runs import RunFolder, check_config, check_output_folder, load_run_records
from ..suites import SUITES
from ..suites.base import Items, LiveSuite, SuiteOptions
from ..suites.options import RunFlags, build
from ..tasks import data_seed

__all__ = ["RunFlags", "RunResult", "first_per_item", "live_part", "open_run_folder",
           "record_counts", "run_live", "run_suite"]

def live_part(name: str) -> LiveSuite:
    """The live part of suite ``name``; a suite without one is a :class:`ValueError`."""
    live = SUITES[name].live()
    if live is None:
        raise ValueError(f"the {name} suite has no live run")
    return live


@dataclass
class RunResult:
    """What a run did: items in all, newly recorded, resumed, failed (id, why), the metrics,
    and the model calls made (cache hits excluded)."""

    run_dir: Path
    n_items: int
    n_new: int
    n_resumed: int
    failures: list[tuple[str, str]] = field(default_factory=list)
    metrics: dict | None = None
    model_calls: int = 0
    extras: str | None = None
    report_problems: list = field(default_factory=list)
    """What the run's report.html could not show (:func:`confeval.report.publish`)."""


async def _drive(suite: LiveSuite, backend: Backend, items: Sequence[dict], run: RunFolder,
                 options: SuiteOptions, max_in_flight: int,
                 progress: Callable[[str | None], None],
                 gathering: GatheringBackend | None = None) -> list[tuple[str, str]]:
    """Every item through ``suite.run_item``, ``max_in_flight`` at a time: each of that many
    workers takes the next item as soon as its last is recorded. With ``gathering`` each
    worker holds one of its slots, so the scoring calls of the items in flight go to the
    model together (:class:`~confeval.backends.gathering.GatheringBackend`)."""
    failures: list[tuple[str, str]] = []
    queue = iter(items)

    async def one(item: dict) -> None:
        recorder = RecordingBackend(backend)
        try:
            if suite.has_images(item) and "images" not in backend.capabilities:
                record = suite.excluded_record(item, options, "needs_image")
            else:
                record = await suite.run_item(item, recorder, options)
        except ImagesRefused:  # found out on this item: counted as the later ones are
            record = suite.excluded_record(item, options, "needs_image")
        except PromptTooLong:
            record = suite.excluded_record(item, options, "prompt_too_long")
        except CapabilityError:
            raise
        except BackendError as exc:
            failures.append((str(item["item_id"]), str(exc)))
            progress(None)
            return
        record["calls"] = recorder.calls
        run.append_records([record], sync=False)
        progress(None)

    async def worker(slot) -> None:
        # the next item starts in the step the last one ended in (no await between them),
        # so a slot stays busy until the items run out
        with slot:
            for item in queue:
                await one(item)

    workers = max(1, min(max_in_flight, len(items)))
    # every slot is busy before any item starts: the first items' calls wait for each other
    slots = [gathering.slot() if gathering is not None else nullcontext()
             for _ in range(workers)]
    tasks = [asyncio.ensure_future(worker(slot)) for slot in slots]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for t in tasks:
            t.cancel()
        raise
    finally:
        await backend.aclose()
    return failures


def first_per_item(records: Sequence[dict], ids: Sequence[str] | None = None
                   ) -> tuple[list[dict], list[dict]]:
    """The first record of each item, in the items' order (``ids``; None: the order records
    first appear in), and the further records of the same items (a folder written by two
    processes at once): the one rule a run and ``confeval rerun`` score by."""
    if ids is None:
        ids = list(dict.fromkeys(str(r.get("item_id")) for r in records))
    order = {i: k for k, i in enumerate(ids)}
    first: dict[str, dict] = {}
    duplicates = []
    for r in records:
        key = str(r.get("item_id"))
        if key not in order:
            continue
        if key in first:
            duplicates.append(r)
        else:
            first[key] = r
    return sorted(first.values(), key=lambda r: order[str(r["item_id"])]), duplicates


def record_counts(records: Sequence[dict]) -> dict[str, dict[str, int]]:
    """A run's records by status, and the excluded ones by reason (``needs_image``, ...)."""
    out = {"records_by_status": dict(Counter(str(r.get("status")) for r in records))}
    left_out = Counter(str(r.get("reason")) for r in records if r.get("status") == "excluded")
    if left_out:
        out["excluded_records"] = dict(left_out)
    return out


@contextmanager
def open_run_folder(out: str | Path, options: SuiteOptions,
                    config: Mapping[str, Any] | None = None):
    """The run folder ``out``, held by this process (:meth:`RunFolder.lock`) for the whole
    run, its run.json written (new folder) or checked to hold the same ``config`` and
    ``options`` (existing one; else :class:`~confeval.runs.RunMismatchError`) — under the
    lock, so two runs into one folder never both write it."""
    run = RunFolder(out)
    with run.lock():
        check_config(run, {**(config or {}), "options": options.to_dict()})
        yield run


def run_suite(suite: LiveSuite, backend: Backend, items: Sequence[dict], out: str | Path, *,
              options: SuiteOptions | None = None, config: Mapping[str, Any] | None = None,
              model_name: str = "model", cache: ResponseCache | None = None,
              max_in_flight: int = 32,
              progress: Callable[[str | None], None] | None = None) -> RunResult:
    """Run ``suite`` over ``items`` into the run folder ``out`` (resuming if it exists).

    ``options`` (the suite's own :class:`~confeval.suites.base.SuiteOptions`; its defaults when
    None; its record layout applied here) are written whole into ``run.json`` under
    ``"options"``, beside ``config`` (what else describes the run: command, model, data, n);
    resuming a folder made with anything different raises
    :class:`~confeval.runs.RunMismatchError` naming the first difference.
    """
    options = suite.for_records(options if options is not None else suite.default_options())
    with open_run_folder(out, options, config) as run:
        return _run(suite, backend, items, run, options, model_name=model_name, cache=cache,
                    max_in_flight=max_in_flight, progress=progress)


def _run(suite: LiveSuite, backend: Backend, items: Sequence[dict], run: RunFolder,
         options: SuiteOptions, *, model_name: str, cache: ResponseCache | None,
         max_in_flight: int, progress: Callable[[str | None], None] | None) -> RunResult:
    """The run itself, into a run folder this process holds, with its final options."""
    require(backend, suite.needs(backend, options), f"the {suite.name} suite needs it")
    ids = [str(it["item_id"]) for it in items]
    if len(set(ids)) != len(ids):
        raise ValueError("item_id values must be unique")
    # the folder is held (open_run_folder) from its check to the last write
    existing = run.records_for_resume()
    done = {str(r["item_id"]) for r in existing}
    todo = [it for it in items if str(it["item_id"]) not in done]
    # an in-process model that packs questions gets several items' calls at once (under the
    # cache: its keys stay those of single calls, and what it answers is never sent)
    gathering = GatheringBackend(backend) if backend.pack_items > 1 else None
    model = gathering or backend
    wrapped = CachedBackend(model, cache) if cache is not None else model
    step = progress or (lambda _msg=None: None)
    for _ in range(len(items) - len(todo)):
        step("resumed")
    in_flight = max(1, min(max_in_flight, backend.pack_items if gathering is not None
                           else backend.parallel_items))
    failures = asyncio.run(_drive(suite, wrapped, todo, run, options, in_flight,
                                  step, gathering))
    loaded = load_run_records(run.file(RunFolder.RECORDS))
    records, duplicates = first_per_item(loaded, ids)
    # records.jsonl in the items' order, so that scoring the folder again reads the very
    # rows, in the very order (splits are drawn over row positions), scored here; nothing
    # else in the file is dropped
    kept = {id(r) for r in records}
    run.write_records([*records, *(r for r in loaded if id(r) not in kept)])
    metrics = suite.score(records, options, model_name)
    metrics.setdefault("failed_items", len(failures))
    for key, value in record_counts(records).items():
        metrics.setdefault(key, value)
    if duplicates:
        metrics["duplicate_records_ignored"] = len(duplicates)
    if getattr(items, "excluded", None):
        metrics["excluded_at_load"] = dict(items.excluded)
    problems = publish(run, metrics)
    extras = suite.write_extras(run.path)
    calls = wrapped.calls if isinstance(wrapped, CachedBackend) else len(todo)
    return RunResult(run.path, len(items), len(todo) - len(failures), len(items) - len(todo),
                     failures, metrics, calls, extras, problems)


def run_live(suite_name: str, options: Mapping[str, Any], out: str | Path, *,
             backend: Backend | Callable[[], Backend], data: str | None = None,
             n: int | None = None, model: str | None = None, cache: ResponseCache | None = None,
             image_root: str | Path | None = None, command: str = "run",
             model_name: str | None = None, text_only: bool = False,
             progress_factory: Callable[[int, str], Any] | None = None,
             on_items: Callable[[Items], None] | None = None) -> RunResult:
    """The one live driver (``confeval <suite> run``, the demo's live sections, Python
    callers): the suite's options built and validated once from ``options`` (an unknown key
    refused by name; its record layout applied) and the output folder checked — both before
    ``backend`` is made, when it is a factory (a model load) — then the items loaded, the run
    folder opened once (resumed if it holds the same run), the run, and the suite's extra
    outputs.

    ``progress_factory(total, what)`` is a context manager giving the per-item step;
    ``on_items(items)`` sees the loaded items (e.g. to say which rows were left out);
    ``model_name`` names the model in the sections (default: ``model``); ``text_only`` (the
    backend was made without images) is recorded in ``run.json``."""
    live = live_part(suite_name)
    # built and validated once: the values given, the record layout the run writes in
    opts = build(SUITES[suite_name].Options, {**options, **live.record_layout},
                 what=f"the {suite_name} suite")
    check_output_folder(out, command, suite=suite_name)
    if not isinstance(backend, Backend):
        backend = backend()
    where = {"image_root": str(image_root)} if image_root is not None else {}
    data = data or live.default_data
    items = live.load_items(data, n, data_seed(data, opts.seed), **where)
    if on_items is not None:
        on_items(items)
    config = {"command": command, "suite": suite_name, "model": model or "local",
              "backend": backend.identity(), "data": data, "n": n, **where,
              **({"text_only": True} if text_only else {})}
    # a mismatch is refused before any progress bar
    with open_run_folder(out, opts, config) as run:
        bar = progress_factory(len(items), f"{suite_name}: {model or 'local'}") \
            if progress_factory is not None else nullcontext(None)
        with bar as step:
            return _run(live, backend, items, run, opts,
                        model_name=model_name or model or "local", cache=cache,
                        max_in_flight=32, progress=step)
