"""What the judge suites (``agreement``, ``intervals``) share: the layout of a judge's
OpenAI-compatible responses, and the decision ``confeval guarantee`` certifies for a judge —
accept its score when it is within ``--tolerance`` of the human's, the confidence the judge's
own probability of a score that close to the one it gave.

The ``intervals`` layout, from one OpenAI-compatible response and the data row it answers:
the data row's columns (``gt_score`` among them), ``custom_id``, ``parsed_score``,
``rating_stage``, ``rating_position``, ``n_missing`` and ``s2_lp<rating>`` — the judge's
log-probability of every rating at its rating position
(:func:`confeval.parse.score_tokens.extract_score`, ``--min-score`` to ``--max-score``), as
``confeval intervals run --answer generated`` records them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from ..ingest.layout import Layout
from .base import Decided, Decision
from .options import Options, option

if TYPE_CHECKING:
    from ..records import RecordSet

__all__ = ["LAYOUT", "PAIRWISE_LETTERS", "JudgeChoice", "JudgeScores", "build_judge_messages",
           "build_pairwise_messages", "judge_confidence", "judge_decision", "load_judge_items",
           "load_pairwise_items"]


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


PAIRWISE_LETTERS = ("A", "B")
"""The letters of the two slots of a pairwise prompt, first slot first."""

_PAIRWISE = (
    "You compare two answers to the same question. Read the question and both answers, then "
    "say which answer is better: the one that is correct, or closer to correct. Reply with "
    "the letter of the better answer only: A or B.")


def build_pairwise_messages(question: str, first: str, second: str) -> list[dict]:
    """Chat messages asking which of two answers is better (``first`` in slot A, ``second``
    in slot B), to be answered with one letter."""
    user = f"Question: {question}\nAnswer A: {first}\nAnswer B: {second}\nBetter answer:"
    return [{"role": "system", "content": _PAIRWISE}, {"role": "user", "content": user}]


def load_judge_items(data: str, n: int | None = None, seed: int = 0) -> list[dict]:
    """Items to grade from ``builtin:arith-judge`` or a file with ``question``, ``response``
    (the answer to grade), ``gt_score`` (the human grade) and optionally ``item_id``,
    ``reference`` and any other columns (carried into the records)."""
    from pathlib import Path

    from ..records import RecordsError, RecordSet
    from ..tasks import load_builtin

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


def load_pairwise_items(data: str, n: int | None = None, seed: int = 0, *,
                        a_col: str = "answer_a", b_col: str = "answer_b",
                        question_col: str = "question") -> list[dict]:
    """Pairs of answers to compare from ``builtin:arith-pairwise`` or a file with a question
    column and the two answers' columns (names configurable), optionally ``item_id`` and a
    human pick (``human``: a, b or tie); the rows' other columns are carried into the
    records."""
    from pathlib import Path

    from ..records import RecordsError, RecordSet
    from ..tasks import load_builtin

    if data.startswith("builtin:"):
        return load_builtin(data.split(":", 1)[1], n or 200, seed)
    rs = RecordSet.read(Path(data))
    missing = [c for c in (question_col, a_col, b_col) if c not in rs.frame.columns]
    if missing:
        raise RecordsError(f"{data}: column(s) {missing} not found; pairwise data needs a "
                           f"question and two answers ({question_col}, {a_col}, {b_col})")
    items = []
    for row in rs.frame.to_dict(orient="records"):
        item = {k: v for k, v in row.items() if k != "_row"}
        item.update(question=str(row[question_col]), answer_a=str(row[a_col]),
                    answer_b=str(row[b_col]))
        item["item_id"] = str(row.get("item_id", f"row-{row['_row']}"))
        items.append(item)
    return items[:n] if n else items


def openai_rows(answered, normalise: str) -> list[dict] | str:
    from ..parse.score_tokens import extract_score

    found = extract_score(answered.response.tokens, answered.levels)
    if not found.ok:
        return ("openai_reply_too_long" if "reply_too_long" in found.flags
                else "openai_no_rating_in_reply")
    floored = next((int(f.split(":")[1]) for f in found.flags if f.startswith("floored:")), 0)
    row = {**answered.item, "custom_id": answered.response.custom_id,
           "parsed_score": found.score, "rating_stage": found.stage,
           "rating_position": found.position, "n_missing": floored}
    row.update({f"s2_lp{level}": float(v) for level, v in zip(answered.levels,
                                                              found.logprobs)})
    return [row]


LAYOUT = Layout({"openai": openai_rows}, key="item_id", what="judge ratings",
                data_rows="plain")
"""A judge's ratings read from another tool's file (the ``intervals`` layout)."""


@dataclasses.dataclass
class JudgeScores:
    """A judge's usable scores: the records (unusable rows excluded), the judge's and the
    reference scores and the judge's probability of each rating (renormalised over the
    scale; None without probability columns) of the usable rows, and the scale."""

    records: RecordSet
    pred: np.ndarray
    truth: np.ndarray
    probs: np.ndarray | None
    scale: np.ndarray


def judge_confidence(probs: np.ndarray, pred: np.ndarray, scale: np.ndarray,
                     tolerance: float) -> np.ndarray:
    """The judge's own probability that the right score lies within ``tolerance`` of the score
    it gave: the mass of its (renormalised) score distribution on ``|s - pred| <= tolerance``.
    The confidence that matches the decision: a judge sure of 4 but torn between 3, 4 and 5
    is confident at tolerance 1 and not at 0."""
    from ..judge import score_confidence

    return score_confidence(probs, pred, scale, tolerance)


@dataclasses.dataclass(frozen=True)
class JudgeChoice(Options):
    """The judge decision's own choice: how far from the human a score may be and count as
    right."""

    tolerance: float = option(1.0, "Judges: a score within this distance of the human's "
                              "counts as right (0: exact).", stages=("score",), minimum=0)


ReadJudge = Callable[["RecordSet", Any, bool], JudgeScores]
"""``read(rs, options, with_truth)``: a judge suite's scores of one input, read as its own
scoring reads them (``with_truth=False``: new items, no human score, any number of rows)."""


def judge_decision(read: ReadJudge) -> Decision:
    """The judge decision of a suite whose records ``read`` reads."""
    def scores(rs, options, with_truth) -> JudgeScores:
        judge = read(rs, options, with_truth)
        if judge.probs is None:
            raise ValueError(f"{rs.source}: a judge's confidence needs its score "
                             "probabilities: --logprob-cols or --prob-cols")
        return judge

    def calibrate(rs, options, choice: JudgeChoice) -> Decided:
        judge = scores(rs, options, True)
        conf = judge_confidence(judge.probs, judge.pred, judge.scale, choice.tolerance)
        correct = (np.abs(judge.pred - judge.truth) <= choice.tolerance).astype(np.float64)
        return Decided(judge.records, conf, correct)

    def confidence(rs, options, choice: JudgeChoice) -> np.ndarray:
        judge = scores(rs, options, False)
        conf = np.full(len(judge.records.frame), np.nan)
        conf[judge.records.mask] = judge_confidence(judge.probs, judge.pred, judge.scale,
                                                    choice.tolerance)
        return conf

    def words(options, choice: JudgeChoice) -> dict[str, str]:
        return {"act": "Accept the judge's score", "item": "accepted scores",
                "error": f"more than {choice.tolerance:g} from the human's"}

    def applies_to(options, choice: JudgeChoice) -> dict:
        return {"confidence": "the judge's probability of a score within "
                f"{choice.tolerance:g} of its own", "tolerance": choice.tolerance}

    return Decision(calibrate, confidence, words, applies_to)
