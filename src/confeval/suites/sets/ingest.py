"""The ``sets`` layout of other tools' files: one row per question with the gold letter
(``answer``) and one ``logit_<letter>`` column per option.

From one lm-eval multiple-choice sample (choices A, B, ... in order): ``doc_id``, ``task``,
``answer`` and ``logit_<letter>`` (the log-likelihoods normalised as ``--normalise`` says,
read as logits: the softmax over the choices).

From one Inspect sample (one row per sample and epoch, ``doc_id`` and ``epoch``): ``answer``
(the target letter), ``logit_<letter>`` (the letters' log-probabilities at the answer
position; a letter missing from the top alternatives gets ln 1e-5, counted in
``n_missing``) and ``gold_in_top_logprobs``.

From one OpenAI-compatible response and the data row it answers (``item_id``, ``custom_id``):
``answer`` and ``logit_<letter>`` (the letters' log-probabilities), ``n_missing`` and
``gold_in_top_logprobs``.
"""

from __future__ import annotations

from typing import Any

from ...ingest.layout import Layout, letters_at_answer, openai_base, option_letters

__all__ = ["LAYOUT"]


def lm_eval_rows(sample, normalise: str) -> list[dict]:
    letters = option_letters(len(sample.choices))
    row: dict[str, Any] = {"doc_id": sample.doc_id, "task": sample.task,
                           "answer": letters[sample.gold]}
    row.update({f"logit_{letter}": float(v)
                for letter, v in zip(letters, sample.scores(normalise))})
    return [row]


def inspect_rows(sample, normalise: str) -> list[dict] | str:
    if not sample.letters:
        return "inspect_no_choices"
    if sample.letter_logprobs is None:
        return ("inspect_no_logprobs" if sample.extra.get("logprobs") == "none"
                else "inspect_no_letter_in_top_logprobs")
    row: dict[str, Any] = {"doc_id": sample.doc_id, "epoch": sample.epoch,
                           "answer": sample.target, "n_missing": sample.n_missing,
                           "gold_in_top_logprobs": int(sample.target not in sample.missing)}
    row.update({f"logit_{L}": float(sample.letter_logprobs[L]) for L in sample.letters})
    return [row]


def openai_rows(answered, normalise: str) -> list[dict] | str:
    read = letters_at_answer(answered)
    if isinstance(read, str):
        return read
    letters, logprobs, n_missing, gold_listed = read
    row = {**openai_base(answered), "answer": answered.item["answer"], "n_missing": n_missing,
           "gold_in_top_logprobs": int(gold_listed)}
    row.update({f"logit_{L}": float(v) for L, v in zip(letters, logprobs)})
    return [row]


LAYOUT = Layout({"lm-eval": lm_eval_rows, "inspect": inspect_rows, "openai": openai_rows},
                what="sets records", verdicts=False)
