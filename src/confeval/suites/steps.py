"""The process-judge suite's live path: ask a judge to verify every step of a solution and
record its P(correct) per step, for the original chain and each perturbed variant.

Input data (``--data``): ``builtin:arith-steps`` or a JSONL/Parquet/CSV file, one row per
(problem, variant): ``item_id``, ``problem``, ``final_answer``, ``steps`` (a list of step
texts; JSON in CSV), ``labels`` (1/0 per step), ``error_types`` (per step, empty on correct
steps), optional ``variant`` (default ``original``), ``images`` (list of local paths or
``data:`` URLs) and metadata columns (``difficulty``, ``subject``, …) carried into the records.
A perturbed dataset written by ``confeval perturb`` has the same format.

Each record is one step: ``item_id, step, variant, p_correct, label, error_type,
pred_label, pred_error_type, status, reason, flags`` plus metadata — the input of
``confeval steps score``. A reply the parser cannot read gives unparseable step records
(counted, never dropped); see :mod:`confeval.parse.steps` and its consistency policy.
"""

from __future__ import annotations

import base64
import json
import mimetypes
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..backends import Backend, GenerateParams
from ..parse.steps import ERROR_TYPES, parse_step_judgement
from ..records import RecordsError, RecordSet
from ..tasks import load_builtin
from .base import LiveSuite, register_suite

__all__ = ["StepsSuite", "build_step_judge_messages", "load_step_items"]

_TYPE_NAMES = [key.replace("_", " ").capitalize() + " error" if key != "no_solution_provided"
               else "No solution provided" for key in ERROR_TYPES]

_SYSTEM = """You check student solutions to science problems one step at a time.

First work out the problem yourself; the correct final answer is given so that you can find \
a sound line of reasoning. Then judge every numbered step of the student's solution on its \
own scientific, logical and mathematical merit (wording, notation and layout do not matter).

For each step give:
- label: 1 if you judge the step correct, 0 if not;
- p: your probability, strictly between 0 and 1, that the step is correct (label 1 exactly \
when p is at least 0.5);
- error: for an incorrect step, one of: {types}; an empty string for a correct step.

Answer with exactly one entry per step, in order, none merged or skipped, inside \
<evaluation> and </evaluation>:
{format}"""

_FORMATS = {
    "list": "<evaluation>\n[\n  [\"Step 1\", label, p, \"error\"],\n  ...\n]\n</evaluation>",
    "json": "<evaluation>\n[{\"step\": 1, \"label\": 1, \"p\": 0.9, \"error\": \"\"}, ...]\n"
            "</evaluation>",
}


def build_step_judge_messages(problem: str, final_answer: str, steps: Sequence[str], *,
                              images: Sequence[str] = (), output: str = "list") -> list[dict]:
    """Chat messages asking a judge for (label, P(correct), error type) per step."""
    if output not in _FORMATS:
        raise ValueError(f"output must be one of {tuple(_FORMATS)}")
    system = _SYSTEM.format(types="; ".join(_TYPE_NAMES), format=_FORMATS[output])
    numbered = "\n".join(f"Step {i + 1}: {s}" for i, s in enumerate(steps))
    text = (f"Problem: {problem}\nCorrect final answer: {final_answer}\n"
            f"Student's solution ({len(steps)} steps):\n{numbered}")
    if images:
        content: Any = [{"type": "image_url", "image_url": {"url": _image_url(str(u))}}
                        for u in images]
        content.append({"type": "text", "text": text})
    else:
        content = text
    return [{"role": "system", "content": system}, {"role": "user", "content": content}]


def _image_url(ref: str) -> str:
    """A local image path becomes an inline ``data:`` URL (every backend accepts those, and
    nothing is fetched from the web); data: and file: URLs pass through."""
    if ref.startswith(("data:", "file://", "http://", "https://")):
        return ref
    path = Path(ref)
    if not path.is_file():
        raise ValueError(f"image not found: {ref}")
    mime = mimetypes.guess_type(path.name)[0] or "image/png"
    return f"data:{mime};base64,{base64.b64encode(path.read_bytes()).decode('ascii')}"


def _as_list(value: Any, what: str, item_id: str) -> list:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise RecordsError(f"{item_id}: {what} is not a JSON list") from None
    if hasattr(value, "tolist"):
        value = value.tolist()
    if not isinstance(value, list):
        raise RecordsError(f"{item_id}: {what} must be a list")
    return value


def load_step_items(data: str, n: int | None = None, seed: int = 0) -> list[dict]:
    """Problems with steps from ``builtin:arith-steps`` or a file (module docstring)."""
    if data.startswith("builtin:"):
        items = load_builtin(data.split(":", 1)[1], n or 200, seed)
    else:
        rs = RecordSet.read(Path(data))
        need = ("problem", "final_answer", "steps", "labels")
        missing = [c for c in need if c not in rs.frame.columns]
        if missing:
            raise RecordsError(f"{data}: column(s) {missing} not found; step data needs "
                               f"{', '.join(need)} (+ error_types, variant, images)")
        items = [{k: v for k, v in row.items() if k != "_row"}
                 for row in rs.frame.to_dict(orient="records")]
        for row, item in zip(rs.frame["_row"], items):
            item.setdefault("item_id", f"row-{row}")
    out = []
    for item in items[:n] if n else items:
        item_id = str(item.get("item_id"))
        steps = [str(s) for s in _as_list(item["steps"], "steps", item_id)]
        labels = [int(v) for v in _as_list(item["labels"], "labels", item_id)]
        types = item.get("error_types")
        types = ["" if t is None else str(t)
                 for t in (_as_list(types, "error_types", item_id) if types is not None
                           and not (isinstance(types, float)) else [""] * len(steps))]
        if not len(steps) == len(labels) == len(types):
            raise RecordsError(f"{item_id}: steps, labels and error_types differ in length")
        variant = item.get("variant")
        variant = "original" if variant is None or isinstance(variant, float) or not str(
            variant).strip() else str(variant).strip()
        images = item.get("images")
        images = [] if images is None or isinstance(images, float) else \
            _as_list(images, "images", item_id)
        out.append({**item, "item_id": item_id, "steps": steps, "labels": labels,
                    "error_types": types, "variant": variant, "images": images,
                    "run_id": f"{item_id}::{variant}"})
    return out


def verdict_records(item: Mapping[str, Any], reply: str | None, *,
                    consistency: str = "flag") -> list[dict]:
    """One record per step of ``item`` from the judge's ``reply`` (None: no reply)."""
    verdicts = parse_step_judgement(reply, len(item["steps"]), consistency=consistency)
    meta = {k: v for k, v in item.items()
            if k not in ("steps", "labels", "error_types", "images", "problem", "final_answer",
                         "run_id") and not isinstance(v, (list, dict))}
    return [{**meta, "item_id": item["item_id"], "variant": item["variant"], "step": v.step,
             "p_correct": v.p_correct, "label": item["labels"][v.step],
             "error_type": item["error_types"][v.step], "pred_label": v.pred_label,
             "pred_error_type": v.pred_error_type, "status": v.status, "reason": v.reason,
             "flags": v.flags} for v in verdicts]


class StepsSuite(LiveSuite):
    name = "steps"
    default_data = "builtin:arith-steps"

    def needs(self, backend: Backend, options: Mapping[str, Any]) -> list[str]:
        return ["generate"]

    def load_items(self, data: str, n: int | None, seed: int) -> list[dict]:
        items = load_step_items(data, n, seed)
        for item in items:  # the runner keys records by item_id: one per (problem, variant)
            item["problem_id"], item["item_id"] = item["item_id"], item["run_id"]
        return items

    async def run_item(self, item: dict, backend: Backend,
                       options: Mapping[str, Any]) -> dict:
        messages = build_step_judge_messages(item["problem"], item["final_answer"],
                                             item["steps"], images=item.get("images") or (),
                                             output=options.get("output", "list"))
        params = GenerateParams(max_tokens=options.get("max_tokens") or 1024, temperature=0.0)
        gen = (await backend.generate(messages, params))[0]
        steps = verdict_records({**item, "item_id": item["problem_id"]}, gen.text,
                                consistency=options.get("consistency", "flag"))
        ok = sum(r["status"] == "ok" for r in steps)
        # also a valid row for `confeval steps parse` (re-parse with another policy)
        return {"item_id": item["item_id"], "problem_id": item["problem_id"],
                "variant": item["variant"], "raw_output": gen.text,
                "n_steps": len(item["steps"]), "labels": item["labels"],
                "error_types": item["error_types"], "steps": steps,
                "status": "ok" if ok == len(steps) else "unparseable",
                "reason": None if ok == len(steps) else f"{len(steps) - ok} step(s) unread"}

    def score(self, records: list[dict], options: Mapping[str, Any]) -> dict:
        import pandas as pd

        from .steps_scoring import score_steps

        name = options.get("model_name", "model")
        rows = [s for r in records for s in r.get("steps", [])]
        frame = pd.DataFrame(rows)
        section: dict[str, Any] = {"kind": "steps", "title": "Process judge: step confidence",
                                   "results": {}}
        if len(frame):
            ok = frame[frame.status == "ok"].copy()
            excluded = {"unparseable_step": int(len(frame) - len(ok))} if len(ok) < len(
                frame) else {}
            if len(ok) and (ok.variant == "original").any():
                res = score_steps(ok, n_resamples=options.get("bootstrap", 1000),
                                  seed=options.get("seed", 0))
                section["results"][name] = {"n_read": len(frame), "n_used": len(ok),
                                            "excluded": excluded,
                                            "invalid_rows": int(len(frame) - len(ok)), **res}
        return {"title": f"confeval run steps — {name}", "simulated": False,
                "n_records": len(records), "sections": [section]}


register_suite(StepsSuite())
