"""Responses and the data they answer: each response matched to its data row.

A response file (:mod:`.openai`) holds what a model said, not what was asked nor the gold
answer; the data file (``--data FILE``, the same file a live run takes) holds those. The rule:

* **by id** when the data has an id column (``item_id``, else ``id``) and the response a
  ``custom_id`` (the batch API's): the response answers the row whose id equals its
  ``custom_id`` (compared as text);
* **by position** otherwise: the n-th response answers the n-th row of the data (its n-th
  record; a data file with unreadable lines is refused, as positions would shift).

Multiple-choice layouts (``score``, ``sets``: ``questions=True``) read each row as a question
(:func:`confeval.tasks.multiple_choice.mc_item`: its letters and gold letter; a row that cannot
be asked gives ``data_<reason>``); judge layouts (``intervals``) keep the row's plain columns
(the human score among them). A response whose row is not found is ``openai_no_data_row``;
a row answered twice by one ``custom_id`` (a retried request appended) keeps its first usable
answer, the others excluded as ``duplicate_sample`` by :func:`confeval.ingest.read_records`;
the rows no response answered are counted (``data_rows_without_response``), not scored.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Answered", "DataRows", "read_data_rows"]


@dataclass
class Answered:
    """A response, the data row it answers, and the rating scale (judge suites)."""

    response: Any
    item: dict
    levels: tuple[int, ...] = ()


@dataclass
class DataRows:
    """The rows of a data file, each an item (dict) or the reason it cannot be one, with
    their ids (None: the file has no id column) and which rows were answered."""

    path: str
    items: list[dict | str]
    ids: list[str] | None
    clean: bool
    answered: set[int] = field(default_factory=set)

    def __post_init__(self) -> None:
        self._by_id: dict[str, int] = {}
        for index, key in enumerate(self.ids or ()):
            self._by_id.setdefault(key, index)   # a repeated id: its first row answers

    def find(self, response) -> dict | str:
        """The item ``response`` answers, or the reason there is none."""
        if self.ids is not None and response.custom_id is not None:
            index = self._by_id.get(response.custom_id)
        else:
            if not self.clean:
                raise ValueError(f"{self.path}: unreadable lines, so responses cannot be "
                                 "matched to its rows by position (give the data an item_id "
                                 "column and the requests that custom_id)")
            index = response.position - 1
            index = index if 0 <= index < len(self.items) else None
        if index is None:
            return "openai_no_data_row"
        self.answered.add(index)
        item = self.items[index]
        return f"data_{item}" if isinstance(item, str) else item

    @property
    def unanswered(self) -> int:
        return len(self.items) - len(self.answered)


def _text(value: Any) -> str | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)   # an id column pandas read as float (1.0) is the text "1"
    text = str(value).strip()
    return text or None


def _plain(row: dict) -> dict:
    return {k: v for k, v in row.items() if k != "_row" and
            (v is None or isinstance(v, (str, int, float, bool)))}


def read_data_rows(data: str | Path, *, questions: bool) -> DataRows:
    """The rows of the data file ``data``: multiple-choice questions, or plain rows (module
    docstring)."""
    from ..records import RecordSet
    from ..tasks.multiple_choice import check_mc_layout, letter_columns, mc_item

    rs = RecordSet.read(Path(data))
    frame = rs.frame
    id_col = next((c for c in ("item_id", "id") if c in frame.columns), None)
    rows = frame.to_dict(orient="records")
    if questions:
        letter_cols = letter_columns(frame.columns)
        check_mc_layout(str(data), frame, letter_cols)
        items: list[dict | str] = [mc_item(row, letter_cols) for row in rows]
    else:
        items = [{**_plain(row), "item_id": _text(row.get(id_col)) if id_col else
                  f"row-{row['_row']}"} for row in rows]
    ids = None
    if id_col is not None:
        ids = [_text(row.get(id_col)) or f"row-{row['_row']}" for row in rows]
    return DataRows(str(data), items, ids, clean=not rs.problems)
