"""The ``score`` layout of other tools' files: one row per sample (and epoch) with a
``confidence`` and a ``correct``.

From one lm-eval multiple-choice sample (choices A, B, ... in order): ``doc_id``, ``task``,
``confidence`` (the softmax over the choices of the log-likelihoods, normalised as
``--normalise`` says, at the chosen choice), ``correct`` (the chosen choice is the gold one:
lm-eval's ``acc``, ``acc_norm`` or ``acc_bytes``) and ``n_choices``.

From an lm-eval sample of a task without options (``generate_until``, ``loglikelihood``):
``doc_id``, ``output_type``, every per-sample metric the line lists (a task's own among them,
e.g. a stated confidence), ``correct`` (the first of ``exact_match``, ``acc``), ``reply`` and
``target`` (``generate_until``), ``loglikelihood``, ``p_target`` (its exp) and ``is_greedy``
(``loglikelihood``). lm-eval logs no confidence for them: ``-c`` names the column holding one
(``p_target``, or the task's own).

From one Inspect sample (one row per sample and epoch, ``doc_id`` and ``epoch``):
``confidence`` (the option letters' probabilities at the answer position, renormalised over
the letters, at the most likely letter), ``correct`` (the scorer's value as Inspect turns it
into a number), ``letter``, ``target``, ``n_missing`` and ``gold_in_top_logprobs`` (a letter
missing from the top alternatives gets ln 1e-5, counted in ``n_missing``).

From one OpenAI-compatible response and the data row it answers (``item_id``, ``custom_id``):
``confidence`` (the letters' probabilities renormalised, at the most likely letter),
``letter``, ``answer`` (the data's gold letter) and ``correct``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...ingest.layout import (
    CORRECTNESS_METRICS,
    Layout,
    letters_at_answer,
    openai_base,
    softmax_top,
)

__all__ = ["LAYOUT"]


def _generation_rows(sample) -> list[dict]:
    """One lm-eval sample of a task without options: its metrics as columns, ``correct`` the
    first of :data:`CORRECTNESS_METRICS` it has; no confidence."""
    row: dict[str, Any] = {"doc_id": sample.doc_id, "task": sample.task,
                           "output_type": sample.output_type, **sample.metrics}
    correct = next((sample.metrics[m] for m in CORRECTNESS_METRICS if m in sample.metrics),
                   None)
    if correct is not None:
        row["correct"] = correct
    if sample.reply is not None:
        row["reply"] = sample.reply
    if sample.target is not None:
        row["target"] = sample.target
    if sample.loglikelihood is not None:
        row["loglikelihood"] = sample.loglikelihood
        row["p_target"] = float(np.exp(sample.loglikelihood))
        row["is_greedy"] = sample.is_greedy
    return [row]


def lm_eval_rows(sample, normalise: str) -> list[dict]:
    if not hasattr(sample, "choices"):
        return _generation_rows(sample)
    top, confidence = softmax_top(sample.scores(normalise))
    return [{"doc_id": sample.doc_id, "task": sample.task, "confidence": confidence,
             "correct": int(top == sample.gold), "n_choices": len(sample.choices)}]


def inspect_rows(sample, normalise: str) -> list[dict]:
    letters = sample.letters
    top, confidence = softmax_top(np.array([sample.letter_logprobs[L] for L in letters]))
    return [{"doc_id": sample.doc_id, "epoch": sample.epoch, "confidence": confidence,
             "correct": sample.correct, "letter": letters[top], "target": sample.target,
             "n_missing": sample.n_missing,
             "gold_in_top_logprobs": int(sample.target not in sample.missing)}]


def openai_rows(answered, normalise: str) -> list[dict] | str:
    read = letters_at_answer(answered)
    if isinstance(read, str):
        return read
    letters, logprobs, n_missing, gold_listed = read
    top, confidence = softmax_top(logprobs)
    gold = answered.item["answer"]
    return [{**openai_base(answered), "confidence": confidence,
             "correct": int(letters[top] == gold), "letter": letters[top], "answer": gold,
             "n_missing": n_missing, "gold_in_top_logprobs": int(gold_listed)}]


LAYOUT = Layout({"lm-eval": lm_eval_rows, "inspect": inspect_rows, "openai": openai_rows},
                what="score records", generation=True)
