"""The diagnose suite's live path: show a model a reasoning chain and ask why it is wrong.

Data (``--data``): ``builtin:arith-diagnose`` (:mod:`confeval.tasks.diagnose`), the authors'
MMErroR folder (:func:`~.inputs.load_mmerror_items`), or a JSONL/CSV/Parquet file with
``question``, ``chain`` (or ``error_reason``), ``gold_type`` (or ``label``) and optionally
``image``, ``domain``, ``subdomain``.

Protocols (recorded in every record):

* ``etc`` — the chain has exactly one error: which of the four types (A-D)?
* ``epd`` — two stages as the authors' code: is an error present (P/N)? then which type. In the
  scored answer mode stage 2 is asked even after "no error", so the joint distribution exists:
  p(no error) = P(N), p(type k) = P(P) P(k | P).
* ``epd5`` — one prompt with five options, E = no error.

Answer modes (``--answer``): ``scored`` reads the model's probability of each option letter
(exact continuation scoring in process, top log-probabilities from a server: ``--method``) and
answers with the most probable; ``generated`` lets the model write a reply and parses it
(:func:`confeval.parse.parse_diagnosis`); ``auto`` is ``scored`` when the backend can score a
continuation exactly, else ``generated``. ``--permute`` shuffles which letter stands for which
type per item (seeded; the mapping is stored in the record as ``letters``) to measure letter
bias. An item with an image is never sent text-only: a backend without images records it as
``excluded`` (``needs_image``), counted apart from unparseable replies.

The prompts are ours; the generation parameters sent are recorded with every call.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from ...backends import Backend, GenerateParams
from ...evaluate import score_confidence_records
from ...images import ImageError, check_image, image_url
from ...parse.answers import check_answer, is_strict_key
from ...parse.diagnosis import parse_diagnosis
from ...records import RUN_RECORDS, RecordSet
from ...tasks import load_builtin
from .._multiple_choice import option_distribution
from .._seeds import item_seed
from ..base import Items, LiveSuite, answer_mode, read_method
from .inputs import load_mmerror_items, normalise_type
from .options import PROTOCOL_TYPES, DiagnoseOptions
from .scoring import score_diagnosis_records

__all__ = ["ABLATION_CONDITIONS", "LIVE", "DiagnoseLive", "DiagnoseOptions",
           "answer_prompt", "build_prompt"]

_DEFINITIONS = {
    "vpe": "Visual perception error: something in the image (a number, label, object, count "
           "or position) is misread.",
    "re": "Reasoning error: the facts are read correctly, but the logic, an operation or the "
          "arithmetic is wrong.",
    "qce": "Question comprehension error: the question's goal, a quantity it gives, or one of "
           "its conditions is misunderstood or ignored.",
    "kde": "Knowledge deployment error: a wrong fact, formula, rule or conversion is used.",
    "no_error": "No error: every step is correct.",
}
_SYSTEM = "You check worked solutions and classify the mistakes in them."


def _letters(types: tuple[str, ...], item_id: str, permute: bool, seed: int) -> dict[str, str]:
    if not permute:
        return dict(zip("ABCDE", types))
    order = np.random.default_rng(item_seed(seed, item_id)).permutation(len(types))
    return dict(zip("ABCDE", (types[i] for i in order)))


def build_prompt(item: dict, stage: str, letters: dict[str, str]) -> list[dict]:
    """Chat messages for one stage: ``etc`` / ``type`` (an error is known to be present),
    ``epd5`` (maybe no error) or ``presence`` (P/N); the image first when there is one."""
    head = {"etc": "The solution below contains exactly one error.",
            "type": "An error has been found in the solution below.",
            "epd5": "The solution below may contain an error, or none.",
            "presence": "The solution below may contain an error, or none."}[stage]
    body = f"{head}\n\nProblem: {item['question']}\n\nSolution:\n{item['chain']}\n\n"
    if stage == "presence":
        body += ("Is there an error in the solution? Reply P if an error is present, N if "
                 "there is none, and nothing else.")
    else:
        menu = "\n".join(f"{k}. {_DEFINITIONS[t]}" for k, t in letters.items())
        ask = "Which kind of error is it?" if stage != "epd5" else "Which applies?"
        body += (f"{ask}\n{menu}\n\nReply with one letter ({', '.join(letters)}) and nothing "
                 "else.")
    content: Any = body
    if item.get("image"):
        content = [{"type": "image_url", "image_url": {"url": image_url(str(item["image"]))}},
                   {"type": "text", "text": body}]
    return [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": content}]


ABLATION_CONDITIONS = ("question", "chain", "chain_step", "chain_type")
"""The paper's ablation: the question alone; with the erroneous chain; with the chain and the
error's step; with the chain and the error's type."""


def answer_prompt(item: dict, condition: str) -> list[dict] | None:
    """Messages asking for the question's answer under ``condition`` (``None`` when the
    condition does not apply: no error step or type on an error-free chain)."""
    erroneous = item.get("gold_type") not in (None, "no_error")
    if condition in ("chain_step", "chain_type") and not erroneous:
        return None
    if condition == "chain_step" and not isinstance(item.get("error_step"), int):
        return None
    body = f"Problem: {item['question']}\n\n"
    if condition != "question":
        body += f"A proposed solution, which contains an error:\n{item['chain']}\n\n"
    if condition == "chain_step":
        body += f"The error is in step {item['error_step'] + 1}.\n\n"
    if condition == "chain_type":
        body += f"The error is of this kind: {_DEFINITIONS[item['gold_type']]}\n\n"
    body += "Solve the problem. Reply with the final answer only."
    content: Any = body
    if item.get("image"):
        content = [{"type": "image_url", "image_url": {"url": image_url(str(item["image"]))}},
                   {"type": "text", "text": body}]
    return [{"role": "system", "content": "You solve problems and give the final answer."},
            {"role": "user", "content": content}]


_JUDGE_PROMPT = ("Question: {question}\nReference answer: {key}\nAnswer to grade: {reply}\n\n"
                 "Does the answer to grade give the same final answer as the reference? Reply "
                 "with one word: correct or incorrect.")


async def judge_answer(judge: Backend, question: str, key: Any, reply: str) -> bool | None:
    """A judge model's verdict on a free-text answer: True, False, or None when its reply is
    not exactly "correct" or "incorrect" (a reply starting with "correct" is not enough:
    "Correctness: incorrect" must not count as correct)."""
    messages = [{"role": "user", "content": _JUDGE_PROMPT.format(question=question, key=key,
                                                                 reply=reply[:2000])}]
    text = (await judge.generate(messages, GenerateParams(max_tokens=8, temperature=0.0))
            )[0].text
    word = re.sub(r"[^a-z]", "", text.strip().lower())
    return {"correct": True, "incorrect": False}.get(word)


def _flat_item(row: dict, root: Path) -> tuple[dict | None, str | None]:
    """One item of a flat diagnose file, or the reason it is left out (images checked by
    :func:`~confeval.images.check_image`; an item is never sent without its image)."""
    gold = normalise_type(row.get("gold_type", row.get("label")))
    chain = row.get("chain", row.get("error_reason"))
    if gold is None:
        return None, "unknown_label"
    if not isinstance(chain, str) or not chain.strip():
        return None, "missing_chain"
    if not str(row.get("question") or "").strip():
        return None, "missing_question"
    image = row.get("image")
    if image is not None and not (isinstance(image, float) and np.isnan(image)):
        try:
            image = check_image(image, root)
        except ImageError as exc:
            return None, exc.reason
    else:
        image = None
    item_id = row.get("item_id", row.get("question_id", f"row-{row['_row']}"))
    return {"item_id": str(item_id), "question": str(row["question"]), "chain": chain,
            "gold_type": gold, "image": image, "domain": row.get("domain"),
            "subdomain": row.get("subdomain"), "correct_answer": row.get("correct_answer")}, None


class DiagnoseLive(LiveSuite):
    """MMErroR live: ETC, two-stage EPD or single-prompt EPD (module docstring)."""

    name = "diagnose"
    record_layout: ClassVar[dict[str, Any]] = {
        "gold_col": "gold_type", "pred_col": "pred_type", "reply_col": None,
        "domain_col": "domain", "subdomain_col": "subdomain", "id_col": "item_id"}
    default_data = "builtin:arith-diagnose"
    Options = DiagnoseOptions

    def __init__(self) -> None:
        self._judges: dict[str, Backend] = {}

    def _judge(self, spec: str) -> Backend:
        """The answer judge (its answers cached like the run's)."""
        if spec not in self._judges:
            from ...backends import CachedBackend, ResponseCache, get_backend

            self._judges[spec] = CachedBackend(get_backend(spec), ResponseCache())
        return self._judges[spec]

    def needs(self, backend: Backend, options: DiagnoseOptions) -> list[str]:
        if options.answer_judge and options.ablation:
            judge = self._judge(options.answer_judge)
            if judge.identity() == backend.identity() and not options.self_judge:
                raise ValueError("--answer-judge is the model under test; a model grading its "
                                 "own answers is biased (pass --self-judge to allow it)")
        if answer_mode(backend, options.answer) == "scored":
            return ["score"] if read_method(backend, options.method) == "score" \
                else ["generate", "logprobs"]
        return ["generate"]

    def load_items(self, data: str, n: int | None, seed: int, *,
                   image_root: str | None = None) -> list[dict]:
        """Items from ``builtin:NAME``, the authors' folder, or a flat record file whose
        ``image`` paths resolve inside ``image_root`` (default: the file's folder)."""
        if data.startswith("builtin:"):
            return Items(load_builtin(data.split(":", 1)[1], n or 200, seed))
        path = Path(data)
        if path.is_dir():
            return load_mmerror_items(path, n, image_root=image_root)
        rs = RecordSet.read(path)
        root = Path(image_root) if image_root else path.parent
        items, excluded = Items(), Counter()
        for row in rs.frame.to_dict(orient="records"):
            item, reason = _flat_item(row, root)
            if reason:
                excluded[reason] += 1
            else:
                items.append(item)
        items.excluded = dict(excluded)
        return items[:n] if n else items

    @staticmethod
    def _base_record(item: dict, options: DiagnoseOptions) -> dict:
        record = {k: v for k, v in item.items() if k not in ("image", "steps")}
        record.update(protocol=options.protocol, has_image=bool(item.get("image")))
        return record

    def excluded_record(self, item: dict, options: DiagnoseOptions, reason: str) -> dict:
        return {**self._base_record(item, options), "status": "excluded", "reason": reason,
                "pred_type": None}

    async def run_item(self, item: dict, backend: Backend, options: DiagnoseOptions) -> dict:
        record = self._base_record(item, options)
        if options.protocol == "etc" and item["gold_type"] == "no_error":
            record.update(status="excluded", reason="error_free_chain_in_etc", pred_type=None)
            return record
        mode = answer_mode(backend, options.answer)
        types = PROTOCOL_TYPES["epd5" if options.protocol == "epd5" else "etc"]
        letters = _letters(types, str(item["item_id"]), options.permute, options.seed)
        record.update(answer=mode, letters=letters)
        if mode == "scored":
            record.update(await self._scored(item, backend, options, letters))
        else:
            record.update(await self._generated(item, backend, options, letters))
        pred = record.get("pred_type")
        record["correct"] = None if pred is None else int(pred == item["gold_type"])
        if options.ablation and item.get("correct_answer") not in (None, ""):
            judge = self._judge(options.answer_judge) if options.answer_judge else None
            record["answers"] = await self._answers(item, backend, judge)
        return record

    @staticmethod
    async def _answers(item: dict, backend: Backend, judge: Backend | None) -> dict:
        """The question answered under each input condition, checked strictly; free-text keys
        go to the judge when one was asked for."""
        params = GenerateParams(max_tokens=48, temperature=0.0)
        key = item["correct_answer"]
        out = {}
        for condition in ABLATION_CONDITIONS:
            messages = answer_prompt(item, condition)
            if messages is None:
                continue
            reply = (await backend.generate(messages, params))[0].text
            got = check_answer(reply, key)
            entry = {"reply": reply, "answer": got.answer,
                     "correct": None if got.correct is None else int(got.correct),
                     "failure": got.failure, "checked_by": "strict"}
            if judge is not None and not is_strict_key(key):
                verdict = await judge_answer(judge, item["question"], key, reply)
                entry.update(correct=None if verdict is None else int(verdict),
                             checked_by=judge.describe(),
                             failure=None if verdict is not None else "judge_unreadable")
            out[condition] = entry
        return out

    async def _distribution(self, item, backend, options, stage, letters) -> dict:
        dist = await option_distribution(backend, build_prompt(item, stage, letters),
                                         list(letters), method=options.method,
                                         top_k=options.top_k)
        if dist["logprobs"] is None:
            return {"probs": None, "reason": dist["reason"], "method": dist["method"]}
        return {"probs": {letters[k]: math.exp(v) for k, v in dist["logprobs"].items()},
                "method": dist["method"], "mass_outside": dist["mass_outside"]}

    async def _scored(self, item, backend, options, letters) -> dict:
        if options.protocol == "epd":
            first = await self._distribution(item, backend, options, "presence",
                                             {"P": "present", "N": "absent"})
            second = await self._distribution(item, backend, options, "type", letters)
            if first["probs"] is None or second["probs"] is None:
                return {"status": "unparseable", "pred_type": None,
                        "reason": first.get("reason") or second.get("reason")}
            present = first["probs"]["present"]
            probs = {t: present * p for t, p in second["probs"].items()}
            probs["no_error"] = first["probs"]["absent"]
            out = {"p_error_present": present}
        else:
            stage = "epd5" if options.protocol == "epd5" else "etc"
            got = await self._distribution(item, backend, options, stage, letters)
            if got["probs"] is None:
                return {"status": "unparseable", "pred_type": None, "reason": got["reason"]}
            probs, out = got["probs"], {"mass_outside": got.get("mass_outside")}
            if options.protocol == "epd5":
                out["p_error_present"] = 1.0 - probs["no_error"]
        pred = max(sorted(probs), key=lambda t: probs[t])
        return {**out, "status": "ok", "reason": None, "pred_type": pred, "probs": probs,
                "confidence": probs[pred]}

    async def _generated(self, item, backend, options, letters) -> dict:
        params = GenerateParams(max_tokens=options.max_tokens, temperature=0.0)

        async def ask(stage, table, protocol):
            gen = (await backend.generate(build_prompt(item, stage, table), params))[0]
            return gen.text, parse_diagnosis(gen.text, protocol, table)

        out: dict[str, Any] = {}
        if options.protocol == "epd":
            text, got = await ask("presence", {"P": "present", "N": "absent"}, "presence")
            out.update(presence_reply=text, pred_presence=got.value)
            if got.value is None:
                return {**out, "status": "unparseable", "pred_type": None,
                        "reason": got.failure, "parse_failure": got.failure}
            if got.value == "absent":
                return {**out, "status": "ok", "reason": None, "pred_type": "no_error",
                        "parse_rule": got.rule}
        stage = {"etc": "etc", "epd": "type", "epd5": "epd5"}[options.protocol]
        text, got = await ask(stage, letters, "epd5" if options.protocol == "epd5" else "etc")
        out.update(reply=text, parse_rule=got.rule, parse_failure=got.failure,
                   parse_flags=list(got.flags))
        if got.value is None:
            return {**out, "status": "unparseable", "pred_type": None, "reason": got.failure}
        return {**out, "status": "ok", "reason": None, "pred_type": got.value}

    def score(self, records: list[dict], options: DiagnoseOptions, model_name: str) -> dict:
        """The run's sections, each computed by the path that scores a record file: the
        diagnosis (``confeval diagnose score RUN_DIR``, its conformal sets over the types shown
        as a sets section of their own) and the confidence of the diagnosis (``confeval score
        RUN_DIR -c confidence -y correct``)."""
        diagnosis: dict[str, Any] = {"kind": "diagnose", "title": "Error diagnosis (MMErroR)",
                                     "results": {}}
        sections = [diagnosis]
        metrics = {"title": f"confeval run diagnose — {model_name}", "simulated": False,
                   "n_records": len(records), "sections": sections}
        notes = []
        try:
            result = score_diagnosis_records(RecordSet.from_records(records, RUN_RECORDS),
                                             options)
            diagnosis["results"][model_name] = result
        except ValueError as exc:
            notes.append(str(exc))
            result = {}
        try:
            if not any(r.get("confidence") is not None for r in records):
                # generated replies: no distribution over the types was read, so there is no
                # confidence to score (not a problem to warn about; the section is left out)
                raise LookupError
            with np.errstate(all="ignore"):
                confidence = score_confidence_records(
                    RecordSet.from_records(records, RUN_RECORDS), "confidence", "correct",
                    n_resamples=options.bootstrap, seed=options.seed)
            sections.append({"kind": "confidence", "title": "Confidence of the diagnosis",
                             "description": "Confidence = the model's probability of the type "
                                            "it chose; correct = it is the gold type.",
                             "name_header": "model", "results": {model_name: confidence}})
        except LookupError:
            pass
        except (ValueError, KeyError) as exc:   # a confidence that cannot be scored: say why
            notes.append(str(exc))
        if result.get("conformal_sets"):
            sections.append({
                "kind": "sets", "title": "Conformal sets over the error types",
                "description": "Split conformal (50/50) on the diagnosis probabilities; a set "
                               "holds every type the model cannot rule out at alpha "
                               f"{options.alpha:g}.",
                "name_header": "calibration",   # marginal, Mondrian by type / by domain
                "results": {f"{model_name} ({name})": value
                            for name, value in result["conformal_sets"].items()}})
        if notes:
            metrics["warnings"] = notes
        return metrics


LIVE = DiagnoseLive()
