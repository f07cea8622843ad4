"""Reading the files other tools already wrote, into confeval's record layouts.

:func:`read_records` is the one entry: a scoring command's input is recognised from its
content (``--from auto``) or named (``--from lm-eval``), and turned into the record set the
suite's own reader takes — the suite's default columns, so that no column flag is needed (given
ones still override) — with every unusable line an excluded row under a named reason. A file
of no known format is read as confeval's own records, as before.

Formats (see each module): :mod:`.lm_eval` — lm-evaluation-harness ``--log_samples`` files of
``multiple_choice`` tasks; :mod:`.inspect_log` — Inspect logs of multiple-choice tasks;
:mod:`.openai` — OpenAI-compatible responses (batch output, response objects), read with the
data file they answer (``--data``, :mod:`.matching`).

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

From an lm-eval sample of a task without options (``generate_until``, ``loglikelihood``), for
``score`` only: ``doc_id``, ``output_type``, every per-sample metric the line lists (a task's
own among them, e.g. a stated confidence), ``correct`` (the first of ``exact_match``, ``acc``),
``reply`` and ``target`` (``generate_until``), ``loglikelihood``, ``p_target`` (its exp) and
``is_greedy`` (``loglikelihood``). lm-eval logs no confidence for them: ``-c`` names the column
holding one (``p_target``, or the task's own).

From one Inspect sample (one row per sample and epoch, ``doc_id`` and ``epoch``):

* ``score``: ``confidence`` (the option letters' probabilities at the answer position,
  renormalised over the letters, at the most likely letter) and ``correct`` (the scorer's
  value as Inspect turns it into a number);
* ``sets``: ``answer`` (the target letter) and ``logit_<letter>`` (the letters'
  log-probabilities; a letter missing from the top alternatives gets ln 1e-5, counted in
  ``n_missing``).

From one OpenAI-compatible response and the data row it answers (``item_id``, ``custom_id``;
the letters at the answer position read as a live run against a server reads them):

* ``score``: ``confidence`` (the letters' probabilities renormalised, at the most likely
  letter), ``letter``, ``answer`` (the data's gold letter) and ``correct``;
* ``sets``: ``answer`` and ``logit_<letter>`` (the letters' log-probabilities);
* ``intervals`` (also ``confeval agreement``): the data row's columns (``gt_score`` among
  them), ``parsed_score`` and ``s2_lp<rating>`` — the judge's log-probability of every rating
  at its rating position (:func:`confeval.parse.score_tokens.extract_score`, ``--min-score`` to
  ``--max-score``), as ``confeval intervals run --answer generated`` records them.
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

FORMATS = ("auto", "lm-eval", "inspect", "openai", "none")
"""``--from`` choices."""

_PEEK_BYTES = 1 << 20
_PEEK_LINES = 5
"""Detection reads this many first lines (1 MB at most): one damaged line is no other
format."""


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
                lines = _first_lines(f)
        else:
            with path.open("r", encoding="utf-8", errors="replace") as f:
                lines = _first_lines(f)
    except (OSError, EOFError):
        return None
    if any(looks_like_samples(line) for line in lines):   # a damaged first line is counted
        return "lm-eval"
    first = lines[0] if lines else ""
    from .openai import looks_like_responses

    if first.lstrip().startswith("[") and not name.endswith(".gz"):
        with path.open("r", encoding="utf-8", errors="replace") as f:
            first = f.read(_PEEK_BYTES)   # a JSON list of responses spans many lines
    return "openai" if looks_like_responses(first) else None


def _first_lines(f, n: int = _PEEK_LINES) -> list[str]:
    """Up to ``n`` lines of ``f``, ``_PEEK_BYTES`` in all at most."""
    lines, budget = [], _PEEK_BYTES
    while len(lines) < n and budget > 0:
        line = f.readline(budget)
        if not line:
            break
        lines.append(line)
        budget -= len(line)
    return lines


def _letters(n: int) -> list[str]:
    return list(string.ascii_uppercase[:n]) if n <= 26 else [f"O{i + 1}" for i in range(n)]


def _softmax_top(scores: np.ndarray) -> tuple[int, float]:
    shifted = np.exp(scores - scores.max())
    top = int(np.argmax(scores))   # the first of tied maxima, as lm-eval's numpy.argmax
    return top, float(shifted[top] / shifted.sum())


CORRECTNESS_METRICS = ("exact_match", "acc")
"""lm-eval's per-sample metrics read as correctness in a task without options, first found
first."""


def _scored_rows(sample) -> list[dict]:
    """One lm-eval sample of a task without options: its metrics as columns, ``correct`` the
    first of :data:`CORRECTNESS_METRICS` it has; no confidence (lm-eval logs none: a column
    holding one is named with ``-c``)."""
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


def _score_rows(sample, normalise: str) -> list[dict]:
    if not hasattr(sample, "choices"):
        return _scored_rows(sample)
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
    # SL(norm) needs a length: lm-eval logs no token count, so characters (its acc_norm), or
    # bytes under --normalise bytes
    norm = sample.scores("bytes" if normalise == "bytes" else "chars")
    return [{"question_id": sample.doc_id, "option": letter, "task": sample.task,
             "correct": int(i == sample.gold), "sl": float(sample.lls[i]),
             "sl_norm": float(norm[i])}
            for i, letter in enumerate(_letters(len(sample.choices)))]


def _inspect_score_rows(sample, normalise: str) -> list[dict]:
    letters = sample.letters
    top, confidence = _softmax_top(np.array([sample.letter_logprobs[L] for L in letters]))
    return [{"doc_id": sample.doc_id, "epoch": sample.epoch, "confidence": confidence,
             "correct": sample.correct, "letter": letters[top], "target": sample.target,
             "n_missing": sample.n_missing,
             "gold_in_top_logprobs": int(sample.target not in sample.missing)}]


def _inspect_sets_rows(sample, normalise: str) -> list[dict]:
    row: dict[str, Any] = {"doc_id": sample.doc_id, "epoch": sample.epoch,
                           "answer": sample.target, "n_missing": sample.n_missing,
                           "gold_in_top_logprobs": int(sample.target not in sample.missing)}
    row.update({f"logit_{L}": float(sample.letter_logprobs[L]) for L in sample.letters})
    return [row]


def _openai_letters(answered) -> tuple[list[str], np.ndarray, int, bool] | str:
    """(the question's letters, their log-probabilities at the answer position, how many of
    them the top log-probs lack, whether the gold letter is among those listed) of one
    response, or the reason they cannot be read."""
    from ..parse.option_tokens import extract_from_tokens

    letters = answered.item["letters"]
    read = extract_from_tokens(answered.response.tokens, letters)
    if read["raw"] is None:
        return ("openai_reply_too_long" if read["reason"] == "reply_too_long"
                else "openai_no_letter_in_top_logprobs")
    return (letters, np.array([read["raw"][L] for L in letters]), read["n_missing"],
            answered.item["answer"] not in read["missing"])


def _openai_base(answered) -> dict[str, Any]:
    return {"item_id": answered.item["item_id"], "custom_id": answered.response.custom_id}


def _openai_score_rows(answered, normalise: str) -> list[dict] | str:
    read = _openai_letters(answered)
    if isinstance(read, str):
        return read
    letters, logprobs, n_missing, gold_listed = read
    top, confidence = _softmax_top(logprobs)
    gold = answered.item["answer"]
    return [{**_openai_base(answered), "confidence": confidence,
             "correct": int(letters[top] == gold), "letter": letters[top], "answer": gold,
             "n_missing": n_missing, "gold_in_top_logprobs": int(gold_listed)}]


def _openai_sets_rows(answered, normalise: str) -> list[dict] | str:
    read = _openai_letters(answered)
    if isinstance(read, str):
        return read
    letters, logprobs, n_missing, gold_listed = read
    row = {**_openai_base(answered), "answer": answered.item["answer"], "n_missing": n_missing,
           "gold_in_top_logprobs": int(gold_listed)}
    row.update({f"logit_{L}": float(v) for L, v in zip(letters, logprobs)})
    return [row]


def _openai_intervals_rows(answered, normalise: str) -> list[dict] | str:
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


LAYOUTS: dict[str, dict[str, Callable[[Any, str], list[dict] | str]]] = {
    "lm-eval": {"score": _score_rows, "sets": _sets_rows, "measures": _measure_rows},
    "inspect": {"score": _inspect_score_rows, "sets": _inspect_sets_rows},
    "openai": {"score": _openai_score_rows, "sets": _openai_sets_rows,
               "intervals": _openai_intervals_rows},
}
"""Format -> suite -> the rows of one sample in the suite's record layout (or, for a
response whose answer cannot be read, the reason)."""

_KEY = {"score": "doc_id", "sets": "doc_id", "measures": "question_id"}


def _read(path: str | Path, fmt: str, suite: str, data: str | None,
          levels: tuple[int, ...]) -> tuple[list, list[str], str | None, dict]:
    """(samples, each one's reason when unusable, the model, notes) of a file of ``fmt``."""
    if fmt == "inspect":
        from .inspect_log import read_log

        return (*read_log(path), {})
    if fmt == "openai":
        return _read_openai(path, suite, data, levels)
    from .lm_eval import read_samples

    samples = read_samples(path)
    if samples.output_type != "multiple_choice" and suite != "score":
        raise ValueError(f"{path}: lm-eval samples of a {samples.output_type} task have no "
                         f"options to read {suite} records from (a multiple_choice task's "
                         "have); `confeval score` reads their per-sample metrics")
    return samples.samples, samples.reasons, samples.model, {}


def _read_openai(path: str | Path, suite: str, data: str | None,
                 levels: tuple[int, ...]) -> tuple[list, list[str], str | None, dict]:
    """Responses matched to the rows of ``data`` they answer (:mod:`.matching`)."""
    from .matching import Answered, read_data_rows
    from .openai import read_responses

    if not data:
        raise ValueError(f"{path}: OpenAI-compatible responses carry no gold answer: name the "
                         "data they answer with --data FILE (matched by custom_id to its "
                         "item_id or id, else by position)")
    rows = read_data_rows(data, suite)
    responses, reasons, model = read_responses(path)
    samples: list = []
    for response, reason in zip(responses, reasons):
        item = rows.find(response) if response is not None else reason
        if isinstance(item, str):
            samples.append(None)
            reasons[len(samples) - 1] = item
            continue
        samples.append(Answered(response, item, levels))
    return samples, reasons, model, {f"data {data}": {
        "data_rows": len(rows.items), "data_rows_without_response": rows.unanswered}}


def read_records(path: str | Path, suite: str, from_format: str = "auto",
                 normalise: str = "none", *, data: str | None = None,
                 levels: tuple[int, ...] = (1, 2, 3, 4, 5)) -> RecordSet | None:
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
    found = None if from_format == "none" else detect(path)
    if data and found != "openai":
        raise ValueError(f"{path}: --data names the data OpenAI-compatible responses answer; "
                         f"this is {'an ' + found + ' file' if found else 'no response file'}")
    if found is None and from_format in ("auto", "none"):
        return None
    if from_format != "auto" and found != from_format:
        raise ValueError(f"{path}: not an {from_format} file (its content is no "
                         f"{from_format} output)")
    layouts = LAYOUTS[found]
    if suite not in layouts:
        commands = {"intervals": "agreement, intervals score", "score": "score",
                    "sets": "sets score", "measures": "measures score"}
        what = "judge ratings" if suite == "intervals" else f"{suite} records"
        raise ValueError(f"{path}: an {found} file has no {what} (it can be read by: "
                         f"{', '.join(commands.get(k, k) for k in layouts)})")
    samples, sample_reasons, model, notes = _read(path, found, suite, data, levels)
    rows, reasons = [], []
    key = "item_id" if found == "openai" else _KEY[suite]   # the data's ids name responses
    for line, (sample, reason) in enumerate(zip(samples, sample_reasons), start=1):
        made = layouts[suite](sample, normalise) if sample is not None else reason
        if isinstance(made, str):
            rows.append({key: f"sample-{line}"})
            reasons.append(made)
            continue
        if model:
            for row in made:
                row["model"] = model
        rows.extend(made)
        reasons.extend([""] * len(made))
    if not rows:
        raise ValueError(f"{path}: an {found} file without a sample")
    rs = RecordSet.from_records(rows, str(path))
    rs.notes.update(notes)
    if "gold_in_top_logprobs" in rs.frame.columns:
        rs.notes.update(_letters_missing(rs, reasons))
    if suite != "measures" and not rs.frame[key].duplicated().any():
        rs.id_col = key   # unique document ids align models (an Inspect epoch repeats them)
    reasons_array = np.array(reasons, dtype=object)
    for reason in sorted(set(reasons) - {""}):
        rs.exclude(reasons_array == reason, reason)
    return rs


def _letters_missing(rs: RecordSet, reasons: list[str]) -> dict:
    """How many usable samples' top log-probs lack an option letter, and the gold one: those
    letters are given the floor log-probability (``log 1e-5``) rather than dropped, so a
    sample whose gold letter is missing keeps a near-zero probability of the right answer."""
    usable = np.array([not r for r in reasons])
    lacking = (rs.frame["n_missing"].to_numpy() > 0) & usable
    gold = (rs.frame["gold_in_top_logprobs"].to_numpy() == 0) & usable
    return {"letters_not_in_top_logprobs": {
        "samples_lacking_a_letter": int(lacking.sum()), "samples_lacking_the_gold_letter":
        int(gold.sum()), "given_log_probability": "log(1e-5)"}}


def rating_levels(options: Any) -> tuple[int, ...]:
    """The rating scale of a judge's replies: ``min_score`` to ``max_score`` of the options
    (default 1-5)."""
    low = getattr(options, "min_score", 1)
    high = getattr(options, "max_score", None)
    high = low + 4 if high is None else high
    return tuple(range(low, high + 1))


def read_input(path: str | Path, suite: str, options: Any,
               load: Callable[[Path], RecordSet] | None = None) -> RecordSet:
    """The records of one scoring input: :func:`read_records` with the options' ``from_format``
    and ``normalise`` (options without them read confeval's own records), else ``load(path)``
    (default :meth:`RecordSet.read`: a record file or a run folder)."""
    from ..records import RecordSet

    rs = read_records(path, suite, getattr(options, "from_format", "none"),
                      getattr(options, "normalise", "none"),
                      data=getattr(options, "data_file", None), levels=rating_levels(options))
    if rs is not None:
        return rs
    return load(Path(path)) if load is not None else RecordSet.read(Path(path))


def import_records(path: str | Path, suite: str, from_format: str = "auto",
                   normalise: str = "none", *, data: str | None = None,
                   levels: tuple[int, ...] = (1, 2, 3, 4, 5)) -> tuple[Any, dict]:
    """(the usable rows of another tool's file in ``suite``'s record layout, the counts
    ``{n_read, n_used, excluded}``) — what ``confeval import`` writes; a file of no known
    format is a :class:`ValueError` (there is nothing to import)."""
    rs = read_records(path, suite, from_format, normalise, data=data, levels=levels)
    if rs is None:
        raise ValueError(f"{path}: no known format (lm-eval samples, an Inspect log, "
                         "OpenAI-compatible responses); "
                         "confeval reads it as it is")
    from ..records import ROW_COLUMN

    frame = rs.frame[rs.mask].drop(columns=[ROW_COLUMN]).reset_index(drop=True)
    return frame, {"n_read": rs.n_read, "n_used": int(rs.mask.sum()),
                   "excluded": rs.excluded, **({"notes": rs.notes} if rs.notes else {})}
