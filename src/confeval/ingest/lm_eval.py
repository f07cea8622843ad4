"""lm-evaluation-harness ``--log_samples`` files (``samples_<task>_<date>.jsonl``).

A line of a ``multiple_choice`` task holds ``doc_id``, ``target`` (the gold index, or the gold
choice's text), ``arguments`` (``gen_args_i``: ``arg_0`` the context, ``arg_1`` the target
delimiter then choice i) and ``filtered_resps`` (one ``[log-likelihood, is_greedy]`` per
choice, as text). lm-eval's own per-sample metrics (``acc``, ``acc_norm``, ``acc_bytes``) sit
beside them. The ``results_<date>.json`` in the same folder names the model and each task's
``target_delimiter`` (lm-eval's default, one space, where absent).

Predictions as lm-eval makes them (``lm_eval/api/task.py``, ``process_results``): the arg-max of
the log-likelihoods (``acc``), of the log-likelihoods divided by each choice's length in
characters (``acc_norm``; the delimiter not counted) or in UTF-8 bytes (``acc_bytes``); ties go
to the first choice, as ``numpy.argmax``. A task scoring mutual information logs twice as many
log-likelihoods as choices: the first half are the conditional ones.

Other tasks (``loglikelihood``, ``loglikelihood_rolling``, ``generate_until``: the output type
named by the results file, else told by ``filtered_resps`` — text replies, or one
``[log-likelihood, is_greedy]`` pair) have no options to rank: a line becomes an
:class:`LmEvalScored` sample holding lm-eval's per-sample metrics (the names its ``metrics``
field lists — ``exact_match``, ``acc``, a task's own such as a stated confidence), the reply
(``generate_until``) or the target's log-likelihood and ``is_greedy`` (``loglikelihood``).

The gold choice, as ``process_results`` reads ``doc_to_target``: an int is an index, a text
is the choice whose text it is. lm-eval 0.4 logs ``str(target)``, so the index 2 and the
choice text "2" are both logged "2": a text target that is a choice's text is that choice, one
that is not (``"3"`` among word choices) is the index it spells, and where it is both (choices
"1".."5", target "2") the line's own per-sample ``acc`` / ``acc_norm`` / ``acc_bytes`` decide
(the reading under which lm-eval's prediction scored what it logged); where they cannot, the
choice text is read and the file's notes count it (``lm_eval_targets``).

Lines are checked one by one: a line that is no JSON object, lacks ``filtered_resps`` or its
arguments, has a log-likelihood that is no number, or a target outside the choices, becomes an
excluded row with its reason (``lm_eval_*``), and a log-likelihood that is no log-probability
(above 0, NaN, +-inf) one under ``impossible_logprob``, never a crash or a silent drop. The
file is read as UTF-8 (a byte-order mark ignored, CRLF line ends read as LF), a ``.gz`` one
decompressed under the caps of :mod:`confeval._untrusted`, a line longer than
:data:`MAX_LINE_CHARS` skipped unread.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .._numeric import as_logprobs
from .._untrusted import DuplicateKeyError, bounded_lines, loads_unique, open_text, top_level_fields

__all__ = ["NORMALISATIONS", "LmEvalFile", "LmEvalSample", "LmEvalScored", "looks_like_samples",
           "read_samples"]

NORMALISATIONS = ("none", "chars", "bytes")
"""``--normalise``: lm-eval's ``acc`` (none), ``acc_norm`` (chars) and ``acc_bytes`` (bytes)."""

OUTPUT_TYPES = ("multiple_choice", "loglikelihood", "loglikelihood_rolling", "generate_until")
"""lm-eval's task output types."""

MAX_LINE_CHARS = 20_000_000
"""A longer line is excluded unread (``lm_eval_line_too_long``): model output is untrusted."""


@dataclass
class LmEvalSample:
    """One document of a multiple-choice task: its log-likelihoods and choices (the delimiter
    removed), the gold index (-1: none usable), lm-eval's own per-sample metrics and the
    sample's identity (``key``: its ``doc_id``, ``filter`` and metric names; None without a
    ``doc_id``), by which a repeated line is known."""

    doc_id: str
    task: str
    lls: np.ndarray
    choices: list[str]
    gold: int
    metrics: dict[str, float] = field(default_factory=dict)
    key: tuple | None = None
    filter: str = "none"

    def scores(self, normalise: str = "none") -> np.ndarray:
        """The log-likelihoods as lm-eval compares them under ``normalise``."""
        if normalise == "chars":
            return self.lls / np.array([float(len(c)) for c in self.choices])
        if normalise == "bytes":
            return self.lls / np.array([float(len(c.encode("utf-8"))) for c in self.choices])
        return self.lls


@dataclass
class LmEvalScored:
    """One document of a task without options: lm-eval's per-sample metrics (finite numbers;
    a non-finite one is NaN), and the reply (``generate_until``) or the target's log-likelihood
    (``loglikelihood``)."""

    doc_id: str
    task: str
    output_type: str
    metrics: dict[str, float]
    reply: str | None = None
    target: str | None = None
    loglikelihood: float | None = None
    is_greedy: bool | None = None
    key: tuple | None = None
    filter: str = "none"
    raw_reply: str | None = None


@dataclass
class LmEvalFile:
    """A samples file read line by line: the usable samples, each excluded line's reason (by
    line number), the task, its output type (``multiple_choice``, ``generate_until``, ...) and
    the model named by the results file beside it."""

    samples: list[LmEvalSample | LmEvalScored | None]
    reasons: list[str]
    task: str
    model: str | None
    output_type: str = "multiple_choice"
    ambiguous_targets: int = 0
    """Samples whose target is both a choice's text and an index the line's metrics could not
    tell apart (read as the choice text)."""
    filters: list[str | None] = field(default_factory=list)
    """Each line's filter (None: a line that is no JSON object names none)."""
    warnings: list[str] = field(default_factory=list)
    """Sentences a reader must see beside the numbers (a results file beside the samples that
    could not be read): the records' ``warnings``, so ``--json`` and ``metrics.json`` hold
    them as the terminal shows them."""


def looks_like_samples(first_line: str, complete: bool = True) -> bool:
    """An lm-eval samples line: a JSON object with ``doc_id`` and ``filtered_resps``.
    ``complete=False``: ``first_line`` is the start of a longer line, recognised by its
    top-level keys as far as it goes (``doc_id`` with ``filtered_resps``, or ``doc_id`` then
    ``doc``, the order lm-eval writes them in: a long document or context can push
    ``filtered_resps`` far down the line)."""
    if not complete:
        keys = list(top_level_fields(first_line))
        return "doc_id" in keys and ("filtered_resps" in keys or keys[:2] == ["doc_id", "doc"])
    try:
        obj = json.loads(first_line)
    except (ValueError, RecursionError):   # a number past the digit limit too
        return False
    return isinstance(obj, dict) and "doc_id" in obj and "filtered_resps" in obj


def _task_of(path: Path) -> str:
    """``samples_<task>_<date>.jsonl`` -> ``<task>`` (the date is the part after the last
    ``_`` holding digits)."""
    stem = path.name.split(".jsonl")[0]
    stem = stem[len("samples_"):] if stem.startswith("samples_") else stem
    head, sep, tail = stem.rpartition("_")
    return head if sep and tail[:4].isdigit() else stem


def _results_beside(path: Path, task: str, said: list[str]
                    ) -> tuple[str | None, str, str | None]:
    """(model name, the task's target delimiter, its output type) from the newest
    ``results_*.json`` beside ``path``; (None, " ", None) when there is none. One that cannot
    be read is skipped with a warning naming it, appended to ``said`` (the samples are then
    read without what it would have said: the model unnamed, the default delimiter). One
    that names a key twice is a ``ValueError`` naming it and the key: it says how every line
    is read (the delimiter, the output type), and which of its two values lm-eval meant
    cannot be told."""
    for results in sorted(path.parent.glob("results_*.json"), reverse=True):
        try:
            doc = loads_unique(results.read_text(encoding="utf-8"))
        except DuplicateKeyError as exc:
            raise ValueError(f"{results}: {exc}; the lm-eval results beside {path.name} "
                             "must say one thing") from None
        except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
            said.append(_skipped(results, path, type(exc).__name__))
            continue
        if not isinstance(doc, dict):
            said.append(_skipped(results, path, "no JSON object"))
            continue
        config = (doc.get("configs") or {}).get(task) or {}
        config = config if isinstance(config, dict) else {}
        output_type = config.get("output_type")
        model = doc.get("model_name") or (doc.get("config") or {}).get("model")
        return ((str(model) if model else None), str(config.get("target_delimiter", " ")),
                output_type if output_type in OUTPUT_TYPES else None)
    return None, " ", None


def _skipped(results: Path, samples: Path, why: str) -> str:
    return (f"{results}: not read ({why}); the lm-eval samples {samples.name} are read "
            "without it (an older results file, else no model name, the target delimiter ' ' "
            "and the output type their lines show)")


def _floats(pairs) -> np.ndarray | str:
    """The log-likelihoods of ``[log-likelihood, is_greedy]`` pairs, or the reason they are
    unusable: ``lm_eval_bad_loglikelihood`` (no number) or ``impossible_logprob`` (NaN, +-inf,
    above 0: no log-probability)."""
    try:
        values = np.array([float(p[0]) for p in pairs], dtype=np.float64)
    except (TypeError, ValueError, IndexError, KeyError, OverflowError):
        return "lm_eval_bad_loglikelihood"
    if not values.size:
        return "lm_eval_bad_loglikelihood"
    checked = as_logprobs(values)
    return "impossible_logprob" if checked is None else checked


def _choices(arguments, n: int, delimiter: str) -> list[str] | None:
    if not isinstance(arguments, dict):
        return None
    out = []
    for i in range(n):
        arg = arguments.get(f"gen_args_{i}")
        text = arg.get("arg_1") if isinstance(arg, dict) else None
        if not isinstance(text, str):
            return None
        out.append(text[len(delimiter):] if delimiter and text.startswith(delimiter) else text)
    return out


_MAX_INDEX_DIGITS = 9
"""A longer run of digits is no choice index (and ``int()`` of thousands of digits is slow)."""


def _gold(target, choices: list[str], agrees: Callable[[int], bool]) -> tuple[int, bool]:
    """(the gold index, -1 for none; whether the target was ambiguous and left undecided):
    an int (or a whole JSON number) is an index; a text is the choice whose text it is, else
    the index it spells; a text that is both is decided by ``agrees(index)`` (the line's own
    metrics), the choice text where they cannot tell (module docstring)."""
    if isinstance(target, bool):
        return -1, False
    if isinstance(target, (int, float)):
        whole = isinstance(target, int) or (math.isfinite(target) and target.is_integer())
        return (int(target) if whole and 0 <= target < len(choices) else -1), False
    if not isinstance(target, str):
        return -1, False
    as_text = choices.index(target) if target in choices else -1
    digits = target.strip()
    as_index = int(digits) if digits.isascii() and digits.isdigit() \
        and len(digits) <= _MAX_INDEX_DIGITS and int(digits) < len(choices) else -1
    if as_text < 0 or as_index < 0 or as_text == as_index:
        return max(as_text, as_index), False
    agreeing = [index for index in (as_text, as_index) if agrees(index)]
    if len(agreeing) == 1:
        return agreeing[0], False
    return as_text, True


_METRIC_NORMALISATION = {"acc": "none", "acc_norm": "chars", "acc_bytes": "bytes"}
"""lm-eval's per-sample metrics of a multiple-choice task, each with the normalisation whose
arg-max it scores."""


def _agrees_with_metrics(sample: LmEvalSample) -> Callable[[int], bool]:
    """Whether a gold index agrees with every per-sample metric the line logs: the arg-max
    under the metric's normalisation is that index exactly when the metric is 1."""
    def agrees(index: int) -> bool:
        return all(float(int(np.argmax(sample.scores(norm))) == index) == sample.metrics[name]
                   for name, norm in _METRIC_NORMALISATION.items() if name in sample.metrics)
    return agrees


def _key(obj: dict) -> tuple | None:
    """A line's identity: its ``doc_id`` with the ``filter`` and metric names it was scored
    under (lm-eval logs a document once per filter); None without a ``doc_id``."""
    if obj.get("doc_id") is None:
        return None
    names = obj.get("metrics")
    names = tuple(map(str, names)) if isinstance(names, list) else ()
    return (str(obj["doc_id"]), str(obj.get("filter")), names)


def _filter_of(obj: dict) -> str:
    """The filter a line was scored under (lm-eval logs a document once per filter; a task
    without a ``filter_list`` has the one filter ``none``)."""
    name = obj.get("filter")
    return str(name) if isinstance(name, (str, int, float)) and str(name) else "none"


def _sample(obj: dict, task: str, delimiter: str) -> tuple[LmEvalSample | None, str]:
    """(the sample, "") or (None, the reason it cannot be used); a sample whose target was
    ambiguous and left undecided has the reason ``"ambiguous"`` beside it (it is usable)."""
    if "filtered_resps" not in obj:
        return None, "lm_eval_no_filtered_resps"
    lls = _floats(obj["filtered_resps"])
    if isinstance(lls, str):
        return None, lls
    arguments = obj.get("arguments")
    if "acc_mutual_info" in obj and lls.size % 2 == 0:
        lls = lls[: lls.size // 2]   # mutual information: the conditional half comes first
    choices = _choices(arguments, lls.size, delimiter)
    if choices is None:
        return None, "lm_eval_no_choices"
    metrics = {k: value for k in ("acc", "acc_norm", "acc_bytes", "exact_match")
               if (value := _finite(obj.get(k))) is not None}
    sample = LmEvalSample(str(obj.get("doc_id")), task, lls, choices, -1, metrics, _key(obj),
                          _filter_of(obj))
    sample.gold, ambiguous = _gold(obj.get("target"), choices, _agrees_with_metrics(sample))
    if sample.gold < 0:
        return None, "lm_eval_target_not_a_choice"
    return sample, "ambiguous" if ambiguous else ""


def _told_output_type(resps) -> str:
    """The output type a line's ``filtered_resps`` shows (no results file names it): text
    replies, one bare log-likelihood, one pair (``loglikelihood``) or one pair per option."""
    if isinstance(resps, list) and resps and all(isinstance(r, str) for r in resps):
        return "generate_until"
    if isinstance(resps, list) and len(resps) == 1:
        return ("loglikelihood" if isinstance(resps[0], (list, tuple))
                else "loglikelihood_rolling")
    return "multiple_choice"


def _finite_or_nan(value) -> float | None:
    """A metric's value as a float (NaN when non-finite), None when it is no number."""
    if not isinstance(value, (int, float)):
        return None
    number = _finite(value)
    return math.nan if number is None else number


def _finite(value) -> float | None:
    """A JSON number (a bool too: 1 or 0) as a finite float, else None (an integer too large
    for a float among them)."""
    if not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def _scored_sample(obj: dict, task: str, output_type: str) -> tuple[LmEvalScored | None, str]:
    """(the sample of a task without options, "") or (None, the reason it cannot be used)."""
    if "filtered_resps" not in obj:
        return None, "lm_eval_no_filtered_resps"
    resps = obj["filtered_resps"]
    names = obj.get("metrics")
    names = names if isinstance(names, list) else ["acc", "exact_match"]
    metrics = {str(k): v for k in names if (v := _finite_or_nan(obj.get(k))) is not None}
    target = obj.get("target")
    sample = LmEvalScored(str(obj.get("doc_id")), task, output_type, metrics,
                          target=None if target is None else str(target), key=_key(obj),
                          filter=_filter_of(obj))
    first = resps[0] if isinstance(resps, list) and resps else None
    if output_type == "generate_until":
        if not isinstance(first, str):
            return None, "lm_eval_no_reply"
        sample.reply = first
        raw = obj.get("resps")
        raw = raw[0] if isinstance(raw, list) and raw else None
        raw = raw[0] if isinstance(raw, list) and raw else raw
        sample.raw_reply = raw if isinstance(raw, str) else first
    elif output_type == "loglikelihood":
        lls = _floats(resps[:1]) if isinstance(first, (list, tuple)) else \
            "lm_eval_bad_loglikelihood"
        if isinstance(lls, str):
            return None, lls
        sample.loglikelihood = float(lls[0])
        greedy = first[1] if len(first) > 1 else None
        sample.is_greedy = (greedy in (True, "True", "true", 1)) if greedy is not None else None
    return sample, ""


def read_samples(path: str | Path) -> LmEvalFile:
    """Every line of a samples file, each a sample or an excluded line with its reason; a
    compressed file past the decompression caps, or truncated, is one
    :class:`~confeval._untrusted.UntrustedFileError` naming it."""
    path = Path(path)
    task = _task_of(path)
    said: list[str] = []
    model, delimiter, output_type = _results_beside(path, task, said)
    samples: list[LmEvalSample | LmEvalScored | None] = []
    reasons: list[str] = []
    filters: list[str | None] = []
    ambiguous = 0
    with open_text(path) as f:
        for line in bounded_lines(f, MAX_LINE_CHARS):
            if line is None:
                samples.append(None)
                reasons.append("lm_eval_line_too_long")
                filters.append(None)
                continue
            if not line.strip():
                continue
            try:   # keys named twice not checked per line: as records.py's _read_jsonl
                obj = json.loads(line)
            except (ValueError, RecursionError):   # a number past the digit limit too
                obj = None
            if not isinstance(obj, dict):
                samples.append(None)
                reasons.append("lm_eval_not_a_json_object")
                filters.append(None)
                continue
            if output_type is None and "filtered_resps" in obj:
                output_type = _told_output_type(obj["filtered_resps"])   # the first line told
            kind = output_type or "multiple_choice"
            sample, reason = (_sample(obj, task, delimiter) if kind == "multiple_choice"
                              else _scored_sample(obj, task, kind))
            if reason == "ambiguous":
                ambiguous, reason = ambiguous + 1, ""
            samples.append(sample)
            reasons.append(reason)
            filters.append(_filter_of(obj))
    return LmEvalFile(samples, reasons, task, model, output_type or "multiple_choice",
                      ambiguous, filters, said)
