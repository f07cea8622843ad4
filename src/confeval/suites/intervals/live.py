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
``confeval intervals score --logprob-cols 'score_lp*' --pred-col parsed_score``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from ...backends import Backend, GenerateParams
from ...parse import DEFAULT_FLOOR, extract_score
from .._multiple_choice import valid_logprobs
from .._seeds import parse_seeds
from ..base import (
    LiveSuite,
    SuiteOptions,
    check_answer_mode,
    distribution_needs,
    read_method,
)
from .inputs import load_judge_items

__all__ = ["SUITE", "IntervalsOptions", "IntervalsSuite", "build_judge_messages"]

LEVELS = (1, 2, 3, 4, 5)
LIVE_METHODS = ("naive", "lvd", "ordinal_aps", "lac", "aps")
"""Cheap enough for a few hundred live items; ``confeval intervals score`` runs them all."""

_INSTRUCTIONS = (
    "You are grading how good an answer is. Read the question, the answer"
    "{reference_note}, then give a grade from 1 to 5: 5 = fully correct, 4 = correct up to a "
    "tiny slip, 3 = partly right, 2 = mostly wrong, 1 = completely wrong. "
    "{how}")
_HOW_FREE = "Justify the grade in one or two sentences, then end with a line 'Score: X'."
_HOW_DIRECT = "Reply with the line 'Score: X' only."


def build_judge_messages(item: Mapping[str, Any], *, direct: bool) -> list[dict]:
    """Chat messages asking for a 1-5 grade that ends in ``Score: X``."""
    reference = item.get("reference")
    has_reference = reference is not None and str(reference).strip() != ""
    system = _INSTRUCTIONS.format(
        reference_note=" and the reference answer" if has_reference else "",
        how=_HOW_DIRECT if direct else _HOW_FREE)
    user = f"Question: {item['question']}\nAnswer to grade: {item['response']}"
    if has_reference:
        user += f"\nReference answer: {reference}"
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def _as_level(value: Any) -> float | None:
    """A human grade as one of the levels, or None (missing, text, off the scale)."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return v if v in LEVELS else None


_METHOD_OF = {"scored": "score", "generated": "top_logprobs"}


def _method(options) -> str:
    """The read method an ``--answer`` mode stands for (``--method`` when ``auto``)."""
    return _METHOD_OF.get(options.answer, options.method)


@dataclasses.dataclass(frozen=True)
class IntervalsOptions(SuiteOptions):
    """Options of a live intervals run: the shared ones, ``alpha``, the interval and rating-set
    ``methods`` scored (comma list), the scoring ``seeds``, the judge's reply length
    ``max_tokens`` (generated mode) and the ``answer`` mode: ``scored`` (the exact score of each
    rating after the rubric), ``generated`` (a reply whose rating token's top log-probabilities
    give the distribution), or ``auto`` (``--method`` decides, scored where the backend can)."""

    alpha: float = 0.1
    methods: str = ",".join(LIVE_METHODS)
    seeds: str = "1-5"
    max_tokens: int = 160
    answer: str = "auto"

    def __post_init__(self) -> None:
        super().__post_init__()
        from .scoring import IntervalsConfig

        check_answer_mode(self.answer)

        IntervalsConfig(methods=self.methods, seeds=self.seeds, alpha=self.alpha)  # validates
        if self.max_tokens < 1:
            raise ValueError("--max-tokens must be at least 1")


class IntervalsSuite(LiveSuite):
    """Ask a judge to grade each answer 1-5 and record its rating distribution; score
    conformal intervals and rating sets on it."""

    name = "intervals"
    default_data = "builtin:arith-judge"
    Options = IntervalsOptions

    def needs(self, backend: Backend, options: IntervalsOptions) -> list[str]:
        return distribution_needs(backend, _method(options))

    def load_items(self, data: str, n: int | None, seed: int) -> list[dict]:
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
        from .scoring import score_intervals

        name = model_name
        parsed_ok = [r for r in records if r.get("status") == "ok"]
        ok = [r for r in parsed_ok if _as_level(r.get("gt_score")) is not None]
        excluded = {k: v for k, v in (("unparseable", len(records) - len(parsed_ok)),
                                      ("unknown_gt_score", len(parsed_ok) - len(ok))) if v}
        section: dict[str, Any] = {
            "kind": "intervals", "title": "Judge scores: conformal intervals",
            "description": "The judge's five rating-token log-probabilities as features; "
                           f"50/50 calibration/test splits, seeds {options.seeds}.",
            "results": {}}
        if len(ok) >= 20:
            X = np.array([[r[f"score_lp{k}"] for k in LEVELS] for r in ok])
            y = np.array([_as_level(r["gt_score"]) for r in ok])
            parsed = np.array([float(r["parsed_score"]) for r in ok])
            res = score_intervals(X, y, parsed=parsed, levels=LEVELS, alpha=options.alpha,
                                  seeds=parse_seeds(options.seeds),
                                  methods=[m.strip() for m in options.methods.split(",")],
                                  base="linear")
            stages: dict[str, int] = {}
            for r in records:
                stages[str(r.get("stage"))] = stages.get(str(r.get("stage")), 0) + 1
            section["results"][name] = {"n_read": len(records), "n_used": len(ok),
                                        "excluded": excluded, "stages": stages, **res}
        return {"title": f"confeval run intervals — {name}", "simulated": False,
                "n_records": len(records), "excluded": excluded, "sections": [section]}


SUITE = IntervalsSuite()
