"""Multiple-choice data rows -> askable items: the row layouts every multiple-choice reader
shares (the ``sets`` and ``measures`` suites' datasets, and the data an OpenAI batch answered,
:mod:`confeval.ingest.openai`).

Layouts: generic ``question``, ``answer`` (the gold letter) and either ``options`` (a list) or
one column per option letter ``A``, ``B``, ... (empty trailing cells mean fewer options);
CommonsenseQA's Hugging Face layout (``choices: {label, text}``, ``answerKey``) and its original
one (``question: {stem, choices: [{label, text}]}``). ``item_id`` (or ``id``) names an item, its
row number otherwise. A row that cannot be asked gives its reason instead of an item.
"""

from __future__ import annotations

import math
import string
from typing import Any

from ..records import RecordsError, as_list

__all__ = ["LETTERS", "check_mc_layout", "letter_columns", "letters_for", "mc_item"]

LETTERS = string.ascii_uppercase
_CONSUMED = {"_row", "id", "item_id", "question", "answer", "answerKey", "choices", "options"}


def letters_for(n_options: int) -> list[str]:
    """The option letters A, B, ... of ``n_options`` options (1 to 26)."""
    if not 1 <= n_options <= 26:
        raise ValueError("between 1 and 26 options are supported")
    return list(string.ascii_uppercase[:n_options])


def letter_columns(columns) -> list[str]:
    """The option-letter columns ``A``, ``B``, ... among ``columns``, in letter order."""
    present = set(columns)
    return [c for c in LETTERS if c in present]


def check_mc_layout(data: str, frame, letter_cols: list[str]) -> None:
    """A :class:`RecordsError` naming ``data`` unless its columns are a multiple-choice layout."""
    columns = set(frame.columns)
    if "question" not in columns:
        raise RecordsError(f"{data}: column 'question' not found; multiple-choice data needs "
                           "question, answer and options (a list) or columns A, B, ...")
    if not {"answer", "answerKey"} & columns:
        raise RecordsError(f"{data}: column 'answer' (or 'answerKey') not found; the gold "
                           "option's letter is needed")
    # the original CommonsenseQA layout nests its choices inside ``question``
    nested = frame["question"].map(lambda q: isinstance(q, dict)).any()
    if not ({"options", "choices"} & columns or letter_cols or nested):
        raise RecordsError(f"{data}: no options: give an 'options' list, 'choices', or "
                           "columns A, B, ...")


def mc_item(row: dict, letter_cols: list[str]) -> dict | str:
    """One askable item, or the reason the row cannot be asked."""
    question, texts, labels = _choices(row, letter_cols)
    answer = _text(row.get("answerKey")) or _text(row.get("answer"))
    if question is None:
        return "missing_question"
    if answer is None:
        return "missing_answer"
    if len(texts) < 2:
        return "fewer_than_2_options"
    if len(texts) > len(LETTERS):
        return "too_many_options"
    if any(_text(t) is None for t in texts):
        return "empty_option"
    letters = letters_for(len(texts))
    labels = letters if labels is None else [_text(lb) for lb in labels]
    if len(labels) != len(texts) or None in labels or len(set(labels)) != len(labels):
        return "duplicate_option_labels"
    if answer not in labels:
        return "answer_not_an_option"
    extra = {k: v for k, v in row.items() if k not in _CONSUMED and k not in letter_cols}
    item_id = _text(row.get("item_id")) or _text(row.get("id")) or f"row-{row['_row']}"
    return {**extra, "item_id": item_id, "question": question,
            "options": [str(t) for t in texts], "letters": letters,
            "answer": letters[labels.index(answer)]}


def _choices(row: dict, letter_cols: list[str]) -> tuple[str | None, list, list | None]:
    """(question, option texts, option labels or None for positional) of one row."""
    question, choices = row.get("question"), row.get("choices")
    if isinstance(question, dict):                       # original nested CommonsenseQA
        choices, question = question.get("choices"), question.get("stem")
    if isinstance(choices, dict):                        # HF: {"label": [...], "text": [...]}
        return _text(question), list(choices.get("text") or []), \
            list(choices.get("label") or [])
    if isinstance(choices, list):                        # nested: [{"label", "text"}, ...]
        pairs = [c for c in choices if isinstance(c, dict)]
        return _text(question), [c.get("text") for c in pairs], [c.get("label") for c in pairs]
    if _present(row.get("options")) or not letter_cols:
        try:
            texts = as_list(row["options"], "options", "row") if _present(row["options"]) \
                else []
        except RecordsError:
            texts = []
        return _text(question), list(texts), None
    texts = [row[c] for c in letter_cols]
    while texts and _text(texts[-1]) is None:           # empty trailing cells: fewer options
        texts.pop()
    return _text(question), texts, None


def _present(value: Any) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def _text(value: Any) -> str | None:
    """A non-blank string, stripped, or None (missing, NaN, blank)."""
    if not _present(value):
        return None
    text = str(value).strip()
    return text or None
