"""The judge-intervals suite's live path: ask a model to grade answers 1-5, record the
log-probabilities of the five rating tokens, then score conformal intervals on them.

Input data (``--data``): ``builtin:arith-judge`` or a JSONL/CSV/Parquet file with
``question``, ``response`` (the answer to grade), ``gt_score`` (the human grade, 1-5) and
optionally ``item_id``, ``reference`` (a reference answer shown to the judge) and any other
columns (e.g. ``task``), which are carried into the records.

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

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..backends import Backend, GenerateParams
from ..parse import DEFAULT_FLOOR, extract_score
from ..records import RecordsError, RecordSet
from ..tasks import load_builtin
from .base import LiveSuite, register_suite

__all__ = ["IntervalsSuite", "build_judge_messages", "load_judge_items"]

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


def load_judge_items(data: str, n: int | None = None, seed: int = 0) -> list[dict]:
    """Items to grade from ``builtin:arith-judge`` or a file (see module docstring)."""
    if data.startswith("builtin:"):
        return load_builtin(data.split(":", 1)[1], n or 200, seed)
    rs = RecordSet.read(Path(data))
    missing = [c for c in ("question", "response", "gt_score") if c not in rs.frame.columns]
    if missing:
        raise RecordsError(f"{data}: column(s) {missing} not found; judge data needs question, "
                           "response and gt_score")
    items = []
    for row in rs.frame.to_dict(orient="records"):
        item = {k: v for k, v in row.items() if k != "_row"}
        item["item_id"] = str(row.get("item_id", f"row-{row['_row']}"))
        items.append(item)
    return items[:n] if n else items


def _as_level(value: Any) -> float | None:
    """A human grade as one of the levels, or None (missing, text, off the scale)."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return v if v in LEVELS else None


class IntervalsSuite(LiveSuite):
    name = "intervals"
    default_data = "builtin:arith-judge"

    def needs(self, backend: Backend, options: Mapping[str, Any]) -> list[str]:
        return ["score"] if self._method(backend, options) == "score" else ["generate",
                                                                            "logprobs"]

    @staticmethod
    def _method(backend: Backend, options: Mapping[str, Any]) -> str:
        method = options.get("method", "auto")
        if method == "auto":
            return "score" if "score" in backend.capabilities else "top_logprobs"
        if method not in ("score", "top_logprobs"):
            raise ValueError(f"intervals: --method must be auto, score or top_logprobs, "
                             f"got {method!r}")
        return method

    def load_items(self, data: str, n: int | None, seed: int) -> list[dict]:
        return load_judge_items(data, n, seed)

    async def run_item(self, item: dict, backend: Backend,
                       options: Mapping[str, Any]) -> dict:
        method = self._method(backend, options)
        record = dict(item)
        record["method"] = method
        if method == "score":
            messages = build_judge_messages(item, direct=True)
            raw = np.asarray(await backend.score(messages, [f"Score: {k}" for k in LEVELS]))
            logprobs = raw - np.logaddexp.reduce(raw)  # renormalised over the five ratings
            record.update(stage="exact", flags=[], text=None, status="ok", reason=None,
                          parsed_score=int(LEVELS[int(np.argmax(logprobs))]))
        else:
            params = GenerateParams(max_tokens=options.get("max_tokens") or 160, temperature=0.0,
                                    logprobs=True, top_logprobs=options.get("top_k", 20))
            gen = (await backend.generate(build_judge_messages(item, direct=False), params))[0]
            found = extract_score(gen.tokens or (), LEVELS, floor=DEFAULT_FLOOR)
            record.update(stage=found.stage, flags=found.flags, text=gen.text)
            if not found.ok:
                record.update(status="unparseable", reason="no rating found in the reply",
                              parsed_score=None)
                return record
            logprobs = np.asarray(found.logprobs)
            record.update(status="ok", reason=None, parsed_score=int(found.score))
        for k, lp in zip(LEVELS, logprobs):
            record[f"score_lp{k}"] = float(lp)
        return record

    def score(self, records: list[dict], options: Mapping[str, Any]) -> dict:
        from .intervals_scoring import score_intervals

        name = options.get("model_name", "model")
        parsed_ok = [r for r in records if r.get("status") == "ok"]
        ok = [r for r in parsed_ok if _as_level(r.get("gt_score")) is not None]
        excluded = {k: v for k, v in (("unparseable", len(records) - len(parsed_ok)),
                                      ("unknown_gt_score", len(parsed_ok) - len(ok))) if v}
        section: dict[str, Any] = {
            "kind": "intervals", "title": "Judge scores: conformal intervals",
            "description": "The judge's five rating-token log-probabilities as features; "
                           "50/50 calibration/test splits, seeds 1-5.",
            "results": {}}
        if len(ok) >= 20:
            X = np.array([[r[f"score_lp{k}"] for k in LEVELS] for r in ok])
            y = np.array([_as_level(r["gt_score"]) for r in ok])
            parsed = np.array([float(r["parsed_score"]) for r in ok])
            res = score_intervals(X, y, parsed=parsed, levels=LEVELS,
                                  alpha=options.get("alpha", 0.1), seeds=range(1, 6),
                                  methods=LIVE_METHODS, base="linear")
            stages: dict[str, int] = {}
            for r in records:
                stages[str(r.get("stage"))] = stages.get(str(r.get("stage")), 0) + 1
            section["results"][name] = {"n_read": len(records), "n_used": len(ok),
                                        "excluded": excluded, "stages": stages, **res}
        return {"title": f"confeval run intervals — {name}", "simulated": False,
                "n_records": len(records), "excluded": excluded, "sections": [section]}


register_suite(IntervalsSuite())
