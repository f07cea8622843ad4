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

Lines are checked one by one: a line that is no JSON object, lacks ``filtered_resps`` or its
arguments, has a log-likelihood that is no number, or a target outside the choices, becomes an
excluded row with its reason (``lm_eval_*``), never a crash or a silent drop.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

__all__ = ["NORMALISATIONS", "LmEvalFile", "LmEvalSample", "looks_like_samples", "read_samples"]

NORMALISATIONS = ("none", "chars", "bytes")
"""``--normalise``: lm-eval's ``acc`` (none), ``acc_norm`` (chars) and ``acc_bytes`` (bytes)."""

MAX_LINE_CHARS = 20_000_000
"""A longer line is excluded unread (``lm_eval_line_too_long``): model output is untrusted."""


@dataclass
class LmEvalSample:
    """One document of a multiple-choice task: its log-likelihoods and choices (the delimiter
    removed), the gold index (-1: none usable) and lm-eval's own per-sample metrics."""

    doc_id: str
    task: str
    lls: np.ndarray
    choices: list[str]
    gold: int
    metrics: dict[str, float] = field(default_factory=dict)

    def scores(self, normalise: str = "none") -> np.ndarray:
        """The log-likelihoods as lm-eval compares them under ``normalise``."""
        if normalise == "chars":
            return self.lls / np.array([float(len(c)) for c in self.choices])
        if normalise == "bytes":
            return self.lls / np.array([float(len(c.encode("utf-8"))) for c in self.choices])
        return self.lls


@dataclass
class LmEvalFile:
    """A samples file read line by line: the usable samples, each excluded line's reason (by
    line number), the task, and the model named by the results file beside it."""

    samples: list[LmEvalSample | None]
    reasons: list[str]
    task: str
    model: str | None


def looks_like_samples(first_line: str) -> bool:
    """An lm-eval samples line: a JSON object with ``doc_id`` and ``filtered_resps``."""
    try:
        obj = json.loads(first_line)
    except (json.JSONDecodeError, RecursionError):
        return False
    return isinstance(obj, dict) and "doc_id" in obj and "filtered_resps" in obj


def _task_of(path: Path) -> str:
    """``samples_<task>_<date>.jsonl`` -> ``<task>`` (the date is the part after the last
    ``_`` holding digits)."""
    stem = path.name.split(".jsonl")[0]
    stem = stem[len("samples_"):] if stem.startswith("samples_") else stem
    head, sep, tail = stem.rpartition("_")
    return head if sep and tail[:4].isdigit() else stem


def _results_beside(path: Path, task: str) -> tuple[str | None, str]:
    """(model name, the task's target delimiter) from the newest ``results_*.json`` beside
    ``path``; (None, " ") when there is none or it is unreadable."""
    for results in sorted(path.parent.glob("results_*.json"), reverse=True):
        try:
            doc = json.loads(results.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            continue
        if not isinstance(doc, dict):
            continue
        config = (doc.get("configs") or {}).get(task) or {}
        delimiter = config.get("target_delimiter", " ") if isinstance(config, dict) else " "
        model = doc.get("model_name") or (doc.get("config") or {}).get("model")
        return (str(model) if model else None), str(delimiter)
    return None, " "


def _floats(pairs) -> np.ndarray | None:
    try:
        values = np.array([float(p[0]) for p in pairs], dtype=np.float64)
    except (TypeError, ValueError, IndexError, KeyError):
        return None
    return values if values.size and not np.isnan(values).any() else None


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


def _gold(target, choices: list[str]) -> int:
    if isinstance(target, bool):
        return -1
    if isinstance(target, (int, float)) and float(target).is_integer():
        index = int(target)
    elif isinstance(target, str) and target.strip().lstrip("-").isdigit():
        index = int(target.strip())
    elif isinstance(target, str):
        return choices.index(target) if target in choices else -1
    else:
        return -1
    return index if 0 <= index < len(choices) else -1


def _sample(obj: dict, task: str, delimiter: str) -> tuple[LmEvalSample | None, str]:
    """(the sample, "") or (None, the reason it cannot be used)."""
    if "filtered_resps" not in obj:
        return None, "lm_eval_no_filtered_resps"
    lls = _floats(obj["filtered_resps"])
    if lls is None:
        return None, "lm_eval_bad_loglikelihood"
    arguments = obj.get("arguments")
    if "acc_mutual_info" in obj and lls.size % 2 == 0:
        lls = lls[: lls.size // 2]   # mutual information: the conditional half comes first
    choices = _choices(arguments, lls.size, delimiter)
    if choices is None:
        return None, "lm_eval_no_choices"
    gold = _gold(obj.get("target"), choices)
    if gold < 0:
        return None, "lm_eval_target_not_a_choice"
    metrics = {k: float(obj[k]) for k in ("acc", "acc_norm", "acc_bytes", "exact_match")
               if isinstance(obj.get(k), (int, float)) and math.isfinite(obj[k])}
    return LmEvalSample(str(obj.get("doc_id")), task, lls, choices, gold, metrics), ""


def read_samples(path: str | Path) -> LmEvalFile:
    """Every line of a samples file, each a sample or an excluded line with its reason."""
    path = Path(path)
    task = _task_of(path)
    model, delimiter = _results_beside(path, task)
    samples: list[LmEvalSample | None] = []
    reasons: list[str] = []
    opener = _open(path)
    with opener as f:
        for line in f:
            if len(line) > MAX_LINE_CHARS:
                samples.append(None)
                reasons.append("lm_eval_line_too_long")
                continue
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except (json.JSONDecodeError, RecursionError):
                obj = None
            if not isinstance(obj, dict):
                samples.append(None)
                reasons.append("lm_eval_not_a_json_object")
                continue
            sample, reason = _sample(obj, task, delimiter)
            samples.append(sample)
            reasons.append(reason)
    return LmEvalFile(samples, reasons, task, model)


def _open(path: Path):
    if path.name.lower().endswith(".gz"):
        import gzip

        return gzip.open(path, "rt", encoding="utf-8", errors="replace")
    return path.open("r", encoding="utf-8", errors="replace")
