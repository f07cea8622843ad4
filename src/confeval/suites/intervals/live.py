"""The judge-intervals suite's live path: ask a model to grade answers 1-5, record the
log-probabilities of the five rating tokens, then score conformal intervals on them.

Input data (``--data``): see :mod:`confeval.suites.intervals.inputs`.

The prompt (our own wording) asks for a short justification and a last line ``Score: X``.
How the rating distribution is read (``--method``):

``score``         exact: the log-probability of each reply ``Score: k`` (k = 1..5) is computed by
                  the backend, and the five are renormalised; the judge answers without a
                  written justification. Needs a backend with exact scoring (``local``, ``hf:``).
``top_logprobs``  the judge writes freely with top-k log-probabilities; the rating token is
                  located with the three-stage locator of :mod:`confeval.parse` and every
                  level's log-prob read from its alternatives (floor ln 1e-5 when missing).
``auto``          ``score`` when the backend can, else ``top_logprobs``.

Records hold ``score_lp1..score_lp5``, ``parsed_score``, ``gt_score``, ``stage`` (where the
rating was found), ``flags``, ``status`` and ``reason``: the input format of
``confeval intervals score --logprob-cols 'score_lp*' --pred-col parsed_score``, which a run
folder gets from its ``run.json`` (``confeval intervals score RUN_DIR``).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from ...backends import Backend, GenerateParams
from ...parse import DEFAULT_FLOOR, extract_score
from ...records import RUN_RECORDS, RecordSet
from .._judge import build_judge_messages
from .._multiple_choice import valid_logprobs
from .._seeds import format_seeds
from ..base import LiveSuite, distribution_needs, read_method
from .inputs import load_judge_items
from .options import IntervalsOptions
from .scoring import score_intervals_records

__all__ = ["LIVE", "IntervalsLive", "build_judge_messages"]

LEVELS = (1, 2, 3, 4, 5)

_METHOD_OF = {"scored": "score", "generated": "top_logprobs"}


def _method(options) -> str:
    """The read method an ``--answer`` mode stands for (``--method`` when ``auto``)."""
    return _METHOD_OF.get(options.answer, options.method)


class IntervalsLive(LiveSuite):
    """Ask a judge to grade each answer 1-5 and record its rating distribution; score
    conformal intervals and rating sets on it."""

    name = "intervals"
    default_data = "builtin:arith-judge"
    Options = IntervalsOptions
    record_layout: ClassVar[dict[str, Any]] = {
        "logprob_cols": "score_lp*", "label_col": "gt_score", "pred_col": "parsed_score",
        "min_score": 1, "max_score": 5, "group_col": None, "group_map": None, "join": (),
        "mondrian": False, "separately": False}

    def needs(self, backend: Backend, options: IntervalsOptions) -> list[str]:
        return distribution_needs(backend, _method(options))

    def load_items(self, data: str, n: int | None, seed: int, *,
                   image_root: str | None = None) -> list[dict]:
        return load_judge_items(data, n, seed)

    async def run_item(self, item: dict, backend: Backend, options: IntervalsOptions) -> dict:
        method = read_method(backend, _method(options))
        record = dict(item)
        record["method"] = method
        record["answer"] = "scored" if method == "score" else "generated"
        if method == "score":
            messages = build_judge_messages(item, direct=True)
            raw = np.asarray(await backend.score(messages, [f"Score: {k}" for k in LEVELS]))
            if not valid_logprobs(raw):
                record.update(stage="exact", flags=[], text=None, status="unparseable",
                              reason="invalid_logprobs", parsed_score=None)
                return record
            logprobs = raw - np.logaddexp.reduce(raw)  # renormalised over the five ratings
            record.update(stage="exact", flags=[], text=None, status="ok", reason=None,
                          parsed_score=int(LEVELS[int(np.argmax(logprobs))]))
        else:
            params = GenerateParams(max_tokens=options.max_tokens, temperature=0.0,
                                    logprobs=True, top_logprobs=options.top_k)
            gen = (await backend.generate(build_judge_messages(item, direct=False), params))[0]
            try:
                found = extract_score(gen.tokens or (), LEVELS, floor=DEFAULT_FLOOR)
            except Exception as exc:  # untrusted output: never let it end the run
                record.update(stage="none", flags=[], text=gen.text, status="unparseable",
                              reason=f"parser_error: {type(exc).__name__}", parsed_score=None)
                return record
            record.update(stage=found.stage, flags=found.flags, text=gen.text)
            # a NaN from a server is no probability (the extractor's floor would hide it)
            has_nan = any(f.startswith("nan_replaced") for f in found.flags)
            if found.ok and (has_nan or not valid_logprobs(found.logprobs)):
                record.update(status="unparseable", reason="invalid_logprobs",
                              parsed_score=None)
                return record
            if not found.ok:
                why = ("reply_too_long" if "reply_too_long" in found.flags
                       else "no rating found in the reply")
                record.update(status="unparseable", reason=why, parsed_score=None)
                return record
            logprobs = np.asarray(found.logprobs)
            record.update(status="ok", reason=None, parsed_score=int(found.score))
        for k, lp in zip(LEVELS, logprobs):
            record[f"score_lp{k}"] = float(lp)
        return record

    def score(self, records: list[dict], options: IntervalsOptions, model_name: str) -> dict:
        """The run's section, computed by the path that scores a record file (``confeval
        intervals score RUN_DIR``): records -> read_intervals_records -> score_intervals."""
        section: dict[str, Any] = {
            "kind": "intervals", "title": "Judge scores: conformal intervals",
            "description": "The judge's five rating-token log-probabilities as features; "
                           "50/50 calibration/test splits, seeds "
                           f"{format_seeds(options.seeds)}.",
            "results": {}}
        metrics = {"title": f"confeval run intervals — {model_name}", "simulated": False,
                   "n_records": len(records), "sections": [section]}
        try:
            section["results"][model_name] = score_intervals_records(
                RecordSet.from_records(records, source=RUN_RECORDS), options)
        except ValueError as exc:  # too few usable records
            metrics["warnings"] = [str(exc)]
        return metrics


LIVE = IntervalsLive()
