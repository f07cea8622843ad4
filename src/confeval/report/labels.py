"""Short labels for the inputs a terminal table names (files, models, judges), and wrapping
of a label at its separators: an 80-column terminal then shows ``calibrated`` where the file
was ``llama-3.1-8b-instruct_calibrated-judge_mmlu-pro_2024-05-13.csv``, and a label that must
wrap breaks after a ``_`` or a ``-``, never inside a word.

Pure Python: a terminal table loads no heavy library.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePath

__all__ = ["Labels", "longest_part", "short_labels", "wrap_label"]

RECORD_EXTENSIONS = (".csv.gz", ".jsonl.gz", ".tsv.gz", ".csv", ".jsonl", ".tsv", ".parquet",
                     ".ndjson", ".json", ".eval")
"""Extensions dropped from a file's label (the table is about the records, not the format)."""

# a label's parts: each ends after its separator (or at the end), so that joining them gives
# the label back and a common prefix or suffix is cut where a reader would cut it
_PART = re.compile(r"[^_\-\s/:(]*(?:[_\-\s/:(]+|$)")
_EDGES = "_-/: "


@dataclass(frozen=True)
class Labels:
    """Each input's short label, in the inputs' order, and ``pattern``: what the labels
    leave out, with ``*`` where each label goes (None when nothing was left out)."""

    labels: list[str]
    pattern: str | None = None

    def key(self) -> str | None:
        """One line for a table's caption saying what the labels stand for."""
        return None if self.pattern is None else f"each name stands for {self.pattern}"


def _stem(name: str) -> str:
    """A file path's name without folder and record extension; any other name as is."""
    text = str(name)
    lower = text.lower()
    if "/" not in text and "\\" not in text and not lower.endswith(RECORD_EXTENSIONS):
        return text                         # a model or judge name ("local:SmolLM2-135M")
    base = PurePath(text.replace("\\", "/")).name
    for ext in RECORD_EXTENSIONS:
        if base.lower().endswith(ext):
            return base[: -len(ext)] or base
    return base


def _with_folders(names: Sequence[str], labels: list[str]) -> list[str]:
    """Labels, each with its folder where two inputs share a label (two runs'
    ``records.jsonl``)."""
    shared = {s for s in labels if labels.count(s) > 1}
    out = []
    for name, label in zip(names, labels):
        folder = PurePath(str(name).replace("\\", "/")).parent.name
        out.append(f"{folder}/{label}" if label in shared and folder else label)
    return out


def _parts(text: str) -> list[str]:
    return [p for p in _PART.findall(text) if p]


def _common_parts(split: list[list[str]], from_end: bool) -> int:
    """How many whole parts every label shares at its start (or end)."""
    count = 0
    for group in zip(*(reversed(p) if from_end else p for p in split)):
        if len(set(group)) != 1:
            break
        count += 1
    return count


def _tidy(label: str) -> str:
    """A label without separators at its ends, and without the brackets of a label that is
    all bracketed ("(marginal)" -> "marginal")."""
    label = label.strip(_EDGES)
    if label.endswith(")") and label.count(")") > label.count("("):
        label = label[:-1]                  # its "(" went with the common prefix
    if label.startswith("(") and label.endswith(")") and label.count("(") == 1:
        label = label[1:-1]
    return label.strip(_EDGES) or label


def short_labels(names: Sequence[str]) -> Labels:
    """The inputs' labels: a file's stem (with its folder where stems collide), then, with
    several inputs, the whole parts (split after ``_``, ``-``, ``/``, ``:``, ``(`` and spaces)
    that every label shares at its start and at its end dropped — unless that would leave a
    label empty or two labels equal.

    Examples
    --------
    >>> short_labels(["runs/llama_calibrated-judge_mmlu.csv",
    ...               "runs/llama_overconfident-judge_mmlu.csv"]).labels
    ['calibrated', 'overconfident']
    >>> short_labels(["runs/llama_calibrated-judge_mmlu.csv",
    ...               "runs/llama_overconfident-judge_mmlu.csv"]).pattern
    'llama_*-judge_mmlu'
    >>> short_labels(["a/records.jsonl", "b/records.jsonl"]).labels
    ['a', 'b']
    >>> short_labels(["judge.csv"]).labels
    ['judge']
    """
    stems = [_stem(n) for n in names]
    if len(stems) < 2:
        return Labels(stems)
    stripped = _strip_common(stems, distinct=False)   # equal stems get their folders next
    if stripped is not None:
        labels = _with_folders(names, stripped.labels)
        if len(set(labels)) == len(labels):
            return Labels(labels, stripped.pattern)
    qualified = _with_folders(names, stems)
    if len(set(qualified)) < len(qualified):   # one name twice, or a.csv beside a.jsonl
        return Labels([str(n) for n in names])
    return _strip_common(qualified) or Labels(qualified)


def _strip_common(texts: list[str], *, distinct: bool = True) -> Labels | None:
    """``texts`` without the whole parts they all share at their start and end, and the
    pattern of what was dropped; None when they share none, or when dropping would leave a
    label empty (or, with ``distinct``, two labels equal that were not)."""
    split = [_parts(t) for t in texts]
    head = _common_parts(split, from_end=False)
    tail = _common_parts([p[head:] for p in split], from_end=True)
    labels = [_tidy("".join(p[head:len(p) - tail])) for p in split]
    merged = len(set(labels)) < len(set(texts))
    if (head == 0 and tail == 0) or not all(labels) or (merged and distinct):
        return None
    first = split[0]
    kept = "".join(first[head:len(first) - tail])
    pattern = ("".join(first[:head]) + kept.replace(_tidy(kept), "*", 1)
               + "".join(first[len(first) - tail:]))
    return Labels(labels, pattern)


_WRAP_PART = re.compile(r"[^_\-\s/:]*[_\-\s/:]*")


def longest_part(label: str) -> int:
    """The width of ``label``'s longest part that :func:`wrap_label` never breaks (a word
    with the separators after it, trailing spaces left out)."""
    return max((len(p.rstrip()) for p in _WRAP_PART.findall(label) if p), default=0)


def wrap_label(label: str, width: int) -> str:
    """``label`` on lines of at most ``width`` characters, broken after a separator (``_``,
    ``-``, ``/``, ``:``, a space; never after a ``.``, so never inside a number); a part
    longer than ``width`` alone is cut (there is no other way to show it).

    Examples
    --------
    >>> print(wrap_label("samples_confeval_arith_mc_2026-11-24T19-40-54", 18))
    samples_confeval_
    arith_mc_2026-11-
    24T19-40-54
    """
    if width < 1 or len(label) <= width:
        return label
    lines, line = [], ""
    for part in _WRAP_PART.findall(label):
        if not part:
            continue
        if line and len(line) + len(part.rstrip()) > width:
            lines.append(line.rstrip())
            line = ""
        while len(part.rstrip()) > width:   # one part wider than the column: cut it
            lines.append(part[:width])
            part = part[width:]
        line += part if line else part.lstrip()
    if line.strip():
        lines.append(line.rstrip())
    return "\n".join(lines)
