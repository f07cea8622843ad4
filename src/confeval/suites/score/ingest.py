"""The ``score`` layout of other tools' files: one row per sample (and epoch) with a
``confidence`` and a ``correct``.

From one lm-eval multiple-choice sample (choices A, B, ... in order): ``doc_id``, ``task``,
``filter``, ``confidence`` (the softmax over the choices of the log-likelihoods, normalised as
``--normalise`` says, at the chosen choice), ``correct`` (the chosen choice is the gold one:
lm-eval's ``acc``, ``acc_norm`` or ``acc_bytes``) and ``n_choices``.

From an lm-eval sample of a task without options (``generate_until``, ``loglikelihood``):
``doc_id``, ``filter`` (the filter the line was scored under: lm-eval logs a document once per
filter, and a file with several is read one filter at a time), ``output_type``, every
per-sample metric the line lists, ``correct`` (the first of ``exact_match``, ``acc``), ``reply``
and ``target`` (``generate_until``), ``task_confidence`` (the task's own per-sample metric
whose name holds ``confidence``, when it logs exactly one; ``task_confidence_of`` names it)
and ``stated_confidence`` (stated in
the reply, "Confidence: 80%"), ``loglikelihood``, ``p_target`` (its exp) and ``is_greedy``
(``loglikelihood``). The confidence is the task's own where it logs one, else a stated one;
``-c`` names another column (``p_target``).

From one Inspect sample under one scorer (one row per sample and epoch, ``doc_id``, ``epoch``,
``scorer``, ``correct`` the scorer's value as Inspect turns it into a number, ``target``):
multiple choice — ``confidence`` (the option letters' probabilities at the answer position,
renormalised over the letters, at the scorer's letter, or the most likely one where it named
none: ``letter_imputed``), ``letter``, ``n_missing`` and ``gold_in_top_logprobs`` (a letter
missing from the top alternatives gets ln 1e-5, counted in ``n_missing``); generation —
``answer``, ``reply``, ``p_answer``, ``p_answer_norm``, ``p_answer_first`` (the answer
tokens' probability, length-normalised, first token), ``stated_confidence``; either —
``scorer_confidence`` (the scorer's own) and ``epoch_agreement``. The confidence of a
generation log is the first of ``scorer_confidence``, ``p_answer``, ``stated_confidence``
that at least half its usable rows hold (none does: the one most hold), named in the
results' ``notes.confidence``; ``-c`` names another.

From one OpenAI-compatible response and the data row it answers (``item_id``, ``custom_id``):
``confidence`` (the letters' probabilities renormalised, at the most likely letter),
``letter``, ``answer`` (the data's gold letter) and ``correct``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...ingest.layout import (
    CONFIDENCE_SOURCES,
    CORRECTNESS_METRICS,
    Layout,
    letters_at_answer,
    openai_base,
    softmax_at,
    softmax_top,
)

__all__ = ["LAYOUT"]


def _generation_rows(sample) -> list[dict]:
    """One lm-eval sample of a task without options: its metrics as columns, ``correct`` the
    first of :data:`CORRECTNESS_METRICS` it has; no confidence."""
    from ...parse import parse_stated_confidence

    row: dict[str, Any] = {"doc_id": sample.doc_id, "task": sample.task,
                           "filter": sample.filter, "output_type": sample.output_type,
                           **sample.metrics}
    correct = next((sample.metrics[m] for m in CORRECTNESS_METRICS if m in sample.metrics),
                   None)
    if correct is not None:
        row["correct"] = correct
    own = [m for m in sample.metrics if "confidence" in m.lower()]
    if len(own) == 1:
        row["task_confidence"] = sample.metrics[own[0]]
        row["task_confidence_of"] = own[0]
    if sample.reply is not None:
        row["reply"] = sample.reply
        stated = parse_stated_confidence(sample.raw_reply or sample.reply)
        if stated.value is not None:
            row["stated_confidence"] = stated.value
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
    return [{"doc_id": sample.doc_id, "task": sample.task, "filter": sample.filter,
             "confidence": confidence, "correct": int(top == sample.gold),
             "n_choices": len(sample.choices)}]


def inspect_letters_missing(sample) -> str | None:
    """Why a multiple-choice Inspect sample has no letters' log-probabilities (None: it has
    them)."""
    if sample.letter_logprobs is not None:
        return None
    return ("inspect_no_logprobs" if sample.extra.get("logprobs") == "none"
            else "inspect_no_letter_in_top_logprobs")


def inspect_rows(sample, normalise: str) -> list[dict] | str:
    row: dict[str, Any] = {"doc_id": sample.doc_id, "epoch": sample.epoch,
                           "scorer": sample.scorer, "correct": sample.correct,
                           "target": sample.target}
    if sample.letters:
        missing = inspect_letters_missing(sample)
        if missing:
            return missing
        letters = sample.letters
        scores = np.array([sample.letter_logprobs[L] for L in letters])
        row.update({"confidence": softmax_at(scores, letters.index(sample.letter)),
                    "letter": sample.letter, "letter_imputed": int(sample.letter_imputed),
                    "n_missing": sample.n_missing,
                    "gold_in_top_logprobs": int(sample.target not in sample.missing)})
    else:
        row.update({"answer": sample.answer, "reply": sample.reply})
    row.update(sample.confidences)
    return [row]


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
                what="score records", generation=True,
                averaged=("correct", "confidence", *CONFIDENCE_SOURCES),
                confidences=("scorer_confidence", "task_confidence", "p_answer",
                             "stated_confidence"),
                confidence_of={
                    "inspect": "the probability of the scorer's letter (where it named none, "
                               "the most likely letter) among the options' letters",
                    "lm-eval": "the softmax probability of lm-eval's chosen choice over the "
                               "choices' log-likelihoods",
                    "openai": "the probability of the most likely option letter among the "
                              "letters"})
