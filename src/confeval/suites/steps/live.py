"""The process-judge suite's live path: ask a judge to verify every step of a solution and
record its P(correct) per step, for the original chain and each perturbed variant.

Input data (``--data``): see :mod:`confeval.suites.steps.inputs`.

Each record is one step: ``item_id, step, variant, p_correct, label, error_type,
pred_label, pred_error_type, status, reason, flags`` plus metadata — the input of
``confeval steps score``. A reply the parser cannot read gives unparseable step records
(counted, never dropped); see :mod:`confeval.parse.steps` and its consistency policy.

Answer modes (``--answer``): ``generated`` asks for every step's verdict in one reply and parses
it; ``scored`` asks, for each step, whether it is correct given the problem and the steps before
it, and reads P(correct) as the model's probability of "Yes" against "No" (exact continuation
scoring: no reply to parse, no error type); ``auto`` is ``scored`` when the backend can score a
continuation exactly. Records say which mode produced them (``answer``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from ...backends import Backend, GenerateParams
from ...images import image_url
from ...taxonomy import error_types
from .._multiple_choice import valid_logprobs
from ..base import LiveSuite, answer_mode
from .inputs import load_step_items, verdict_records
from .options import StepsOptions
from .scoring import score_step_rows, step_rows

__all__ = ["LIVE", "StepsLive", "build_step_judge_messages",
           "build_step_question"]

_TYPE_NAMES = [t.name for t in error_types("confprobench").values()]

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
        content: Any = [{"type": "image_url", "image_url": {"url": image_url(str(u))}}
                        for u in images]
        content.append({"type": "text", "text": text})
    else:
        content = text
    return [{"role": "system", "content": system}, {"role": "user", "content": content}]


VERDICTS = ("Yes", "No")
_STEP_SYSTEM = ("You check a student's solution one step at a time. Reply Yes if the step you "
                "are asked about is correct, No if it is not, and nothing else.")


def build_step_question(problem: str, final_answer: str, steps: Sequence[str], k: int, *,
                        images: Sequence[str] = ()) -> list[dict]:
    """Chat messages asking whether step ``k`` (0-based) is correct, given the problem, the
    correct final answer and the steps before it (the scored mode)."""
    before = "\n".join(f"Step {i + 1}: {s}" for i, s in enumerate(steps[:k]))
    text = (f"Problem: {problem}\nCorrect final answer: {final_answer}\n"
            + (f"The student's solution so far:\n{before}\n" if before else "")
            + f"Next step:\nStep {k + 1}: {steps[k]}\n\nIs step {k + 1} correct?")
    content: Any = text
    if images:
        content = [*({"type": "image_url", "image_url": {"url": image_url(str(u))}}
                     for u in images), {"type": "text", "text": text}]
    return [{"role": "system", "content": _STEP_SYSTEM}, {"role": "user", "content": content}]


class StepsLive(LiveSuite):
    """Ask a process judge to verify every step of each chain (original and perturbed) and
    record its P(correct) per step; score CRS, CSS and CCS."""

    name = "steps"
    default_data = "builtin:arith-steps"
    Options = StepsOptions
    record_layout: ClassVar[dict[str, Any]] = {"p_col": "p_correct", "label_col": "label",
                                               "group_cols": ()}

    def needs(self, backend: Backend, options: StepsOptions) -> list[str]:
        return ["score"] if answer_mode(backend, options.answer) == "scored" else ["generate"]

    def load_items(self, data: str, n: int | None, seed: int, *,
                   image_root: str | None = None) -> list[dict]:
        items = load_step_items(data, n, seed, image_root=image_root)
        for item in items:  # the runner keys records by item_id: one per (problem, variant)
            item["problem_id"], item["item_id"] = item["item_id"], item["run_id"]
        return items

    async def run_item(self, item: dict, backend: Backend, options: StepsOptions) -> dict:
        if answer_mode(backend, options.answer) == "scored":
            return await self._scored(item, backend)
        record = await self._generated(item, backend, options)
        return {**record, "answer": "generated"}

    @staticmethod
    async def _scored(item: dict, backend: Backend) -> dict:
        """P(step correct) per step from the probability of "Yes" against "No"."""
        meta = {k: v for k, v in item.items()
                if k not in ("steps", "labels", "error_types", "images", "problem",
                             "final_answer", "run_id", "item_id", "problem_id")
                and not isinstance(v, (list, dict))}
        steps = []
        for k in range(len(item["steps"])):
            messages = build_step_question(item["problem"], item["final_answer"], item["steps"],
                                           k, images=item.get("images") or ())
            yes, no = await backend.score(messages, list(VERDICTS))
            ok = valid_logprobs([yes, no])
            p = float(1.0 / (1.0 + np.exp(no - yes))) if ok else None
            steps.append({**meta, "item_id": item["problem_id"], "variant": item["variant"],
                          "step": k, "p_correct": p, "label": item["labels"][k],
                          "error_type": item["error_types"][k],
                          "pred_label": None if p is None else int(p >= 0.5),
                          "pred_error_type": "", "status": "ok" if ok else "unparseable",
                          "reason": None if ok else "invalid_logprobs", "flags": [],
                          "logprob_yes": yes, "logprob_no": no})
        bad = sum(s["status"] != "ok" for s in steps)
        return {"item_id": item["item_id"], "problem_id": item["problem_id"],
                "variant": item["variant"], "answer": "scored", "raw_output": None,
                "n_steps": len(item["steps"]), "labels": item["labels"],
                "error_types": item["error_types"], "steps": steps,
                "status": "unparseable" if bad else "ok",
                "reason": f"{bad} step(s) without valid log-probabilities" if bad else None}

    async def _generated(self, item: dict, backend: Backend, options: StepsOptions) -> dict:
        messages = build_step_judge_messages(item["problem"], item["final_answer"],
                                             item["steps"], images=item.get("images") or (),
                                             output=options.output)
        params = GenerateParams(max_tokens=options.max_tokens, temperature=0.0)
        gen = (await backend.generate(messages, params))[0]
        steps = verdict_records({**item, "item_id": item["problem_id"]}, gen.text,
                                consistency=options.consistency)
        ok = sum(r["status"] == "ok" for r in steps)
        # also a valid row for `confeval steps parse` (re-parse with another policy)
        return {"item_id": item["item_id"], "problem_id": item["problem_id"],
                "variant": item["variant"], "raw_output": gen.text,
                "n_steps": len(item["steps"]), "labels": item["labels"],
                "error_types": item["error_types"], "steps": steps,
                "status": "ok" if ok == len(steps) else "unparseable",
                "reason": None if ok == len(steps) else f"{len(steps) - ok} step(s) unread"}

    def score(self, records: list[dict], options: StepsOptions, model_name: str) -> dict:
        """The run's section, computed by the path that scores a run folder (``confeval
        steps score RUN_DIR``): the records' step rows -> step_frame -> score_steps."""
        section: dict[str, Any] = {"kind": "steps", "title": "Process judge: step confidence",
                                   "results": {}}
        metrics = {"title": f"confeval run steps — {model_name}", "simulated": False,
                   "n_records": len(records), "sections": [section]}
        try:
            section["results"][model_name] = score_step_rows(step_rows(records), options)
        except ValueError as exc:  # no usable step
            metrics["warnings"] = [str(exc)]
        return metrics


LIVE = StepsLive()
