"""The ``measures`` layout of other tools' files: one row per (question, option).

From one lm-eval multiple-choice sample (choices A, B, ... in order): one row per choice with
``question_id`` (the document), ``option``, ``task``, ``correct`` (1 for the gold choice),
``sl`` (the log-likelihood) and ``sl_norm`` (divided by the choice's length in characters, as
lm-eval's ``acc_norm``, or in bytes under ``--normalise bytes``: lm-eval logs no token
count).
"""

from __future__ import annotations

from ...ingest.layout import Layout, option_letters

__all__ = ["LAYOUT"]


def lm_eval_rows(sample, normalise: str) -> list[dict]:
    norm = sample.scores("bytes" if normalise == "bytes" else "chars")
    return [{"question_id": sample.doc_id, "option": letter, "task": sample.task,
             "correct": int(i == sample.gold), "sl": float(sample.lls[i]),
             "sl_norm": float(norm[i])}
            for i, letter in enumerate(option_letters(len(sample.choices)))]


LAYOUT = Layout({"lm-eval": lm_eval_rows}, key="question_id", what="measures records",
                aligns=False, verdicts=False)
