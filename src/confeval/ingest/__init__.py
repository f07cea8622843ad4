"""Reading the files other tools already wrote, into confeval's record layouts.

:func:`read_records` is the one entry: a scoring command's input is recognised from its
content (``--from auto``) or named (``--from lm-eval``), and turned into the record set the
suite's own reader takes — the suite's default columns, so that no column flag is needed (given
ones still override) — with every unusable line an excluded row under a named reason. A file
of no known format is read as confeval's own records, as before.

Formats (see each module): :mod:`.lm_eval` — lm-evaluation-harness ``--log_samples`` files of
``multiple_choice`` tasks; :mod:`.inspect_log` — Inspect logs of multiple-choice tasks.

Layouts per suite, from one lm-eval multiple-choice sample (choices A, B, ... in order):

Every row also holds ``task`` and, when the results file beside it names one, ``model``.

* ``score``: ``doc_id``, ``confidence`` (the softmax over the choices of the
  log-likelihoods, normalised as ``--normalise`` says, at the chosen choice) and ``correct``
  (the chosen choice is the gold one: lm-eval's ``acc``, ``acc_norm`` or ``acc_bytes``);
* ``sets``: ``doc_id``, ``answer`` (the gold letter) and ``logit_<letter>`` (the normalised
  log-likelihoods, read as logits: the softmax over the choices);
* ``measures``: one row per (document, choice) with ``question_id``, ``option``, ``correct``
  (1 for the gold choice), ``sl`` (the log-likelihood) and ``sl_norm`` (divided by the
  choice's length in characters, as lm-eval's ``acc_norm``).

From one Inspect sample (one row per sample and epoch, ``doc_id`` and ``epoch``):

* ``score``: ``confidence`` (the option letters' probabilities at the answer position,
  renormalised over the letters, at the most likely letter) and ``correct`` (the scorer's
  value as Inspect turns it into a number);
* ``sets``: ``answer`` (the target letter) and ``logit_<letter>`` (the letters'
  log-probabilities; a letter missing from the top alternatives gets ln 1e-5, counted in
  ``n_missing``).
"""

from __future__ import annotations

import string
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from ..records import RecordSet

__all__ = ["FORMATS", "LAYOUTS", "detect", "import_records", "read_input", "read_records"]

FORMATS = ("auto", "lm-eval", "inspect", "none")
"""``--from`` choices."""

_PEEK_BYTES = 1 << 20


def detect(path: str | Path) -> str | None:
    """The format of ``path`` from its content (at most 1 MB of its first line), or None."""
    from .inspect_log import looks_like_log
    from .lm_eval import looks_like_samples

    path = Path(path)
    name = path.name.lower()
    if path.is_file() and name.endswith((".eval", ".json")) and looks_like_log(path):
        return "inspect"
    if path.is_dir() or not name.endswith((".jsonl", ".jsonl.gz", ".ndjson", ".json")):
        return None
    try:
        if name.endswith(".gz"):
            import gzip

            with gzip.open(path, "rt", encoding="utf-8", errors="replace") as f:
                first = f.readline(_PEEK_BYTES)
        else:
            with path.open("r", encoding="utf-8", errors="replace") as f:
                first = f.readline(_PEEK_BYTES)
    except (OSError, EOFError):
        return None
    if looks_like_samples(first):
        return "lm-eval"
    return "openai" if _looks_like_openai(first) else None


def _looks_like_openai(first_line: str) -> bool:
    """A batch API output line (``custom_id`` and ``response.body``) or a response object
    (``object`` chat.completion / text_completion with ``choices``)."""
    import json

    try:
        obj = json.loads(first_line)
    except (json.JSONDecodeError, RecursionError):
        return False
    if not isinstance(obj, dict):
        return False
    if "custom_id" in obj and isinstance(obj.get("response"), dict):
        return True
    return obj.get("object") in ("chat.completion", "text_completion") and "choices" in obj


def _letters(n: int) -> list[str]:
    return list(string.ascii_uppercase[:n]) if n <= 26 else [f"O{i + 1}" for i in range(n)]


def _softmax_top(scores: np.ndarray) -> tuple[int, float]:
    shifted = np.exp(scores - scores.max())
    top = int(np.argmax(scores))   # the first of tied maxima, as lm-eval's numpy.argmax
    return top, float(shifted[top] / shifted.sum())


def _score_rows(sample, normalise: str) -> list[dict]:
    top, confidence = _softmax_top(sample.scores(normalise))
    return [{"doc_id": sample.doc_id, "task": sample.task, "confidence": confidence,
             "correct": int(top == sample.gold), "n_choices": len(sample.choices)}]


def _sets_rows(sample, normalise: str) -> list[dict]:
    letters = _letters(len(sample.choices))
    row: dict[str, Any] = {"doc_id": sample.doc_id, "task": sample.task,
                           "answer": letters[sample.gold]}
    row.update({f"logit_{letter}": float(v)
                for letter, v in zip(letters, sample.scores(normalise))})
    return [row]


def _measure_rows(sample, normalise: str) -> list[dict]:
    norm = sample.scores("chars")
    return [{"question_id": sample.doc_id, "option": letter, "task": sample.task,
             "correct": int(i == sample.gold), "sl": float(sample.lls[i]),
             "sl_norm": float(norm[i])}
            for i, letter in enumerate(_letters(len(sample.choices)))]


def _inspect_score_rows(sample, normalise: str) -> list[dict]:
    letters = sample.letters
    top, confidence = _softmax_top(np.array([sample.letter_logprobs[L] for L in letters]))
    return [{"doc_id": sample.doc_id, "epoch": sample.epoch, "confidence": confidence,
             "correct": sample.correct, "letter": letters[top], "target": sample.target,
             "n_missing": sample.n_missing}]


def _inspect_sets_rows(sample, normalise: str) -> list[dict]:
    row: dict[str, Any] = {"doc_id": sample.doc_id, "epoch": sample.epoch,
                           "answer": sample.target, "n_missing": sample.n_missing}
    row.update({f"logit_{L}": float(sample.letter_logprobs[L]) for L in sample.letters})
    return [row]


LAYOUTS: dict[str, dict[str, Callable[[Any, str], list[dict]]]] = {
    "lm-eval": {"score": _score_rows, "sets": _sets_rows, "measures": _measure_rows},
    "inspect": {"score": _inspect_score_rows, "sets": _inspect_sets_rows},
}
"""Format -> suite -> the rows of one sample in the suite's record layout."""

_KEY = {"score": "doc_id", "sets": "doc_id", "measures": "question_id"}


def _read(path: str | Path, fmt: str) -> tuple[list, list[str], str | None]:
    """(samples, each one's reason when unusable, the model) of a file of format ``fmt``."""
    if fmt == "inspect":
        from .inspect_log import read_log

        return read_log(path)
    from .lm_eval import read_samples

    data = read_samples(path)
    return data.samples, data.reasons, data.model


def read_records(path: str | Path, suite: str, from_format: str = "auto",
                 normalise: str = "none") -> RecordSet | None:
    """``path`` in ``suite``'s record layout when it is a file of a known format (``auto``:
    recognised from the content), with each unusable line an excluded row under its reason;
    None when it is confeval's own records (``none``, or no known format under ``auto``). A
    named format the file is not, or a suite with no layout for it, is a :class:`ValueError`
    naming the file."""
    from ..records import RecordSet

    if from_format not in FORMATS:
        raise ValueError(f"--from {from_format!r}: choose from {', '.join(FORMATS)}")
    from .lm_eval import NORMALISATIONS

    if normalise not in NORMALISATIONS:
        raise ValueError(f"--normalise {normalise!r}: choose from {', '.join(NORMALISATIONS)}")
    if from_format == "none":
        return None
    found = detect(path)
    if from_format == "auto" and found is None:
        return None
    if from_format != "auto" and found != from_format:
        raise ValueError(f"{path}: not an {from_format} file (its content is no "
                         f"{from_format} output)")
    if found == "openai":   # recognised, so that the user hears why rather than "no column"
        raise ValueError(f"{path}: OpenAI-compatible responses; confeval cannot read them yet "
                         "(they carry no gold answer: join them with your data into records "
                         "with the suite's columns)")
    layouts = LAYOUTS[found]
    if suite not in layouts:
        raise ValueError(f"{path}: an {found} file has no {suite} records (it can be "
                         f"scored by: {', '.join(layouts)})")
    samples, sample_reasons, model = _read(path, found)
    rows, reasons = [], []
    for line, (sample, reason) in enumerate(zip(samples, sample_reasons), start=1):
        if sample is None:
            rows.append({_KEY[suite]: f"sample-{line}"})
            reasons.append(reason)
            continue
        made = layouts[suite](sample, normalise)
        if model:
            for row in made:
                row["model"] = model
        rows.extend(made)
        reasons.extend([""] * len(made))
    if not rows:
        raise ValueError(f"{path}: an {found} file without a sample")
    rs = RecordSet.from_records(rows, str(path))
    reasons_array = np.array(reasons, dtype=object)
    for reason in sorted(set(reasons) - {""}):
        rs.exclude(reasons_array == reason, reason)
    return rs


def read_input(path: str | Path, suite: str, options: Any,
               load: Callable[[Path], RecordSet] | None = None) -> RecordSet:
    """The records of one scoring input: :func:`read_records` with the options' ``from_format``
    and ``normalise`` (options without them read confeval's own records), else ``load(path)``
    (default :meth:`RecordSet.read`: a record file or a run folder)."""
    from ..records import RecordSet

    rs = read_records(path, suite, getattr(options, "from_format", "none"),
                      getattr(options, "normalise", "none"))
    if rs is not None:
        return rs
    return load(Path(path)) if load is not None else RecordSet.read(Path(path))


def import_records(path: str | Path, suite: str, from_format: str = "auto",
                   normalise: str = "none") -> tuple[Any, dict]:
    """(the usable rows of another tool's file in ``suite``'s record layout, the counts
    ``{n_read, n_used, excluded}``) — what ``confeval import`` writes; a file of no known
    format is a :class:`ValueError` (there is nothing to import)."""
    rs = read_records(path, suite, from_format, normalise)
    if rs is None:
        raise ValueError(f"{path}: no known format (lm-eval samples, an Inspect log); "
                         "confeval reads it as it is")
    from ..records import ROW_COLUMN

    frame = rs.frame[rs.mask].drop(columns=[ROW_COLUMN]).reset_index(drop=True)
    return frame, {"n_read": rs.n_read, "n_used": int(rs.mask.sum()),
                   "excluded": rs.excluded}
