"""Live judges for ``confeval judge reruns --repeats K`` and ``confeval judge position
--model M``: ask a model, on any backend (the embedded local model included), and score its
records by the path that scores a file (:mod:`confeval.verbs.judge_tests`).

**Reruns.** Each item of a judge dataset (``builtin:arith-judge``, or a file with
``question``, ``response``, ``gt_score`` and optionally ``reference``) is graded 1-5 ``K``
times at the judge's sampling settings (``--temperature``, ``--top-p``, ``--max-tokens``;
``--answer justified`` asks for a sentence then ``Score: X``, ``direct`` for the line only).
Repeat ``r`` is its own request with seed ``--seed + r - 1``: its own record (``item``,
``repeat``), its own entry in the response cache, so a run stopped half-way resumes at the
repeats it lacks and a run with more repeats reuses the first ones' answers. The score is read
from the reply's tokens (with the score-token log-probabilities ``score_lp1..5`` where the
backend gives log-probabilities), else from its text; a reply without a score is recorded as
``unparseable``, and that repeat is no score for its item.

**Position.** Each pair (``builtin:arith-pairwise``, or a file with a question and two answers)
is shown in both orders; the judge names the better answer's letter. With a backend that
scores continuations (``local``, ``hf:``) the letters ``A`` and ``B`` are scored exactly and
the verdict is the likelier one, its probability (renormalised over the two) the confidence;
otherwise the judge generates greedily and its first A or B is the verdict (the confidence its
token's probability, where the backend gives log-probabilities).

A run folder holds ``records.jsonl`` (one line per repeat, or per pair), ``run.json`` (with
``"live": true``), ``metrics.json`` and ``report.html``; ``confeval rerun`` scores its records
again without calling the model.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..backends import Backend, GenerateParams
from ..records import RUN_RECORDS, RecordSet
from ..suites.base import LiveSuite
from .judge_tests import (
    JudgePositionOptions,
    JudgeRerunsOptions,
    judge_position_records,
    judge_reruns_from_sets,
    judge_section,
)

__all__ = ["PositionLive", "RerunsLive", "rescore_live", "run_judge_live"]

LEVELS = (1, 2, 3, 4, 5)

RERUNS_LAYOUT = {"score_cols": None, "score_col": "parsed_score", "rerun_col": "repeat",
                 "id_col": "item", "human_col": "gt_score", "logprob_cols": "score_lp*",
                 "min_score": 1.0, "max_score": 5.0}
"""How a live rerun's records are read (fixed in its ``run.json``)."""


def _plain(item: Mapping[str, Any]) -> dict:
    return {k: v for k, v in item.items()
            if isinstance(v, (str, int, float, bool)) or v is None}


class RerunsLive(LiveSuite):
    """A judge asked ``repeats`` times per item (one record per repeat)."""

    name = "judge reruns"
    default_data = "builtin:arith-judge"
    Options = JudgeRerunsOptions  # type: ignore[assignment]

    def needs(self, backend: Backend, options: Any) -> list[str]:
        return ["generate"]

    def load_items(self, data: str, n: int | None, seed: int, *,
                   image_root: str | None = None) -> list[dict]:
        from ..suites._judge import load_judge_items

        return load_judge_items(data, n, seed)

    async def run_item(self, item: dict, backend: Backend, options: Any) -> dict:
        from ..parse import DEFAULT_FLOOR, extract_score, extract_score_from_text
        from ..suites._judge import build_judge_messages

        direct = options.answer == "direct"
        logprobs = "logprobs" in backend.capabilities
        params = GenerateParams(max_tokens=min(options.max_tokens, 16) if direct
                                else options.max_tokens,
                                temperature=options.temperature, top_p=options.top_p,
                                seed=options.seed + int(item["repeat"]) - 1,
                                logprobs=logprobs, top_logprobs=5 if logprobs else 0)
        gen = (await backend.generate(build_judge_messages(item, direct=direct), params))[0]
        record = {**_plain(item), "text": gen.text, "temperature": options.temperature}
        try:
            found = (extract_score(gen.tokens, LEVELS, floor=DEFAULT_FLOOR) if gen.tokens
                     else extract_score_from_text(gen.text, LEVELS))
        except Exception as exc:  # untrusted output: never let it end the run
            return {**record, "status": "unparseable", "parsed_score": None,
                    "reason": f"parser_error: {type(exc).__name__}"}
        if not found.ok:
            return {**record, "status": "unparseable", "parsed_score": None,
                    "reason": "no score found in the reply"}
        record.update(status="ok", reason=None, parsed_score=int(found.score),
                      stage=found.stage)
        if found.logprobs is not None and all(math.isfinite(v) for v in found.logprobs):
            record.update({f"score_lp{k}": float(v) for k, v in zip(LEVELS, found.logprobs)})
        return record

    def score(self, records: list[dict], options: Any, model_name: str) -> dict:
        return _metrics("judge reruns", records, options, model_name)


class PositionLive(LiveSuite):
    """A pairwise judge asked about each pair in both orders (one record per pair)."""

    name = "judge position"
    default_data = "builtin:arith-pairwise"
    Options = JudgePositionOptions  # type: ignore[assignment]

    def needs(self, backend: Backend, options: Any) -> list[str]:
        return ["score"] if "score" in backend.capabilities else ["generate"]

    def load_items(self, data: str, n: int | None, seed: int, *,
                   image_root: str | None = None) -> list[dict]:
        raise NotImplementedError("run_judge_live loads the pairs with the options' columns")

    async def _verdict(self, backend: Backend, item: dict, first: str, second: str
                       ) -> tuple[int | None, float | None, float | None]:
        """(slot picked: 0 first, 1 second; its probability; the first slot's probability)."""
        from ..suites._judge import PAIRWISE_LETTERS, build_pairwise_messages

        messages = build_pairwise_messages(item["question"], item[first], item[second])
        if "score" in backend.capabilities:
            raw = np.asarray(await backend.score(messages, list(PAIRWISE_LETTERS)))
            if not np.isfinite(raw).all():
                return None, None, None
            p = np.exp(raw - np.logaddexp.reduce(raw))
            pick = int(np.argmax(p))
            return pick, float(p[pick]), float(p[0])
        logprobs = "logprobs" in backend.capabilities
        gen = (await backend.generate(messages, GenerateParams(
            max_tokens=4, temperature=0.0, logprobs=logprobs,
            top_logprobs=5 if logprobs else 0)))[0]
        found = re.search(r"\b([AB])\b", gen.text or "")
        if not found:
            return None, None, None
        pick = PAIRWISE_LETTERS.index(found.group(1))
        conf = None
        for token in gen.tokens or ():
            if token.token.strip() == found.group(1):
                conf = float(math.exp(token.logprob))
                break
        return pick, conf, None if conf is None else (conf if pick == 0 else 1 - conf)

    async def run_item(self, item: dict, backend: Backend, options: Any) -> dict:
        record = _plain(item)
        for order, (first, second) in (("ab", ("answer_a", "answer_b")),
                                       ("ba", ("answer_b", "answer_a"))):
            pick, conf, p_first = await self._verdict(backend, item, first, second)
            names = (first, second)
            record[f"verdict_{order}"] = None if pick is None else names[pick][-1]
            record[f"conf_{order}"] = conf
            record[f"p_first_{order}"] = p_first
        ok = record["verdict_ab"] is not None and record["verdict_ba"] is not None
        record.update(status="ok" if ok else "unparseable",
                      reason=None if ok else "no letter A or B in a reply")
        return record

    def score(self, records: list[dict], options: Any, model_name: str) -> dict:
        return _metrics("judge position", records, options, model_name)


LIVE = {"judge reruns": RerunsLive(), "judge position": PositionLive()}


def _metrics(command: str, records: list[dict], options: Any, model_name: str) -> dict:
    """The run's metrics, by the path that scores a file."""
    from .judge_tests import KINDS

    metrics: dict[str, Any] = {"title": f"confeval {command} — {model_name}",
                               "simulated": False, "n_records": len(records),
                               "sections": [judge_section(command, {})]}
    rs = RecordSet.from_records(records, source=RUN_RECORDS)
    try:
        if command == "judge reruns":
            if not any("score_lp1" in r for r in records):   # no log-probabilities given
                options = dataclasses.replace(options, logprob_cols=None)
            result = judge_reruns_from_sets([rs], options)
        else:
            result = judge_position_records(rs, options)
        metrics["sections"][0]["results"][model_name] = result
    except ValueError as exc:  # too few usable records
        metrics["warnings"] = [str(exc)]
    metrics["sections"][0]["title"] = KINDS[command][1]
    return metrics


def live_options(command: str, values: Mapping[str, Any], items: list[dict] | None = None
                 ) -> Any:
    """The options of a live run: those given, with the records' layout fixed."""
    from ..suites.options import build

    if command == "judge reruns":
        return build(JudgeRerunsOptions, {**values, **RERUNS_LAYOUT},
                     what=f"confeval {command}")
    fixed = {"ab_col": "verdict_ab", "ba_col": "verdict_ba", "conf_ab_col": "conf_ab",
             "conf_ba_col": "conf_ba", "a_col": "answer_a", "b_col": "answer_b"}
    if not values.get("human_col") and items and "human" in items[0]:
        fixed["human_col"] = "human"
    return build(JudgePositionOptions, {**values, **fixed}, what=f"confeval {command}")


def run_judge_live(command: str, values: Mapping[str, Any], out: str | Path, *,
                   backend: Backend | Any, data: str | None = None, n: int | None = None,
                   model: str | None = None, cache: Any = None,
                   progress_factory: Any = None):
    """Run a live judge (``command``: ``judge reruns`` or ``judge position``) into the run
    folder ``out`` (resumed when it holds the same run): the items loaded, each asked (every
    repeat, or both orders), the records scored. ``backend`` may be a factory (a model load,
    made after every check). Returns the :class:`~confeval.verbs.run.RunResult`."""
    from contextlib import nullcontext

    from ..runs import check_output_folder
    from ..suites._judge import load_pairwise_items
    from .run import run_suite

    live = LIVE[command]
    data = data or live.default_data
    seed = int(values.get("seed", 0))
    from ..tasks import data_seed

    if command == "judge reruns":
        options = live_options(command, values)
        if options.repeats is None:
            raise ValueError("--repeats K: how many times to ask the judge per item")
        base = live.load_items(data, n, data_seed(data, seed))
        items = [{**it, "item": str(it["item_id"]), "repeat": r,
                  "item_id": f"{it['item_id']}#{r}"}
                 for it in base for r in range(1, options.repeats + 1)]
    else:
        probe = dataclasses.replace(JudgePositionOptions(), **{
            k: v for k, v in values.items() if k in {"a_col", "b_col", "question_col"}})
        items = load_pairwise_items(data, n, data_seed(data, seed), a_col=probe.a_col,
                                    b_col=probe.b_col, question_col=probe.question_col)
        options = live_options(command, values, items)
    check_output_folder(out, command)
    if not isinstance(backend, Backend):
        backend = backend()
    config = {"command": command, "live": True, "model": model or "local",
              "backend": backend.identity(), "data": data, "n": n}
    bar = progress_factory(len(items), f"{command}: {model or 'local'}") \
        if progress_factory is not None else nullcontext(None)
    with bar as step:
        return run_suite(live, backend, items, out, options=options, config=config,
                         model_name=model or "local", cache=cache, progress=step)


def rescore_live(command: str, config: Mapping[str, Any], options: Any, run_dir: Path
                 ) -> dict:
    """A live judge folder's metrics computed again from its records (no model call)."""
    from ..runs import RunFolder, load_run_records
    from .run import first_per_item

    run = RunFolder(run_dir, create=False)
    records, _ = first_per_item(load_run_records(run.file(RunFolder.RECORDS)))
    metrics = _metrics(command, records, options, str(config.get("model") or "local"))
    old = run.read_metrics() if run.file(RunFolder.METRICS).is_file() else {}
    for key in ("failed_items", "records_by_status", "excluded_records",
                "duplicate_records_ignored"):
        if key in old:
            metrics[key] = old[key]
    return metrics
