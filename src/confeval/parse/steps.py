"""Reading a process judge's per-step verdicts: correctness label, P(correct), error type.

The judge is asked (see :mod:`confeval.suites.steps`) for one entry per step, either a list
literal between ``<evaluation>`` tags — ``["Step 1: ...", 1, 0.85, ""]`` per step, the
paper's format — or JSON (a list of such lists, or of objects with ``label``,
``p_correct``/``probability``, ``error_type``). The block is located in this order: the last
``<evaluation>`` … ``</evaluation>`` (a missing closing tag reads to the end), the last code
fence, then the first bracket that reads as a list of entries. It is read with
:func:`confeval.parse.literal.read_literal` — never evaluated.

Every step gets a record; nothing is dropped silently:

* ``status = "ok"`` with ``p_correct`` in [0, 1], or ``"unparseable"`` with a ``reason``
  (``no_block``, ``unreadable_block: …``, ``missing_step``, ``missing_probability``,
  ``probability_out_of_range``, ``contradiction_excluded``);
* ``flags`` note what was repaired or doubtful: ``percent`` ("85%"), ``percent_without_sign``
  (a bare 85 read as 0.85), ``step_count_mismatch`` (entries ≠ steps; entries are matched
  by position, extra ones ignored), ``label_contradicts_probability``, ``mirrored``,
  ``unknown_error_type``, ``unreadable_label``, ``truncated`` (the block was cut off, e.g. by
  a token limit: its complete entries are kept).

Consistency policy (the paper: "l_i and e_i assist in correcting potential inconsistencies")
-------------------------------------------------------------------------------------------
The judge's label, or failing that a non-empty error type (which implies "incorrect"),
contradicts the probability when it disagrees with p >= 0.5. ``consistency=`` decides:

``"flag"`` (default)  keep p, flag the step; p alone defines the prediction (Eq. 1).
``"mirror"``          the label wins: p becomes 1 - p (a judge that wrote its confidence in its
                      own label rather than P(correct)); flagged ``mirrored``.
``"exclude"``         the step becomes unparseable (``contradiction_excluded``).
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass, field
from typing import Any

from ..taxonomy import error_types, normalise
from ._tokens import MAX_REPLY_CHARS
from .literal import LiteralError, Percent, read_list_prefix_span, read_literal

__all__ = ["CONSISTENCY_POLICIES", "ERROR_TYPES", "StepVerdict", "normalise_error_type",
           "parse_step_judgement"]

CONSISTENCY_POLICIES = ("flag", "mirror", "exclude")

ERROR_TYPES = {key: t.spellings for key, t in error_types("confprobench").items()}
"""ConfProBench's seven error types and the spellings judges use for them (from
:mod:`confeval.taxonomy`)."""

_TAG = re.compile(r"<\s*evaluation\s*>(.*?)(?:<\s*/\s*evaluation\s*>|$)", re.I | re.S)
_FENCE = re.compile(r"```[a-zA-Z]*\s*\n?(.*?)```", re.S)
_BRACKET = re.compile(r"[\[{]")
_P_KEYS = ("p_correct", "p", "probability", "prob", "p(correct)", "confidence",
           "correct_probability", "score")
_LABEL_KEYS = ("label", "correctness_label", "correctness", "correct", "is_correct")
_ERROR_KEYS = ("error_type", "error", "error_category", "category", "type")
_LABEL_WORDS = {"1": 1, "0": 0, "true": 1, "false": 0, "correct": 1, "incorrect": 0,
                "yes": 1, "no": 0, "right": 1, "wrong": 0}


@dataclass
class StepVerdict:
    """The judge's verdict on one step, as read."""

    step: int
    p_correct: float | None
    pred_label: int | None
    pred_error_type: str
    status: str = "ok"
    reason: str | None = None
    flags: list[str] = field(default_factory=list)


def normalise_error_type(text: Any) -> tuple[str, bool]:
    """(taxonomy key or cleaned text, known?) for an error type as a judge wrote it; empty
    for none (:func:`confeval.taxonomy.normalise` on ConfProBench's types)."""
    return normalise(text, "confprobench")


def _candidates(text: str) -> list[tuple[int, int]]:
    """(start, end) of text where an entries list may be: from the first bracket inside each
    <evaluation> block to its end (last block first), then likewise inside each code fence,
    else from each of the first 20 brackets of the reply to its end. Offsets, not copies, so
    the reply is scanned a bounded number of times."""
    found: list[tuple[int, int]] = []
    for pattern in (_TAG, _FENCE):
        spans = []
        for m in pattern.finditer(text):
            inner = _BRACKET.search(text, m.start(1), m.end(1))
            if inner:
                spans.append((inner.start(), m.end(1)))
        found += spans[::-1]
    if not found:
        found = [(m.start(), len(text))
                 for m in itertools.islice(_BRACKET.finditer(text), 20)]
    return found


SCAN_BUDGET = 2
"""Candidate blocks are read until this many times the reply's length has been scanned in
all (a reply of 20 nested unclosed brackets would otherwise be read 40 times over)."""


def _block(text: str) -> Any:
    """The entries list from the judge's reply, or raise LiteralError."""
    candidates = _candidates(text)
    if not candidates:
        raise LiteralError("no list or <evaluation> block in the reply")
    budget = SCAN_BUDGET * len(text) + 10_000
    last_error: Exception | None = None
    failed = []
    for start, end in candidates:
        if budget <= 0:
            break
        try:
            value = read_literal(text, start, end)
        except LiteralError as exc:
            last_error = exc
            budget -= (exc.position or start) - start + 1
            failed.append((start, end))
            continue
        entries = _entries(value)
        if entries is not None:
            return entries
        failed.append((start, end))
    for start, end in failed:  # a reply cut off by a token limit: keep the complete entries
        if budget <= 0:
            break
        if text[start] != "[":
            continue
        try:
            items, stop = read_list_prefix_span(text, start, end)
        except LiteralError:
            continue
        budget -= stop - start + 1
        entries = _entries(items)
        if entries:
            return _Truncated(entries)
    raise LiteralError(str(last_error) if last_error else "no list of step entries found")


class _Truncated(list):
    """Entries salvaged from a block that was cut off."""


def _entries(value: Any) -> list | None:
    """The list of per-step entries inside a read value (a list, or a dict holding one)."""
    if isinstance(value, dict):
        for v in value.values():
            if isinstance(v, list):
                return _entries(v)
        return None
    if isinstance(value, list) and value and all(isinstance(e, (list, dict)) for e in value):
        return value
    if isinstance(value, list) and len(value) >= 2 and not any(
            isinstance(e, (list, dict)) for e in value):
        return [value]  # a single entry without the outer list
    return None


def _fields(entry: Any) -> tuple[Any, Any, Any]:
    """(label, p, error type) of one entry, positional or by key."""
    if isinstance(entry, dict):
        low = {str(k).strip().lower(): v for k, v in entry.items()}

        def pick(keys):
            return next((low[k] for k in keys if k in low), None)

        return pick(_LABEL_KEYS), pick(_P_KEYS), pick(_ERROR_KEYS)
    items = list(entry)
    if items and isinstance(items[0], str) and _label_of(items[0]) is None and len(items) >= 3:
        items = items[1:]  # the step text comes first in the paper's format
    items += [None] * (3 - len(items))
    return items[0], items[1], items[2]


def _label_of(value: Any) -> int | None:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)) and value in (0, 1):
        return int(value)
    if isinstance(value, str):
        return _LABEL_WORDS.get(value.strip().lower())
    return None


def _probability(value: Any, flags: list[str]) -> tuple[float | None, str | None]:
    if isinstance(value, bool) or value is None:
        return None, "missing_probability"
    if isinstance(value, str):
        match = re.search(r"[-+]?(?:\d+\.?\d*|\.\d+)\s*%?", value)
        if not match:
            return None, "missing_probability"
        text = match.group().replace(" ", "")
        value = Percent(float(text[:-1]) / 100) if text.endswith("%") else float(text)
    if isinstance(value, Percent):
        flags.append("percent")
    try:
        p = float(value)
    except (OverflowError, ValueError, TypeError):
        return None, "probability_out_of_range"
    if not math.isfinite(p):
        return None, "probability_out_of_range"
    if 1 < p <= 100 and not isinstance(value, Percent):
        flags.append("percent_without_sign")
        p /= 100
    if not 0 <= p <= 1:
        return None, "probability_out_of_range"
    return p, None


def _verdict(step: int, entry: Any, consistency: str) -> StepVerdict:
    flags: list[str] = []
    label_raw, p_raw, error_raw = _fields(entry)
    label = _label_of(label_raw)
    if label_raw is not None and label is None:
        flags.append("unreadable_label")
    error, known = normalise_error_type(error_raw)
    if not known:
        flags.append("unknown_error_type")
    p, reason = _probability(p_raw, flags)
    if p is None:
        return StepVerdict(step, None, label, error, "unparseable", reason, flags)
    hint = label if label is not None else (0 if error else None)
    if hint is not None and hint != int(p >= 0.5):
        flags.append("label_contradicts_probability")
        if consistency == "mirror":
            p = 1 - p
            flags.append("mirrored")
        elif consistency == "exclude":
            return StepVerdict(step, None, label, error, "unparseable",
                               "contradiction_excluded", flags)
    return StepVerdict(step, p, int(p >= 0.5), error, "ok", None, flags)


def parse_step_judgement(text: Any, n_steps: int, *, consistency: str = "flag"
                         ) -> list[StepVerdict]:
    """One :class:`StepVerdict` per step (``n_steps`` of them) from a judge's reply.

    Never raises on the reply's content; only a bad ``n_steps`` or ``consistency`` does.

    Examples
    --------
    >>> reply = '''I checked each step.
    ... <evaluation>
    ... [["Step 1: 2 + 3 = 5", 1, 0.95, ""],
    ...  ["Step 2: 5 x 4 = 25", 0, "10%", "Numerical Calculation Error"],]
    ... </evaluation>'''
    >>> [(v.p_correct, v.pred_error_type, v.flags) for v in parse_step_judgement(reply, 2)]
    [(0.95, '', []), (0.1, 'numerical_calculation', ['percent'])]
    """
    if consistency not in CONSISTENCY_POLICIES:
        raise ValueError(f"consistency must be one of {CONSISTENCY_POLICIES}")
    if isinstance(n_steps, bool) or not isinstance(n_steps, int) or n_steps < 0:
        raise ValueError("n_steps must be a non-negative integer")
    if not isinstance(text, str) or not text.strip():
        return [StepVerdict(i, None, None, "", "unparseable", "no_block") for i in
                range(n_steps)]
    if len(text) > MAX_REPLY_CHARS:
        return [StepVerdict(i, None, None, "", "unparseable", "reply_too_long")
                for i in range(n_steps)]
    try:
        entries = _block(text)
    except RecursionError:
        return [StepVerdict(i, None, None, "", "unparseable", "parser_error: RecursionError")
                for i in range(n_steps)]
    except LiteralError as exc:
        reason = "no_block" if "no list" in str(exc) else f"unreadable_block: {exc}"
        return [StepVerdict(i, None, None, "", "unparseable", reason) for i in range(n_steps)]
    out = []
    for i in range(n_steps):
        if i >= len(entries):
            out.append(StepVerdict(i, None, None, "", "unparseable", "missing_step"))
            continue
        try:
            out.append(_verdict(i, entries[i], consistency))
        except Exception as exc:  # untrusted text: any failure is an unreadable step
            out.append(StepVerdict(i, None, None, "", "unparseable",
                                   f"parser_error: {type(exc).__name__}"))
    if len(entries) != n_steps:
        for v in out:
            v.flags.append(f"step_count_mismatch:{len(entries)}/{n_steps}")
    if isinstance(entries, _Truncated):
        for v in out:
            v.flags.append("truncated")
    return out
